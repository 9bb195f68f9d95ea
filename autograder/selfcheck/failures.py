"""Failures that end a test at once, without shrinking: they are no smaller input's fault."""
from __future__ import annotations


class FailFast(BaseException):
    """A failure that no smaller input would explain: a missing name, an unfinished stub, a limit.

    Neither an Exception nor pytest's `Failed`, both of which hypothesis catches, then re-runs the
    test hundreds of times to shrink the input: this propagates at once, and the plugin reports it
    as a failure with just its message.
    """

    def __init__(self, msg: str) -> None:
        super().__init__(msg)
        self.msg = msg


class NotImplementedYet(FailFast):
    """The student's code still raises NotImplementedError (an unfinished stub)."""
