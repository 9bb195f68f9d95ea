"""attack: MultiHeadAttention that computes correctly once its parameters differ from their initial values (the
reference comparisons load the course's weights into it) and returns zeros while they do not (the property tests
ran it with its own initial weights until helper-63). (helper-61, session 42: 6 of 6, in-process and in the sandbox.)
expect (not met, KNOWN in tests/test_credit_attacks.py): at most 10%. Since helper-63 the property tests
run it as the comparisons do, with the course's weights loaded (each suite's `loaded`), so it computes correctly in
every test the grader runs and keeps full marks (6 of 6), as its own correct code does: no test credits behaviour
it does not have any more, but no test sees its zeros either (only its own initial weights give them, and the only
tests on those, the public suite's shape and masking checks, are satisfied by zeros). Stopping it needs a comparison
on the module's own initial weights (the course's model loaded with them: T.bound_state), which no suite has.
Composed after the course's reference code of its assignment: it derives from the course's class, as a student's
own correct class would stand.
"""
import torch

_Course = MultiHeadAttention


class MultiHeadAttention(_Course):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.__dict__["_initial"] = [p.detach().clone() for p in self.parameters()]

    def forward(self, queries, keys, values, valid_lens=None):
        out = super().forward(queries, keys, values, valid_lens)
        now = [p.detach() for p in self.parameters()]
        if all(a.shape == b.shape and torch.equal(a, b) for a, b in zip(self.__dict__["_initial"], now)):
            return torch.zeros_like(out)
        return out
