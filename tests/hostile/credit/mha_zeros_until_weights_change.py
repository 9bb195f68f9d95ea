"""attack: MultiHeadAttention that computes correctly once its parameters differ from their initial values (the
reference comparisons load the course's weights into it) and returns zeros while they do not (the property tests
run it with its own initial weights). (helper-61, session 42: 6 of 6, in-process and in the sandbox.)
expect (not met, KNOWN in tests/test_credit_attacks.py): at most 10%. It keeps full marks: every comparison with the
course passes, so the gate pays the property tests in full. No submission gains by it over its own correct code
(the correct computation must be in it), but the property tests credit behaviour the code does not have.
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
