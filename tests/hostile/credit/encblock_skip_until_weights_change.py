"""attack: EncoderBlock that skips its attention and FFN (returns layer_norm(X)) while its parameters are their
initial values and computes correctly once the course's weights are loaded. (helper-61, session 42: 4 of 4, every
property test passed: norm, statistics, padding, batch independence.)
expect (not met, KNOWN in tests/test_credit_attacks.py): at most 10%. Since helper-63 the property tests
load the course's weights too, so it computes correctly in every test the grader runs and keeps full marks (4 of 4),
as mha_zeros_until_weights_change does and for the same reason (its skip shows only with its own initial weights,
which the public suite's shape and norm check alone uses, and layer_norm(X) satisfies it).
Composed after the course's reference code of its assignment: it derives from the course's class.
"""
import torch

_Course = EncoderBlock


class EncoderBlock(_Course):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.__dict__["_initial"] = [p.detach().clone() for p in self.parameters()]

    def forward(self, X, valid_lens):
        out = super().forward(X, valid_lens)
        now = [p.detach() for p in self.parameters()]
        if all(a.shape == b.shape and torch.equal(a, b) for a, b in zip(self.__dict__["_initial"], now)):
            return torch.nn.functional.layer_norm(X, X.shape[-1:])
        return out
