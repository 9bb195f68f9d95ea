"""attack: EncoderBlock that skips its attention and FFN (returns layer_norm(X)) while its parameters are their
initial values and computes correctly once the course's weights are loaded. (helper-61, session 42: 4 of 4, every
property test passed: norm, statistics, padding, batch independence.)
expect (not met, KNOWN in tests/test_credit_attacks.py): at most 10%. It keeps full marks, as
mha_zeros_until_weights_change does.
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
