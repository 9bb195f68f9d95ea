"""attack: sequence_mask and masked_softmax written as methods (which the grader grades in the functions' place,
signatures.methods_as_functions) whose work is done by `self.impl`: a `def impl` in the class body, so that the
static check takes it for one of the class's methods, then rebound by the body to whatever `d2l.<name>` holds at
load time, hoping to reach the course's own functions (helper-57, session 41).
expect: a name the class body binds again after its `def` is data, not a method, so neither method qualifies:
every component is "not defined in your submission" and scores 0; nothing of the course's code is reached.
"""
import torch
from torch import nn
from d2l import torch as d2l


class Tools:
    def impl(self):
        pass

    def impl2(self):
        pass

    impl = staticmethod(getattr(d2l, "sequence_mask", None) or (lambda X, v, value=0: X))
    impl2 = staticmethod(getattr(d2l, "masked_softmax", None) or (lambda X, v: X))

    def sequence_mask(self, X, valid_len, value=0):
        return self.impl(X, valid_len, value)

    def masked_softmax(self, X, valid_lens):
        return self.impl2(X, valid_lens)
