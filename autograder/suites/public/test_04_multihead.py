"""Public tests for assignment 04: multi-head attention.

These run in your notebook's self-check and in the grader. They check shapes, small worked
examples you can verify by hand, and properties of the contract; the grader runs more tests.
"""
import pytest
import torch

from autograder import testing as T

HEAD_HINT = ("the rows of the result are ordered batch item by batch item: row b*h + i is head i of "
             "batch item b, and head i holds features i*d/h .. (i+1)*d/h - 1 of every position")


def _worked_input() -> torch.Tensor:
    # One batch item, two positions, four features: [[0, 1, 2, 3], [4, 5, 6, 7]].
    return torch.arange(8, dtype=torch.float32).reshape(1, 2, 4)


# The worked example, head by head: head 0 takes features 0-1 of each position, head 1 features 2-3.
_WORKED_HEADS = torch.tensor([[[0., 1.], [4., 5.]],
                              [[2., 3.], [6., 7.]]])


@pytest.mark.component("transpose_qkv")
def test_qkv_shape():
    """transpose_qkv turns (B, L, d) into (B*h, L, d/h)"""
    for B, L, d, h in [(2, 3, 6, 3), (1, 4, 8, 2), (3, 1, 5, 1)]:
        X = torch.randn(B, L, d)
        T.assert_shape(student.transpose_qkv(X, h) if False else _call_qkv(X, h), (B * h, L, d // h),
                       f"transpose_qkv(X of shape {(B, L, d)}, num_heads={h})")


def _call_qkv(X, h):
    return _STUDENT.transpose_qkv(X, h)


_STUDENT = None
