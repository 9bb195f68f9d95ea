"""d2l 1.0's constructors of the course's classes, for learners' code written against that edition.

The course follows d2l 2.0 (zh) / 0.17 (docs/course-api.md). d2l 1.0 builds AdditiveAttention,
MultiHeadAttention and PositionWiseFFN without their input sizes (`AdditiveAttention(num_hiddens,
dropout)`): the layers those sizes would shape are lazy (nn.LazyLinear). Its Transformer blocks
(`TransformerDecoderBlock(num_hiddens, ffn_num_hiddens, num_heads, dropout, i)`) take one size,
num_hiddens, for every size the contract's EncoderBlock and DecoderBlock ask for. Where a submission builds
one of the course's classes standing in for its own (the dependency rule) the 1.0 way, the grader
builds it as d2l 1.0 does, so that the rest of the learner's code is graded on what it does; the
naming test of the learner's component then fails on the lazy layers, with what the contract wants
(selfcheck/testing.assert_contract_names), and only that test.

The learner's own class of one of these names, standing as a dependency (it passes its tests),
gets 1.0's constructors too where it takes the contract's parameters (`_install_own`): a call the
1.0 way then meets the same class whoever wrote it, so a correct class of one's own never does worse
than a broken one that the course's replaces.

This module's source goes into a grading child after the course's classes (grading/dependencies.py);
its names start with `_`, so that `from attention_support import *` exports none of them.
"""
from __future__ import annotations

import inspect as _inspect
from typing import Any

from torch import nn


def _additive_attention(num_hiddens: int, dropout: float, **kwargs: Any) -> tuple[tuple, dict, tuple[str, ...]]:
    """d2l 1.0's AdditiveAttention(num_hiddens, dropout): the contract's arguments, and its lazy layers."""
    return (1, 1, num_hiddens, dropout), kwargs, ("W_k", "W_q")


def _multi_head_attention(num_hiddens: int, num_heads: int, dropout: float, bias: bool = False,
                          **kwargs: Any) -> tuple[tuple, dict, tuple[str, ...]]:
    """d2l 1.0's MultiHeadAttention(num_hiddens, num_heads, dropout, bias=False)."""
    return (1, 1, 1, num_hiddens, num_heads, dropout, bias), kwargs, ("W_q", "W_k", "W_v")


def _position_wise_ffn(ffn_num_hiddens: int, ffn_num_outputs: int, **kwargs: Any) -> tuple[tuple, dict, tuple[str, ...]]:
    """d2l 1.0's PositionWiseFFN(ffn_num_hiddens, ffn_num_outputs)."""
    return (1, ffn_num_hiddens, ffn_num_outputs), kwargs, ("dense1",)


def _block_sizes(num_hiddens: int) -> tuple:
    """The sizes the contract's blocks ask for before ffn_num_hiddens (key_size, query_size, value_size,
    num_hiddens, norm_shape, ffn_num_input): in 1.0's blocks every one is num_hiddens (its lazy layers take it
    from X), so nothing is lazy here."""
    n = num_hiddens
    return (n, n, n, n, [n], n)


def _encoder_block(num_hiddens: int, ffn_num_hiddens: int, num_heads: int, dropout: float, use_bias: bool = False,
                   **kwargs: Any) -> tuple[tuple, dict, tuple[str, ...]]:
    """d2l 1.0's TransformerEncoderBlock(num_hiddens, ffn_num_hiddens, num_heads, dropout, use_bias=False)."""
    return (*_block_sizes(num_hiddens), ffn_num_hiddens, num_heads, dropout, use_bias), kwargs, ()


def _decoder_block(num_hiddens: int, ffn_num_hiddens: int, num_heads: int, dropout: float, i: int,
                   **kwargs: Any) -> tuple[tuple, dict, tuple[str, ...]]:
    """d2l 1.0's TransformerDecoderBlock(num_hiddens, ffn_num_hiddens, num_heads, dropout, i)."""
    return (*_block_sizes(num_hiddens), ffn_num_hiddens, num_heads, dropout, i), kwargs, ()


#: Per class, d2l 1.0's constructor as a function of its arguments: (the contract's positional arguments,
#: the keyword arguments passed on, the layers 1.0 makes lazy).
_EDITIONS = {"AdditiveAttention": _additive_attention, "MultiHeadAttention": _multi_head_attention,
             "PositionWiseFFN": _position_wise_ffn, "EncoderBlock": _encoder_block, "DecoderBlock": _decoder_block}
#: The contract's required constructor parameters of each (docs/course-api.md): a learner's own class
#: whose constructor takes that many arguments by position gets 1.0's constructors too (`_install_own`).
_CONTRACT = {"AdditiveAttention": ("key_size", "query_size", "num_hiddens", "dropout"),
             "MultiHeadAttention": ("key_size", "query_size", "value_size", "num_hiddens", "num_heads", "dropout"),
             "PositionWiseFFN": ("ffn_num_input", "ffn_num_hiddens", "ffn_num_outputs")}
#: The blocks are not among them: a learner's own block is a component of the assignment its call is graded in,
#: so breaking it to have the course's stand in costs its own points, and a call of one's own contract-signature
#: block with 1.0's arguments would fail in the learner's own notebook (helper-51).


def _give_d2l_v1(cls: type, name: str) -> None:
    """Make `cls` (in place: its identity, `super(Cls, self)` calls and subclasses stay as they are) also
    take d2l 1.0's constructor arguments for `name`: a call that binds to its own signature is its own;
    one that binds only to 1.0's builds the module with the contract's sizes and the layers 1.0 makes
    lazy (the same out_features and bias); one that binds to neither gets its own TypeError."""
    original = cls.__init__  # its own, or the one it inherits (given to it, not to its base)
    if getattr(original, "_d2l_v1", False):
        return  # it has 1.0's already, or inherits them
    own, v1 = _inspect.signature(original), _EDITIONS[name]
    edition = _inspect.signature(v1)

    def __init__(self: nn.Module, *args: Any, **kwargs: Any) -> None:
        try:
            own.bind(self, *args, **kwargs)
        except TypeError:
            try:
                bound = edition.bind(*args, **kwargs)
            except TypeError:
                pass
            else:
                sizes, rest, lazy = v1(*bound.args, **bound.kwargs)
                original(self, *sizes, **rest)
                layers = [getattr(self, layer, None) for layer in lazy]
                if all(isinstance(layer, nn.Linear) for layer in layers):  # a learner's own may lack them
                    for attribute, layer in zip(lazy, layers):  # in place: the registration order stays
                        setattr(self, attribute, nn.LazyLinear(layer.out_features, bias=layer.bias is not None))
                    return
        original(self, *args, **kwargs)

    __init__.__signature__ = own  # type: ignore[attr-defined]  # what inspect shows: its own
    __init__.__qualname__, __init__.__doc__ = original.__qualname__, original.__doc__
    __init__._d2l_v1 = True  # type: ignore[attr-defined]
    cls.__init__ = __init__


def _install(namespace: dict[str, Any]) -> None:
    """Give the course's classes in `namespace` (a grading child's module of course code) d2l 1.0's constructors."""
    for name in _EDITIONS:
        if isinstance(namespace.get(name), type):
            _give_d2l_v1(namespace[name], name)


def _install_own(namespace: dict[str, Any], names: list[str]) -> None:
    """Give the learner's own classes `names` in `namespace` (the submission's, dependencies standing as
    theirs) d2l 1.0's constructors, where their constructor takes the contract's arguments by position
    (whatever it calls them)."""
    for name in names:
        cls = namespace.get(name)
        if name not in _CONTRACT or not isinstance(cls, type) or not issubclass(cls, nn.Module):
            continue
        try:
            _inspect.signature(cls.__init__).bind(None, *_CONTRACT[name])
        except (TypeError, ValueError):
            continue
        _give_d2l_v1(cls, name)
