"""Signature mistakes: a submission whose constructor, forward, init_state or function takes the
contract's parameters in another order, lacks one, or adds one the tests never pass.

The student's signatures are read from the submission's source (the syntax tree, through
submission.parse_student_code: nothing of it is imported or run here) and matched by parameter
NAME with the contract's, read from the course's reference: the same name (d2l's spellings such as
valid_len/valid_lens count as one) at another position is an order mistake.

Where the names say unambiguously what each of the student's parameters is (`Adapter`: every one
without a default is a contract parameter, no two are the same one), the grader's calls reach the
student's callable by name (grading/remote.py), so that the rest of the component is graded on what
it does; the mistake then costs one structure test of its own (`signature_tests`). Otherwise the
calls go by position as the contract says: the mistake is explained on each failed call that it
feeds wrong values (`Mismatch.call_note`), and it keeps the catalogue from diagnosing the wrong
values it causes as a misconception (`attach` says so). Either way it is named once per component.
"""
from __future__ import annotations

import ast
import functools
import inspect
import os
import textwrap
import re
import symtable
import sys
from collections.abc import Callable, Iterable, Sequence
from itertools import permutations
from pathlib import Path
from types import FrameType
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Optional, cast

import torch

from autograder.config import Course
from autograder.grading.submission import Cell, cell_trees, parse_student_code
from autograder.sandbox.runtime import loader, procedures
from autograder.selfcheck.failures import FailFast
from autograder.selfcheck.i18n import N_, _
from autograder.selfcheck.plugin import TestOutcome
from autograder.selfcheck.testing import one_slip, type_name

if TYPE_CHECKING:
    from autograder.grading.scoring import ComponentScore

#: The methods of a contract class whose parameters the tests pass by position.
METHODS = ("__init__", "forward", "init_state")
#: Spellings that name the same parameter (after lower case and a plural "s" are dropped).
SYNONYMS = {"q": "query", "k": "key", "v": "value", "d_model": "num_hidden", "n_head": "num_head",
            "dropout_rate": "dropout", "dropout_prob": "dropout", "drop_prob": "dropout", "dropout_p": "dropout",
            "valid_length": "valid_len", "idx": "i", "x_train": "key", "y_train": "value", "x_val": "query",
            "num_blk": "num_layer", "num_block": "num_layer", "n_layer": "num_layer",  # d2l 1.0's num_blks
            "embed_dim": "num_hidden", "kdim": "key_size", "vdim": "value_size"}  # torch's nn.MultiheadAttention's
#: Words that say a parameter is a count or an input's size rather than what it is: `ffn_num_input`
#: and `ffn_input`, `norm_shape` and `norm_input` name one parameter (`loose_name`).
FILLER = frozenset({"num", "input", "shape"})
#: Words that say which kind of value a parameter takes, whatever the rest of its name: a parameter of the
#: student's with one of them takes no contract parameter without it (`role_conflict`: a learner's
#: `PositionWiseFFN(d_model, d_ff, dropout=0.1)` is not given the contract's ffn_num_outputs as its dropout).
ROLES = {"drop": "dropout", "dropout": "dropout", "bias": "bias", "head": "heads", "heads": "heads",
         "device": "device"}


@dataclass(frozen=True)
class OwnFunction:
    """A value that is a function of the submission's own, by its name: resolved where the call runs (the
    child's namespace, or the in-process namespace: `resolve_own`), since a call into the sandbox carries data."""

    name: str
    parameter: str  # the student's parameter it is given to

    def __repr__(self) -> str:  # as `Adapter.show` says it: "your kernel = gaussian"
        return self.name

    def missing(self) -> FailFast:
        """The failure of a call that needs it when the submission does not define it (the same on every path)."""
        return FailFast(_("`{name}` is not defined in your submission: your code takes a `{parameter}` that the "
                          "contract's does not, and the grader gives it your `{name}`, as the book's code does "
                          "({hint})").format(name=self.name, parameter=self.parameter, hint=_(EDITION_HINT)))


#: Parameters of the student's that no contract parameter names and no test passes, given the value
#: a call from the book's code would (`Adapter.supplied`): where the grader runs, a module's start;
#: d2l 1.0's `nadaraya_watson(x_train, y_train, x_val, kernel)`, which its book calls with the learner's
#: own `gaussian` (the contract's function computes that Gaussian kernel itself: the kernel is theirs); a
#: kernel's width `sigma`, 1 (the contract's kernel exp(-(q - k)^2 / 2); helper-70: `nadaraya_watson(x_train,
#: y_train, x_val, sigma)` kept 0 of 4 for "missing 1 required positional argument").
EXTRA_VALUES: dict[str, Any] = {"device": "cpu", "training": True, "kernel": OwnFunction("gaussian", "kernel"),
                                "sigma": 1.0}
#: What the course's edition changed: shown with a constructor that lacks parameters.
EDITION_HINT = N_("the course follows d2l 2.0 (zh) / 0.17; d2l 1.0 changed these signatures")
#: The longest default value shown (a student's default is source text).
DEFAULT_CHARS = 40


def same_name(name: str) -> str:
    """The spelling-independent form of a parameter name: `valid_lens` and `valid_len`, `Queries` and `q`."""
    name = _singular(SYNONYMS.get(name.lower().lstrip("_"), name.lower().lstrip("_")))
    return SYNONYMS.get(name, name)


def _singular(name: str) -> str:
    if name.endswith("ies") and len(name) > 4:
        return name[:-3] + "y"
    return name[:-1] if name.endswith("s") and len(name) > 2 else name


def loose_name(name: str) -> str:
    """`same_name` word by word, without the FILLER words (`ffn_num_hiddens` and `ffn_hiddens`:
    "ffn_hidden"; `q_size` and `query_size`: "query_size")."""
    words = [same_name(w) for w in same_name(name).split("_") if w]
    kept = [w for w in words if w not in FILLER]
    return "_".join(kept or words)


def identify(student: Sequence[str], contract: Sequence[str]) -> list[str]:
    """Per student parameter, the `same_name` of the contract parameter it names: by `same_name`, else
    by `loose_name` where just one of each side's has that loose name (and the contract's is not
    named already); else its own `same_name` (a parameter the contract does not have)."""
    theirs = [same_name(n) for n in contract]
    mine = [_own_word(n, contract, student) or same_name(n) for n in student]
    loose, mine_loose = [loose_name(n) for n in contract], [loose_name(n) for n in student]
    out = []
    for key, lk in zip(mine, mine_loose):
        if key not in theirs and loose.count(lk) == 1 and mine_loose.count(lk) == 1 and \
                theirs[loose.index(lk)] not in mine:
            key = theirs[loose.index(lk)]
        out.append(key)
    return out


def _own_word(name: str, contract: Sequence[str], student: Sequence[str]) -> Optional[str]:
    """The `same_name` of the one contract parameter whose first word is `name`'s, where a SYNONYMS entry would read
    `name` as another (helper-83's F1: `embed_dim`, torch's word for MultiheadAttention's width, is a decoder's
    embed_size where the contract has one; read as num_hiddens, a decoder written `(vocab_size, embed_dim, hidden_dim,
    ...)` had its two sizes swapped: 0.38 of 10) and no other of the student's parameters has that first word."""
    if same_name(name) == _singular(name.lower().lstrip("_")):
        return None  # no synonym involved
    ours = [c for c in contract if _first_word(c) == _first_word(name)]
    same_first = [n for n in student if _first_word(n) == _first_word(name)]
    return same_name(ours[0]) if len(ours) == 1 and len(same_first) == 1 else None


def _first_word(name: str) -> str:
    return name.lower().lstrip("_").split("_")[0]


@dataclass(frozen=True)
class Params:
    """A callable's parameters as a call by position sees them (without `self`)."""

    names: tuple[str, ...]
    defaults: tuple[Optional[str], ...]  # each one's default as text, None where it has none
    varargs: bool = False  # takes *args: any number of positional arguments
    keywords: tuple[str, ...] = ()  # keyword-only parameters without a default (no test passes them)

    def show(self, defaults: bool = False) -> str:
        shown = [n if d is None or not defaults else f"{n}={d}" for n, d in zip(self.names, self.defaults)]
        return ", ".join(shown + (["*args"] if self.varargs and defaults else []))


@dataclass(frozen=True)
class Call:
    """A contract call as the student's callable takes it: `args` by position in the student's order,
    then `kwargs` by the student's names; `where[j]` is the position the contract's j-th argument went
    to (None: by keyword, or dropped)."""

    args: list[Any]
    kwargs: dict[str, Any]
    where: list[Optional[int]]


@dataclass(frozen=True)
class Adapter:
    """How a call in the contract's order reaches a student's callable that takes the contract's
    parameters by other positions or lacks some: `names[j]` is the student's parameter that takes the
    contract's j-th argument (None: it has none, the argument is dropped); a parameter of the student's
    with a default that no contract parameter names keeps its default."""

    contract: tuple[str, ...]  # the contract's parameter names (tests may pass arguments by these)
    names: tuple[Optional[str], ...]  # per contract position, the student's parameter that takes it
    order: tuple[str, ...]  # the student's positional parameters, in its order
    # the contract's default for a parameter of the student's that has none, where a test leaves it out
    defaults: tuple[tuple[str, Any], ...] = ()
    # the student's parameters that no contract parameter names, with the value given (EXTRA_VALUES)
    supplied: tuple[tuple[str, Any], ...] = ()
    # the student's parameters that take the parts of the contract's last argument, a decoder's `state` list, in
    # order (`forward(X, enc_outputs, hidden_state, enc_valid_lens)`: called as forward(X, *state); helper-78's F9)
    unpacked: tuple[str, ...] = ()
    unpacked_needed: int = 0  # how many of `unpacked` have no default: the state must give at least these

    def translate(self, args: Sequence[Any], kwargs: dict[str, Any]) -> Call:
        """The student's call for the contract's `args` and `kwargs` (by the contract's names)."""
        given: dict[str, Any] = {}
        source: dict[str, int] = {}
        last = len(self.contract) - 1
        for j, value in enumerate(args):
            if self.unpacked and j == last:
                given.update(self._parts(value))
                continue
            name = self.names[j] if j < len(self.names) else None
            if name is not None:
                given[name], source[name] = value, j
        for key, value in kwargs.items():
            if self.unpacked and key == self.contract[last]:
                given.update(self._parts(value))
                continue
            j = self.contract.index(key) if key in self.contract else -1
            name = self.names[j] if j >= 0 else key  # not a contract name: passed on as it is
            if name is not None:
                given[name] = value
        for name, value in self.defaults + self.supplied:
            given.setdefault(name, value)
        positional: list[Any] = []
        where: list[Optional[int]] = [None] * len(args)
        for name in self.order:  # by position while each one is given, then by keyword
            if name not in given:
                break
            if name in source:
                where[source[name]] = len(positional)
            positional.append(given.pop(name))
        return Call(positional, given, where)

    def _parts(self, state: Any) -> dict[str, Any]:
        """The state's parts by the student's parameters that take them; nothing where the state has another
        number of parts than those parameters take (the call then fails as the student's code would)."""
        parts = list(state) if isinstance(state, (list, tuple)) else [state]
        return dict(zip(self.unpacked, parts)) if self.unpacked_needed <= len(parts) <= len(self.unpacked) else {}

    def parts(self) -> tuple[str, ...]:
        """The student's parameters that the state's parts are for: those without a default (an option of the student's
        after them keeps its default), or all of them where each has one."""
        return self.unpacked[:self.unpacked_needed] or self.unpacked

    def show(self) -> str:
        """What each of the contract's arguments was given as: "num_hiddens as your num_hiddens, ..."."""
        if self.unpacked:
            return _("the {state} unpacked into your {parts}").format(state=self.contract[-1],
                                                                     parts=", ".join(self.parts()))
        shown = [c if c == n else _("the {contract} as your {name}").format(contract=c, name=n)
                 for c, n in zip(self.contract, self.names) if n is not None]
        dropped = [c for c, n in zip(self.contract, self.names) if n is None]
        shown += [_("your {name} = {value} (what a call from the book's code would give it)").format(
            name=n, value=repr(v)) for n, v in self.supplied]
        if not shown:  # `DotProductAttention()` taking nothing (helper-83's F11: "the grader passed  (and not ...)")
            return _("no argument (your code takes none: not the {names})").format(names=", ".join(dropped))
        return ", ".join(shown) + (" " + _("(and not the {names}, which your code does not take)").format(
            names=", ".join(dropped)) if dropped else "")


def adapter(student: Params, contract: Params) -> Optional[Adapter]:
    """The call by name that gives each of the student's parameters what its name says, or None when
    the names leave it open: a parameter without a default that no contract parameter names (by
    `same_name`, else by `loose_name` where that is unique on both sides) and that EXTRA_VALUES does
    not know, two of the student's that name the same one, or nothing in common (unless the student's
    takes no parameters at all: it is called with none)."""
    theirs = [same_name(n) for n in contract.names]
    if len(set(theirs)) != len(theirs):
        return None
    names: list[Optional[str]] = [None] * len(theirs)
    defaults: list[tuple[str, Any]] = []
    supplied: list[tuple[str, Any]] = []
    required = [d is None for d in student.defaults] + [True] * len(student.keywords)
    every = student.names + student.keywords
    keys = _by_rank(student, contract, theirs, identify(every, contract.names), required)
    for name, key, need in zip(every, keys, required):
        if key in theirs:
            j = theirs.index(key)
        else:
            if need and key in EXTRA_VALUES:
                supplied.append((name, EXTRA_VALUES[key]))
            elif need:
                return None
            continue
        if names[j] is not None:
            return None
        names[j] = name
        default = contract.defaults[j]
        if need and default is not None:
            try:
                defaults.append((name, ast.literal_eval(default)))
            except (ValueError, SyntaxError):
                pass  # not a literal: a test that leaves it out fails, as the contract's own call would
    if not any(names) and not supplied and (every or student.varargs):
        return None  # nothing in common: which of theirs is which is anyone's guess
    # (a callable that takes no parameters at all gets none: `DotProductAttention()` without a dropout)
    return Adapter(contract.names, tuple(names), student.names, tuple(defaults), tuple(supplied))


def _by_rank(student: Params, contract: Params, theirs: list[str], keys: list[str],
             required: list[bool]) -> list[str]:
    """`keys` (per student parameter, the `same_name` of the contract parameter it names, as `theirs`
    spells the contract's: `identify`), with the positional parameters that no name identifies taken as
    the contract's that no name was given to: by name where the names say, by their words where those
    say (`_by_words`: `ffn_in_ch, ffn_hid_ch, nomalized_shape` for `norm_shape, ffn_num_input,
    ffn_num_hiddens`; a lone `ffn_hid_ch` for `ffn_num_hiddens` where the student has no `ffn_num_input`),
    else in order when both sides leave as many (`mha_num_hiddens, mha_num_heads` for `num_hiddens,
    num_heads`) or the student's required ones are as many as the contract's required ones left (`attn_size` for
    `num_hiddens`, with `bias=False` left out), else in the places a call by position gives them, the contract's
    last ones left out (`PositionWiseFFN(d_model, d_ff)` without ffn_num_outputs). Only where each pair's defaults agree in kind (`_same_kind`): an option of the student's
    own (`batch_first=False`) never takes `max_len`; and a name of another kind (`role_conflict`) takes none:
    `dropout=0.1` keeps its default where the contract passes `ffn_num_outputs`."""
    mine = [i for i, key in enumerate(keys[:len(student.names)])
            if key not in theirs and not (required[i] and key in EXTRA_VALUES)]
    unnamed = [j for j, key in enumerate(theirs) if key not in keys]
    if len(mine) > len(unnamed):  # more left than the contract's: the student's own options keep their defaults
        mine = [i for i in mine if required[i]]  # (helper-70: a PositionalEncoding's `device=None`)
    if not mine or len(mine) > len(unnamed):
        return keys
    order = _by_words([student.names[i] for i in mine], [contract.names[j] for j in unnamed])
    if order is None and len(mine) < len(unnamed):
        # Fewer left than the contract's: those the student requires are the ones the contract requires, in
        # order, where as many (`attn_size` for num_hiddens in a MultiHeadAttention without bias, helper-69)
        needed = [j for j in unnamed if contract.defaults[j] is None]
        if not all(required[i] for i in mine):
            return keys
        if len(needed) == len(mine):
            unnamed = needed
        elif mine == unnamed[:len(mine)]:  # else the places a call by position gives them, the rest left out
            unnamed = unnamed[:len(mine)]  # (`PositionWiseFFN(d_model, d_ff)`: no ffn_num_outputs, helper-69's F6)
        else:
            return keys
    pairs = list(zip(mine, [unnamed[k] for k in order] if order is not None else unnamed))
    # A name of another kind (ROLES) takes none of them: with a default it keeps it (the contract's one
    # is dropped), else nothing is paired
    if any(role_conflict(student.names[i], contract.names[j]) and required[i] for i, j in pairs):
        return keys
    pairs = [(i, j) for i, j in pairs if not role_conflict(student.names[i], contract.names[j])]
    if not all(_same_kind(student.defaults[i], contract.defaults[j]) for i, j in pairs):
        return keys
    out = list(keys)
    for i, j in pairs:
        out[i] = theirs[j]
    return out


#: The most parameters `_by_words` pairs by trying every order (6: 720 orders).
WORD_PAIRING = 6


def _by_words(mine: Sequence[str], contract: Sequence[str], ordered: bool = True) -> Optional[tuple[int, ...]]:
    """Which of the contract's parameters `contract` (by index) the student's `mine` are, as their words
    say (`_shared_words`): the one pairing that shares the most words, where just one does. With as many
    on both sides (and `ordered`: positions that pair in order anyway) it must share more than the pairing
    in order; else every pair must share a word. None where the words do not decide."""
    if not 1 <= len(mine) <= len(contract) <= WORD_PAIRING:
        return None
    score = [[_shared_words(m, c) for c in contract] for m in mine]
    totals = {order: sum(score[i][j] for i, j in enumerate(order))
              for order in permutations(range(len(contract)), len(mine))}
    best = max(totals.values())
    winners = [order for order, total in totals.items() if total == best]
    if len(winners) != 1:
        return None
    order = winners[0]
    if ordered and len(mine) == len(contract):
        return order if best > totals[tuple(range(len(mine)))] else None
    return order if all(score[i][j] > 0 for i, j in enumerate(order)) else None


def _shared_words(mine: str, theirs: str) -> int:
    """How many words of the student's parameter name agree with one of the contract's: the same word,
    or one the start of the other (at least two letters: `in` and `input`, `hid` and `hiddens`)."""
    contract_words = [w for w in words(theirs) if len(w) >= 2]
    return sum(any(a.startswith(b) or b.startswith(a) for b in contract_words) for a in words(mine) if len(a) >= 2)


def _same_kind(mine: Optional[str], theirs: Optional[str]) -> bool:
    """Whether two defaults (source text; None: no default) may belong to one parameter: either side has
    none, or both are literals of one kind (numbers, booleans, strings, None)."""
    if mine is None or theirs is None:
        return True
    try:
        values = [ast.literal_eval(mine), ast.literal_eval(theirs)]
    except (ValueError, SyntaxError):
        return False
    kinds = {"bool" if isinstance(v, bool) else "number" if isinstance(v, (int, float)) else type(v).__name__
             for v in values}
    return len(kinds) == 1


@dataclass(frozen=True)
class Mismatch:
    """How one of the student's callables differs from the contract's."""

    component: str
    target: str  # "AdditiveAttention" (the constructor), "AdditiveAttention.forward", "masked_softmax"
    kind: str  # "constructor", "method" or "function"
    student: Params
    contract: Params
    # positions where the student's parameter is a contract one of another position, or says it takes another
    # kind of value than the contract's there (`role_conflict`: a `dropout` where the contract has a size)
    misplaced: tuple[int, ...]
    missing: tuple[str, ...]  # contract parameters the student's callable cannot take
    extra: tuple[str, ...]  # the student's parameters without a default that no test passes
    no_default: tuple[int, ...]  # positions where the contract's parameter has a default and the student's not
    adapter: Optional[Adapter] = None  # how the grader calls it by name instead, where the names say
    defined_as: str = ""  # the student's class's own name, where it is not the component's (`renamed`, `X = Mine`)

    @property
    def reached_as(self) -> tuple[str, ...]:
        """What a call reaches this callable as: the target, and for a method of a class defined under
        another name, that class's name with the method (an object's type says its own name)."""
        method = self.target.partition(".")[2]
        return (self.target,) + ((f"{self.defined_as}.{method}",) if method and self.defined_as else ())

    @property
    def unpacks_state(self) -> bool:
        """Whether a method takes the contract's last parameter `state` (a decoder's list) as several parameters of
        its own (`_takes_state_parts`), its parameters that no test passes being among them."""
        names = self.contract.names
        return self.kind == "method" and _takes_state_parts(self.student, self.contract,
                                                            identify(self.student.names, names)) \
            and set(self.extra) <= set(self.student.names[len(names) - 1:])

    @property
    def runs_in_encoder_decoder(self) -> bool:
        """Whether the course's EncoderDecoder (given code, which the training tests build around an encoder or a
        decoder) calls this method as the contract does, unadapted on every path (`_from_the_tests`)."""
        method = self.target.partition(".")[2]
        return (method == "forward" and self.component.endswith(("Encoder", "Decoder"))) or \
            (method == "init_state" and self.component.endswith("Decoder"))

    @property
    def wrong_values(self) -> bool:
        """Whether calls go through with arguments in the wrong parameters (its outputs are no misconception)."""
        return bool(self.misplaced) and not self.missing and not self.extra and self.adapter is None

    @property
    def drops_inputs(self) -> bool:
        """Whether calls by name leave out inputs the tests pass to a function or method (a
        `sequence_mask(X, valid_len)` never gets the test's `value`): its outputs answer other inputs, so
        they are no misconception either. A constructor's left-out sizes are not inputs (lazy layers)."""
        return self.kind != "constructor" and self.adapter is not None and None in self.adapter.names

    def _got(self, j: int) -> str:
        return _("the {name}").format(name=self.contract.names[j]) if j < len(self.contract.names) else _("nothing")

    def message(self, helped: bool = True) -> str:
        """The finding, said once per component. `helped`: a test that runs the component's code passed with the
        adapter's calls (where none did, the message does not say that the rest was graded on what it does, nor
        how to unpack a state whose parts the parameters did not take: helper-80's F8b)."""
        method = self.target.partition(".")[2]
        defaults = bool(self.no_default) and self.student.show() == self.contract.show()  # only defaults differ
        lines = ["signature: " + _("your {target} takes ({yours}); the contract is ({contract})").format(
            target=self.target, yours=self.student.show(defaults), contract=self.contract.show(defaults))]
        if self.adapter is not None and not helped:
            lines.append("  " + _("the grader passed {arguments} by name, and the tests' calls still failed: your "
                                  "parameters do not take what those arguments hold (the other tests say how each "
                                  "call failed)").format(arguments=self.adapter.show()))
        elif self.adapter is not None:
            lines.append("  " + _("the grader passed {arguments} by name, so that the rest of your code was graded on "
                                  "what it does (the signature test costs the signature; the other tests, what your "
                                  "code does with those arguments)").format(arguments=self.adapter.show()))
            if self.runs_in_encoder_decoder and not self.unpacks_state:  # (said below for a state's parts)
                # helper-83's F5: the message said the signature test alone was charged, and a training test failed too
                lines.append("  " + _("the course's EncoderDecoder, which the training tests run your {component} in, "
                                      "calls {method} as the contract does: those tests fail until it takes the "
                                      "contract's parameters").format(component=self.component, method=method))
        elif self.missing:
            said = (_("it has no {names}: the tests pass them by position, so calls fail") if len(self.missing) > 1
                    else _("it has no {names}: the tests pass it by position, so calls fail"))
            lines.append("  " + said.format(names=", ".join(self.missing)))
        if self.misplaced and not self.missing and self.adapter is None:
            got = "; ".join(_("your {name} gets {value}").format(name=self.student.names[j], value=self._got(j))
                            for j in self.misplaced)
            lines.append("  " + _("the tests pass the arguments by position, in the contract's order: {got}").format(got=got))
        if self.unpacks_state and not (self.adapter is not None and not helped):
            # forward(X, enc_outputs, hidden_state, enc_valid_lens): the state's parts, where the contract passes one
            # list; removing them, as the words below would say, breaks the decoder (helper-78's F9). Where the parts
            # passed so did not work either (a block taking its own cache slot), the advice would not fit: the fix
            # line below says what the contract takes
            parts = self.adapter.parts() if self.adapter is not None and self.adapter.unpacked else \
                self.student.names[self.contract.names.index("state"):]
            lines.append("  " + _("the contract passes the decoder's state as one argument, `state`, and your forward "
                                  "takes its parts ({parts}): take `state` and unpack it inside ({parts} = state)").format(
                parts=", ".join(parts)))
            if self.adapter is not None:  # what the adapter does not reach (helper-80's F8)
                lines.append("  " + _("the course's code that calls your module (EncoderDecoder, the blocks' loop, the "
                                      "training loop) passes `state` as one argument, as the contract does: the tests "
                                      "that run through it fail until your forward takes `state`"))
        elif self.extra and not self.unpacks_state:
            said = (_("no test passes your {names}: remove them or give them a default") if len(self.extra) > 1
                    else _("no test passes your {names}: remove it or give it a default"))
            lines.append("  " + said.format(names=", ".join(self.extra)))
        for j in self.no_default if not self.misplaced else ():
            lines.append("  " + _("the contract's {name} has a default ({default}) and some tests leave it out: give "
                                  "your {yours} the same default").format(
                name=self.contract.names[j], default=self.contract.defaults[j], yours=self.student.names[j]))
        wanted = self.contract.show(defaults=True)
        if self.kind == "function":
            lines.append(f"  fix: def {self.target}({wanted})")
        else:
            lines.append(f"  fix: def {method or '__init__'}(self{', ' if wanted else ''}{wanted}) "
                         + _("in class {name}").format(name=self.component))
        if self.missing and self.kind == "constructor":
            lines.append(f"  hint: {_(EDITION_HINT)}")
        return "\n".join(lines)

    def call_note(self, args: Sequence[Any]) -> str:
        """For a call that failed: which of the contract's arguments (and shapes) the student's
        parameters received ("" when the order is not the problem)."""
        if not self.wrong_values:
            return ""
        got = [_("{name} = the {contract} {value}").format(name=self.student.names[j], contract=self.contract.names[j],
                                                           value=describe(args[j]))
               for j in self.misplaced if j < len(args) and j < len(self.contract.names)]
        return "\n  " + _("in the contract's order, your parameters got: {got}").format(got=", ".join(got)) if got else ""


def called_as(course: Course, cells: Iterable[Cell], found: dict[str, list[Mismatch]]) -> dict[str, dict[str, Any]]:
    """Per contract class that the submission's code calls by a signature of the student's own, that
    signature as a child needs it where the course's class stands in for the student's (the dependency
    rule; `dependencies.job` sends those of the classes it injects, `child.read_as_written` uses them):
    the positional parameters in order, and the contract's parameter each name is. It is the student's
    constructor where they wrote one that the names explain (an Adapter, from `found`, or the contract's
    parameters spelled otherwise: `dropout_rate`, which a keyword call of the student's passes), else the
    contract's positions; with, either way, the keywords that the submission's calls pass and the
    contract lacks (`keywords_called`: a TransformerEncoder handed in without the 05 code it was written
    for, calling `PositionalEncoding(encoding_dim=...)`). Under "forward", the same for a forward of the
    student's that the names explain (a learner's `ScaledDotProductAttention.forward(q, k, v, mask=None)`,
    which their MultiHeadAttention calls with `mask=valid_lens`: the course's DotProductAttention standing in
    raised "unexpected keyword argument 'mask'" on every test, helper-69's F8)."""
    out: dict[str, dict[str, Any]] = {}
    for name, mismatches in found.items():
        for m in mismatches:
            if m.target != name or m.kind != "constructor" or m.adapter is None:
                continue
            out[name] = _spec(m.student, m.adapter)
    signatures = contract(course)
    cells = list(cells)
    for name, student in _constructors(course, cells).items():  # the same parameters spelled otherwise
        params = signatures.get(name, {}).get(name)
        same = adapter(student, params) if params is not None and name not in out else None
        if same is not None and any(mine and mine != theirs for mine, theirs in zip(same.names, same.contract)):
            out[name] = _spec(student, same)
    for name, keywords in keywords_called(signatures, cells).items():
        names = signatures[name][name].names
        spec = out.setdefault(name, {"params": list(names), "contract": {n: n for n in names}})
        for keyword, theirs in keywords.items():
            spec["contract"].setdefault(keyword, theirs)
    for name, sites in own_order_sites(cells, out, signatures).items():
        out[name]["sites"] = sites
    for name, student in _constructors(course, cells, "forward").items():  # its forward, as the names explain it
        params = signatures.get(name, {}).get(f"{name}.forward")
        by_name = next((m.adapter for m in found.get(name, []) if m.target == f"{name}.forward"), None)
        by_name = by_name or (adapter(student, params) if params is not None else None)
        if by_name is not None and by_name.unpacked:  # the state's parts: the course's forward gets them as one list
            k = len(by_name.contract) - 1  # (helper-80's F7: the learner's decoder calling `blk(X, *state)`)
            out.setdefault(name, {})["forward"] = {"params": list(student.names),
                                                   "contract": dict(zip(student.names[:k], by_name.contract[:k])),
                                                   "unpacked": list(by_name.parts())}
        elif by_name is not None and any(mine and mine != theirs for mine, theirs in zip(by_name.names, by_name.contract)):
            out.setdefault(name, {})["forward"] = _spec(student, by_name)
    for name, aliases in submodule_aliases(course, cells).items():
        out.setdefault(name, {})["attributes"] = aliases
    return out


def submodule_aliases(course: Course, cells: Iterable[Cell]) -> dict[str, dict[str, str]]:
    """Per contract class the submission defines, the student's names of its submodules that the course's class
    does not have, each with the course's name for the same submodule: the one built by the same class at the
    same place among those it builds (`self.attention_1 = MultiHeadAttention(...)`, the second AddNorm built:
    the course's `attention1`, `addnorm2`), where both build as many of that class. The course's class standing in
    answers to them (child.read_as_written): a learner's TransformerDecoder reading `blk.attention_1` of its own
    block crashed on the course's block standing in (helper-72's F1: the book's decoder, 0 of 6)."""
    definitions = _definitions(cells)
    out: dict[str, dict[str, str]] = {}
    for name in contract(course):
        cls, reference = definitions.get(name), course.reference_object(name)
        if not isinstance(cls, ast.ClassDef) or not inspect.isclass(reference):
            continue
        course_class = _course_definition(cast(Any, reference))  # a class: hashable, as the cache needs
        if course_class is None:
            continue
        theirs = _built_submodules(course_class, course)
        mine = _built_submodules(cls, course)
        course_names = {attr for attrs in theirs.values() for attr in attrs}
        aliases = {attr: other for kind, attrs in mine.items() if len(attrs) == len(theirs.get(kind, []))
                   for attr, other in zip(attrs, theirs[kind]) if attr != other and attr not in course_names}
        if aliases:
            out[name] = aliases
    return out


@functools.cache  # the course's code does not change while a process grades: read and parse it once
def _course_source(reference: Any) -> Optional[str]:
    """The source of a course class or function, dedented (None where Python cannot find it)."""
    try:
        return textwrap.dedent(inspect.getsource(reference))
    except (OSError, TypeError):
        return None


@functools.cache
def _course_definition(reference: Any) -> Optional[ast.stmt]:
    """The course's own class or function, parsed the one way the grading process parses code (read only)."""
    source = _course_source(reference)
    tree = parse_student_code(source) if source is not None else None
    return tree.body[0] if tree is not None and tree.body else None


def _built_submodules(cls: ast.stmt, course: Course) -> dict[str, list[str]]:
    """The attributes `cls.__init__` assigns a constructed object to (`self.x = Kind(...)`), per kind (the class
    called: a contract class by its contract name, whatever the spelling, else its last name: `Linear`), in order."""
    init = next((f for f in getattr(cls, "body", []) if isinstance(f, ast.FunctionDef) and f.name == "__init__"), None)
    if init is None or not init.args.args:
        return {}
    names = [c.name for a in course.assignments for c in a.components]  # the contract's components
    self_name = init.args.args[0].arg
    assigns = sorted((n for n in ast.walk(init) if isinstance(n, ast.Assign) and isinstance(n.value, ast.Call)),
                     key=lambda n: (n.lineno, n.col_offset))
    out: dict[str, list[str]] = {}
    for node in assigns:
        func = node.value.func  # type: ignore[attr-defined]  # an ast.Call, filtered above
        called = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
        if called is None:
            continue
        kind = called if called in names else next((n for n in names if spelled_like(n, called)), called)
        for target in node.targets:
            if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == self_name:
                out.setdefault(kind, []).append(target.attr)
    return out


def own_order_sites(cells: list[Cell], specs: dict[str, dict[str, Any]],
                    signatures: dict[str, dict[str, Params]]) -> dict[str, list[list[Any]]]:
    """Per class of `specs` (`called_as`: the student's positional parameters, the contract's each is), the calls
    `Class(a, b, ...)` in the submission written in the student's order, each as [cell label, line, end line,
    column, end column]. A call the course's signature also takes is read the contract's way unless its
    arguments say otherwise: of its positional arguments that are plain names (`num_heads`, `self.num_heads`;
    a name given at two positions says nothing), some are the student's parameter at their position where the
    contract's is another, and none is the contract's parameter there (a name that is neither says nothing:
    `use_bias` for `bias`). The grading then reads such a call the student's way only where the student's own
    class is code that works (providers.Runs.works): a stub's order says nothing of what a call means."""
    out: dict[str, list[list[Any]]] = {}
    for (label, _source), tree in zip(cells, cell_trees(tuple(cells))):
        for call in _calls_in(tree, {name for name, spec in specs.items() if "params" in spec}):
            name = call.func.id  # type: ignore[attr-defined]  # _calls_in keeps calls of a name
            params = [p for p in specs[name]["params"] if isinstance(p, str)]
            contract = specs[name]["contract"]
            if len(call.args) > len(params) or any(isinstance(a, ast.Starred) for a in call.args):
                continue
            order = [same_name(n) for n in signatures[name][name].names] if name in signatures.get(name, {}) else []
            named = [(j, n) for j, arg in enumerate(call.args) if (n := _plain_name(arg)) is not None]
            named = [(j, n) for j, n in named if [m for _, m in named].count(n) == 1]  # one name in two places says nothing
            moved = {j for j, _ in named if j >= len(order) or same_name(contract.get(params[j], params[j])) != order[j]}
            mine = [n for j, n in named if j in moved and same_name(n) == same_name(params[j])]
            theirs = [n for j, n in named if j in moved and j < len(order) and same_name(n) == order[j]]
            if mine and not theirs:
                out.setdefault(name, []).append([label, call.lineno, call.end_lineno, call.col_offset, call.end_col_offset])
    return out


def _plain_name(node: ast.expr) -> Optional[str]:
    """`num_heads` for `num_heads` or `self.num_heads`; None for anything else (a number, an expression)."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
        return node.attr
    return None


def _spec(student: Params, by_name: Adapter) -> dict[str, Any]:
    """What a child needs of one constructor of the student's (`called_as`)."""
    return {"params": list(student.names),
            "contract": {mine: by_name.contract[j] for j, mine in enumerate(by_name.names) if mine}}


def _components_defined(course: Course, cells: list[Cell]) -> dict[str, ast.stmt]:
    """The submission's top-level definitions, and each component spelled otherwise under its own name
    (`spelled_otherwise`; a method graded as a function, `methods_as_functions`, has no signature mistake)."""
    found = _definitions(cells)
    found.update({component: found[theirs] for component, theirs in spelled_otherwise(course, cells).items()})
    return found


def _constructors(course: Course, cells: list[Cell], method: str = "__init__") -> dict[str, Params]:
    """Per contract class the submission defines (spelled otherwise included: `renamed`), its constructor's
    (or another `method`'s) parameters as the submission wrote them."""
    found = _components_defined(course, cells)
    out: dict[str, Params] = {}
    for name, stmt in found.items():
        params = _class_params(stmt, found, method)
        if params is not None:
            out[name] = params
    return out


def keywords_called(signatures: dict[str, dict[str, Params]], cells: Iterable[Cell]) -> dict[str, dict[str, str]]:
    """Per contract class, the keywords that the submission's calls `Class(...)` pass and its constructor
    lacks, each with the contract's parameter it stands for: by its name (`identify`: `d_model` is
    num_hiddens), else by its words among the parameters the call leaves out (`_by_words`), else the one
    keyword left takes the one required parameter left. A keyword that two calls read differently, or that
    nothing decides, is left out (the call then fails as the student's code would with the course's class)."""
    out: dict[str, dict[str, str]] = {}
    dropped: set[tuple[str, str]] = set()
    for call in _calls(cells, {n for n, targets in signatures.items() if n in targets and len(targets) > 1}):
        name = call.func.id  # type: ignore[attr-defined]  # _calls keeps calls of a name
        params = signatures[name][name]
        for keyword, theirs in _keyword_pairs(call, params).items():
            seen = out.setdefault(name, {}).setdefault(keyword, theirs)
            if seen != theirs:
                dropped.add((name, keyword))
    for name, keyword in dropped:
        out[name].pop(keyword, None)
    return {name: keywords for name, keywords in out.items() if keywords}


def course_cannot_take(course: Course, cells: Iterable[Cell], called_as: dict[str, dict[str, Any]]
                       ) -> dict[str, str]:
    """Per contract class, a call `Class(...)` in the submission that the course's class standing in could not
    take (its source text, shortened): its arguments bind neither the course's constructor nor d2l 1.0's
    (`_edition`, which the course's class also takes), as written or, where the student's own constructor
    explains them (`called_as`), passed on by the contract's names as the child does (child.read_as_written). The dependency rule keeps the student's own
    class there (`dependencies.plan`): a learner's EncoderBlock building its own `PositionWiseFFN(num_hiddens,
    ffn_num_hiddens)`, an FFN without an output size (helper-69's F6), crashed on every test with the course's
    FFN, which needs three."""
    cells = list(cells)
    signatures = contract(course)
    out: dict[str, str] = {}
    for call in _calls(cells, {n for n, targets in signatures.items() if n in targets and len(targets) > 1}):
        name = call.func.id  # type: ignore[attr-defined]  # _calls keeps calls of a name
        params, spec = signatures[name][name], called_as.get(name, {})
        if name in out or params.varargs or any(isinstance(a, ast.Starred) for a in call.args) or \
                any(k.arg is None for k in call.keywords):
            continue
        keywords = [k.arg for k in call.keywords if k.arg is not None]
        read, mine = spec.get("contract", {}), spec.get("params")
        edition = _edition(name)  # the course's class also takes d2l 1.0's constructor (solutions/d2l_v1.py)
        as_contract = len(call.args) <= len(params.names) and _takes(params, params.names[:len(call.args)], keywords)
        if isinstance(mine, list):  # the child passes it on by the contract's names, all by keyword
            passed = [read[p] for p in mine[:len(call.args)] if p in read] + \
                [read.get(k, k) for k in keywords if k in read or k not in mine]
            as_theirs = len(call.args) <= len(mine) and any(
                _takes(signature, [], passed + _left_out(signature, passed, read.values()))
                for signature in (params, edition) if signature is not None)
            as_edition = False
        else:  # as it is
            as_theirs = False
            as_edition = edition is not None and len(call.args) <= len(edition.names) and _takes(
                edition, edition.names[:len(call.args)], keywords)
        if not (as_contract or as_theirs or as_edition):
            out[name] = ast.unparse(call)[:120]
    return out


def _left_out(signature: Params, passed: Sequence[str], mine: Iterable[str]) -> list[str]:
    """The parameters of `signature` that the child fills in with their neutral value (`procedures.LEFT_OUT`: a
    dropout) where the student's constructor has no parameter for them (`mine`, the contract names it reads as)."""
    mine = set(mine)
    return [p for p in procedures.LEFT_OUT if p in signature.names and p not in passed and p not in mine]


def _edition(name: str) -> Optional[Params]:
    """d2l 1.0's constructor parameters of a course class, where the course's class standing in takes them too
    (solutions/d2l_v1.py's `_EDITIONS`, which a grading child installs: dependencies.EDITIONS_MODULE)."""
    from solutions import d2l_v1
    function = d2l_v1._EDITIONS.get(name)
    return _reference_params(function) if function is not None else None


def _takes(params: Params, positional: Sequence[Optional[str]], named: Sequence[str]) -> bool:
    """Whether a call giving these of `params` (by position; None: an argument the student's own class has no
    contract parameter for, which is not passed on) and by keyword binds them: every keyword one of them, none
    given twice, every required one given."""
    given = {n for n in positional if n} | set(named)
    required = {n for n, d in zip(params.names, params.defaults) if d is None}
    return set(named) <= set(params.names) and required <= given and not ({n for n in positional if n} & set(named))


def _calls(cells: Iterable[Cell], classes: set[str]) -> list[ast.Call]:
    """The submission's calls of one of `classes` by its bare name, read with the loader's rules."""
    return [call for tree in cell_trees(tuple(cells)) for call in _calls_in(tree, classes)]


def _calls_in(tree: Optional[ast.Module], classes: set[str]) -> list[ast.Call]:
    """One cell's calls of one of `classes` by its bare name."""
    return [node for node in ast.walk(tree) if isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name) and node.func.id in classes] if tree is not None else []


def _keyword_pairs(call: ast.Call, params: Params) -> dict[str, str]:
    """For one call, its keywords that `params` (the contract's) lacks, each with the parameter it is."""
    keywords = [k.arg for k in call.keywords if k.arg is not None]
    if any(isinstance(a, ast.Starred) for a in call.args) or params.varargs:
        return {}
    theirs = [same_name(n) for n in params.names]
    keys = identify(keywords, params.names)
    named = {kw: params.names[theirs.index(k)] for kw, k in zip(keywords, keys) if k in theirs}
    pairs = {kw: name for kw, name in named.items() if kw != name}  # `d_model=` for num_hiddens
    unknown = [kw for kw, k in zip(keywords, keys) if k not in theirs]
    given = set(params.names[:len(call.args)]) | set(named.values())
    left = [n for n in params.names if n not in given]
    if not unknown:
        return pairs
    order = _by_words(unknown, left, ordered=False)  # keywords have no order
    if order is not None:
        return pairs | {kw: left[j] for kw, j in zip(unknown, order)}
    required = [n for n, d in zip(params.names, params.defaults) if n in left and d is None]
    if len(unknown) == 1 and len(required) == 1:
        return pairs | {unknown[0]: required[0]}
    return pairs


def adapted(names: dict[str, Any], found: Sequence[Mismatch]) -> dict[str, Any]:
    """The submission's names as an in-process grading calls them: each callable whose signature an
    `Adapter` covers (`found`: the mistakes of the component under test) is called by name, as
    `remote.Connection` calls it in a sandboxed child, so that every path grades alike. A class's
    constructor is adapted where it is called; its forward or init_state on each object the tests
    construct. Nothing else changes: the student's own calls inside their code stay as written."""
    adapters = {m.target: m.adapter for m in found if m.adapter is not None}
    out = dict(names)
    for name in {t.partition(".")[0] for t in adapters}:
        obj = names.get(name)
        methods = {t.partition(".")[2]: a for t, a in adapters.items() if t.startswith(f"{name}.")}
        if inspect.isclass(obj):
            out[name] = _constructed(obj, adapters.get(name), methods, names)
        elif callable(obj) and name in adapters:
            out[name] = _by_name(obj, adapters[name], names)
    return out


def _by_name(fn: Any, adapter: Adapter, names: dict[str, Any]) -> Any:
    """`fn` called in the contract's order and by the contract's names, reaching it by its own."""
    @functools.wraps(fn)
    def call(*args: Any, **kwargs: Any) -> Any:
        translated = resolve_own(adapter.translate(args, kwargs), functools.partial(_own, names))
        return fn(*translated.args, **translated.kwargs)
    return call


def _own(names: dict[str, Any], own: OwnFunction) -> Any:
    if own.name not in names:
        raise own.missing()
    return names[own.name]


def resolve_own(call: Call, lookup: Callable[[OwnFunction], Any]) -> Call:
    """`call` with each `OwnFunction` replaced by what `lookup` finds for it."""
    if not any(isinstance(v, OwnFunction) for v in [*call.args, *call.kwargs.values()]):
        return call

    def value(v: Any) -> Any:
        return lookup(v) if isinstance(v, OwnFunction) else v
    return Call([value(v) for v in call.args], {k: value(v) for k, v in call.kwargs.items()}, call.where)


def _constructed(cls: type, init: Optional[Adapter], methods: dict[str, Adapter], names: dict[str, Any]) -> Any:
    """`cls` constructed as the contract calls it; the objects it makes have `methods` adapted."""
    @functools.wraps(cls, updated=())
    def construct(*args: Any, **kwargs: Any) -> Any:
        obj = _by_name(cls, init, names)(*args, **kwargs) if init is not None else cls(*args, **kwargs)
        for method, adapter in methods.items():
            own = getattr(obj, method)
            adapted = _by_name(own, adapter, names)
            # the object's own: nn.Module calls it; the course's code around it calls it as written, as in a child
            obj.__dict__[method] = _from_the_tests(own, adapted)
        return obj
    return construct


#: Where the grader's own code lives: the suites and what they call (a sandboxed grading runs it in the parent).
_GRADER_CODE = tuple(str(Path(__file__).resolve().parents[1] / folder) + os.sep for folder in ("suites", "selfcheck"))


@functools.lru_cache(maxsize=256)
def _is_grader_code(filename: str) -> bool:
    """Whether a code object's file is the grader's, by its real path (imported through a link, helper-80's F2)."""
    return os.path.realpath(filename).startswith(_GRADER_CODE)


def _from_the_tests(own: Any, adapted_call: Any) -> Any:
    """`own` adapted for the calls the tests make, and called as written by the course's code run around the
    student's (EncoderDecoder, the training loop): as a sandboxed grading does, whose parent adapts the calls
    it sends and whose child runs the course's code with the student's objects as they are."""
    @functools.wraps(own)
    def call(*args: Any, **kwargs: Any) -> Any:
        frame: Optional[FrameType] = sys._getframe(1)
        while frame is not None and frame.f_globals.get("__name__", "").startswith("torch."):
            frame = frame.f_back  # nn.Module's __call__
        # the tests' own calls, and the gradient a test asks for (a child adapts a vjp message as it does a call)
        by_tests = frame is not None and (_is_grader_code(frame.f_code.co_filename)
                                          or frame.f_code is procedures.vjp.__code__)
        return adapted_call(*args, **kwargs) if by_tests else own(*args, **kwargs)
    return call


def describe(value: Any) -> str:
    """An argument as a message shows it: a tensor by its shape, a number or None by its value."""
    if isinstance(value, torch.Tensor):
        return str(tuple(value.shape))
    if value is None or isinstance(value, (bool, int, float)):
        return repr(value)
    return _("(a {type})").format(type=type_name(value))


def compare(component: str, target: str, kind: str, student: Params, contract: Params) -> Optional[Mismatch]:
    """The mismatch of a student's parameters with the contract's, by name (`identify`), or None when a
    call by position gives every parameter what the contract means (other names in the same places are
    fine)."""
    mine = identify(student.names, contract.names)
    theirs = [same_name(n) for n in contract.names]
    # a contract parameter at another position (by name, or by the words `adapter` pairs them by: `query_features,
    # key_features` for key_size, query_size, helper-83's F2, a correct AdditiveAttention 0 of 4 called by position),
    # or a name of another kind (ROLES) where a call by position gives it the contract's parameter of this one
    ranked = _by_rank(student, contract, theirs, mine, [d is None for d in student.defaults])
    misplaced = tuple(j for j, n in enumerate(ranked)
                      if (n in theirs and (j >= len(theirs) or theirs[j] != n))
                      or (n not in theirs and j < len(theirs) and role_conflict(student.names[j], contract.names[j])))
    missing: tuple[str, ...] = ()
    if not student.varargs and len(mine) < len(theirs):
        absent = [c for c, n in zip(contract.names, theirs) if n not in mine]
        missing = tuple(absent or contract.names[len(mine):])
    extra = tuple(n for j, (n, d) in enumerate(zip(student.names, student.defaults))
                  if j >= len(theirs) and d is None and not contract.varargs) + student.keywords
    no_default = tuple(j for j in range(min(len(mine), len(theirs)))
                       if student.defaults[j] is None and contract.defaults[j] is not None)
    if not (misplaced or missing or extra or no_default or _takes_state_parts(student, contract, mine)):
        return None
    # Every mismatch is a call by position that goes wrong, so each is called by name where the names say how:
    # another order, a contract argument too many, or one a test leaves out that the student's parameter needs
    # (the contract's default is given: helper-69's `sequence_mask(X, valid_lens, value)` kept 0 of 2 for
    # "missing 1 required positional argument"); a keyword-only parameter without a default is in `extra`.
    found = Mismatch(component, target, kind, student, contract, misplaced, missing, extra, no_default,
                     adapter(student, contract))
    if found.unpacks_state:  # the state's parts as parameters: called with *state
        k = len(contract.names) - 1
        needed = max((i + 1 for i, d in enumerate(student.defaults[k:]) if d is None), default=0)
        found = replace(found, adapter=Adapter(contract.names, student.names[:k + 1], student.names,
                                               unpacked=student.names[k:], unpacked_needed=needed))
    return found


def _takes_state_parts(student: Params, contract: Params, mine: Sequence[str]) -> bool:
    """Whether a callable takes more parameters than the contract's, whose last is `state`, and none of them is the
    state (`mine`: `identify`'s reading); the parameters before it may be named otherwise (`inputs` for X: helper-80's
    F9), and each may have a default (`forward(X, enc_outputs=None, hidden_state=None, enc_valid_lens=None)`, which is
    no mismatch otherwise: helper-80's F5)."""
    names = contract.names
    return bool(names) and names[-1] == "state" and len(student.names) > len(names) and \
        same_name(names[-1]) not in mine


@functools.cache  # the course's callables do not change while a process grades: read each signature once
def _reference_params(target: Any) -> Params:
    params = [p for p in inspect.signature(target).parameters.values() if p.name != "self"]
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return Params(tuple(p.name for p in positional),
                  tuple(None if p.default is p.empty else repr(p.default) for p in positional),
                  any(p.kind == p.VAR_POSITIONAL for p in params))


def contract(course: Course) -> dict[str, dict[str, Params]]:
    """Per component, its callables' parameters as the contract states them: {"AdditiveAttention":
    {"AdditiveAttention": (key_size, ...), "AdditiveAttention.forward": (queries, ...)}}."""
    out: dict[str, dict[str, Params]] = {}
    for name in [c.name for a in course.assignments for c in a.components]:
        obj = course.reference_object(name)
        if not inspect.isclass(obj):
            out[name] = {name: _reference_params(obj)}
            continue
        out[name] = {(name if m == "__init__" else f"{name}.{m}"): _reference_params(vars(obj)[m])
                     for m in METHODS if m in vars(obj)}
    return out


def _student_params(fn: ast.FunctionDef | ast.AsyncFunctionDef, method: bool) -> Optional[Params]:
    a = fn.args
    positional = [p.arg for p in a.posonlyargs + a.args]
    defaults: list[Optional[str]] = [None] * (len(positional) - len(a.defaults))
    defaults += [ast.unparse(d)[:DEFAULT_CHARS] for d in a.defaults]
    static = any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in fn.decorator_list)
    if method and not static:
        if not positional:
            return None  # no `self`: not a method a call could reach as written
        positional, defaults = positional[1:], defaults[1:]
    keywords = tuple(p.arg for p, d in zip(a.kwonlyargs, a.kw_defaults) if d is None)
    return Params(tuple(positional), tuple(defaults), a.vararg is not None, keywords)


def _definitions(cells: Iterable[Cell]) -> dict[str, ast.stmt]:
    """The submission's top-level functions and classes by name, as loading binds them (the last
    definition wins; `Name = Other` binds Other's definition), read with the loader's rules."""
    found: dict[str, ast.stmt] = {}
    for tree in cell_trees(tuple(cells)):
        for stmt in tree.body if tree is not None else []:
            if not loader.keeps(stmt):
                continue
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and loader.adds_to_a_class(stmt):
                found.pop(stmt.name, None)  # d2l 1.0's `@d2l.add_to_class(C)` binds the name to None
            elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                found[stmt.name] = stmt
            elif isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Name):
                for target in stmt.targets:
                    if isinstance(target, ast.Name):
                        bound = found.get(stmt.value.id)
                        if bound is None:
                            found.pop(target.id, None)
                        else:
                            found[target.id] = bound
            else:
                for name in loader.assigned_names(stmt):
                    found.pop(name, None)  # bound to something else: nothing to read
    return found


def _method(cls: ast.ClassDef, name: str, found: dict[str, ast.stmt],
            depth: int = 0) -> Optional[ast.FunctionDef | ast.AsyncFunctionDef]:
    """The class's own method `name`, else one of a base class the submission defines (3 levels)."""
    for stmt in cls.body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and stmt.name == name:
            return stmt
    for base in cls.bases if depth < 3 else []:
        parent = found.get(base.id) if isinstance(base, ast.Name) else None
        if isinstance(parent, ast.ClassDef) and parent is not cls:
            method = _method(parent, name, found, depth + 1)
            if method is not None:
                return method
    return None


def role(name: str) -> Optional[str]:
    """The kind of value a parameter's name says it takes (ROLES), or None where its words do not say."""
    return next((ROLES[w] for w in words(name) if w in ROLES), None)


def role_conflict(mine: str, theirs: str) -> bool:
    """Whether the student's parameter `mine` says it takes another kind of value than the contract's `theirs`."""
    return role(mine) is not None and role(mine) != role(theirs)


def words(name: str) -> tuple[str, ...]:
    """`ScaledDotProductAttention` -> (scaled, dot, product, attention); `mask_sequence` -> (mask, sequence)."""
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name)
    return tuple(w for w in spaced.lower().split("_") if w)


#: Endings a learner's word may add to or drop from the contract's (`mask_softmax`, `PositionEncoding`).
ENDINGS = ("ed", "al", "es", "s")

#: A contract function that undoes another, by the one it undoes (docs/course-api.md: transpose_output is "the inverse
#: of transpose_qkv"), and the words that name an inverse: learners call it `untranspose_qkv`, `inverse_transpose_qkv`,
#: `reverse_transpose_qkv` (helper-78's F3: a correct transpose_output so named kept 0 of 2, "not defined").
INVERSES = {"transpose_output": "transpose_qkv"}
INVERSE_WORDS = ("un", "inverse", "inv", "reverse", "undo")


def inverse_named(other: str) -> Optional[str]:
    """The contract function whose inverse `other` names (`untranspose_qkv`: transpose_output), else None."""
    joined = "".join(words(other))
    return next((name for name, undone in INVERSES.items()
                 if any(joined == word + "".join(words(undone)) for word in INVERSE_WORDS)), None)


def _stem(word: str) -> str:
    ending = next((e for e in ENDINGS if word.endswith(e) and len(word) - len(e) >= 3), "")
    return word[:len(word) - len(ending)]


@functools.lru_cache(maxsize=1 << 16)  # pure, asked about the same pairs many times in a grading
def spelled_like(name: str, other: str) -> bool:
    """Whether `other` is the contract's `name` spelled otherwise: the same letters in other cases or
    with other underscores (`Transformer_Encoder`, `Multiheadattention`), the same words but for an
    ending (`mask_softmax`, `PositionEncoding`: ENDINGS) or in another order (`mask_sequence`), more
    words ending in all of its own when it has two or more (`TransformerEncoderBlock` for `EncoderBlock`,
    as d2l 1.0 names it; `ScaledDotProductAttention`), its words abbreviated (`seq_mask`, `PosEnc`,
    `DotProdAttn`: `abbreviates`; a word by its initial beside a word written out: `transpose_o`), or one typing slip in a name of eight letters or more (`masked_softomax`,
    `PositionalEncodding`: `one_slip`), or the inverse of the function it undoes (`untranspose_qkv`:
    `inverse_named`). No contract name is spelled like another."""
    inverse = inverse_named(other)
    if inverse is not None:  # the inverse of a contract function is that function's inverse, never the function
        return inverse == name
    mine, theirs = words(name), words(other)
    return other != name and ("".join(mine) == "".join(theirs) or sorted(mine) == sorted(theirs)
                              or [_stem(w) for w in mine] == [_stem(w) for w in theirs]
                              or (len(mine) > 1 and theirs[-len(mine):] == mine)
                              or (len(mine) == len(theirs) and all(map(abbreviates, theirs, mine)))
                              or (len(mine) == len(theirs) > 1 and any(map(str.__eq__, theirs, mine))
                                  and all(a == b[:1] or abbreviates(a, b) for a, b in zip(theirs, mine)))
                              or (len("".join(mine)) >= 8 and one_slip("".join(mine), "".join(theirs)))
                              or (len(theirs) == 1 < len(mine) and len(theirs[0]) >= 6 and run_together(theirs[0], mine)))


def run_together(word: str, parts: Sequence[str]) -> bool:
    """Whether `word` is the words `parts` written as one, each as `spelled_like` takes a word (itself, with
    or without an ENDING, or abbreviated: `abbreviates`): `addnormal`, `masksoftmax`, `multiheadattn`,
    `dotproductattn`, names with no case or underscore to split them at (helper-75's D4)."""
    if not parts:
        return not word
    first = parts[0]
    return any(run_together(word[k:], parts[1:]) for k in range(1, len(word) + 1)
               if word[:k] == first or (k >= 3 and _stem(word[:k]) == _stem(first)) or abbreviates(word[:k], first))


def abbreviates(short: str, word: str) -> bool:
    """Whether `short` is `word` or an abbreviation of it: three letters or more, its first letter first, the
    rest in order (`seq` for sequence, `attn` for attention, `prod` for product)."""
    if short == word:
        return True
    if len(short) < 3 or len(short) >= len(word) or short[0] != word[0]:
        return False
    rest = iter(word[1:])
    return all(letter in rest for letter in short[1:])


def renamed(course: Course, cells: Iterable[Cell]) -> dict[str, str]:
    """Per component that the submission never binds under the contract's name, what the grader grades
    in its place, at the cost of the naming test (`naming_tests`): its one top-level definition spelled
    like it (`spelled_otherwise`), else, for a function, its one method of a class written for it
    (`methods_as_functions`), by its qualified name (`MultiHeadAttention.transpose_qkv`), else its one function
    written inside a top-level function of the submission (`nested_functions`: `masked_softmax.<locals>._sequence_mask`)."""
    cells = list(cells)
    return {**spelled_otherwise(course, cells),
            **{name: form.qualname for name, form in methods_as_functions(course, cells).items()},
            **{name: form.qualname for name, form in nested_functions(course, cells).items()}}


def named_for(name: str, other: str, names: Iterable[str]) -> float:
    """The share of the contract's `name`'s words that are words of `other` (less an ENDING; neighbours written
    as one word count each), if one of them is a word of no other name of `names` (the course's components), else 0: how plainly
    a definition not spelled like it (`spelled_like`) is named for that component. `PositionalEmbedding` 1/2 of
    PositionalEncoding ("positional" is its own), `PositionwiseFeedForward` 2/3 of PositionWiseFFN, `AddAndNorm`
    1, `MultiHeadSelfAttention` 1, `FFN` 1/2 (its head noun: the last word, its own); `BahdanauAttention`, `Block`,
    `TransformerEncoderLayer` 0 (attention, block, encoder and transformer each name several components)."""
    mine, shared = words(name), set[str]()
    for word in words(other):  # one of its words, or several of them written as one (`Positionwise`)
        for i in range(len(mine)):
            for j in range(i + 1, len(mine) + 1):
                if word == "".join(mine[i:j]) or (j == i + 1 and len(word) >= 3 and _stem(word) == _stem(mine[i])):
                    shared.update(mine[i:j])
    others = {w for n in names if n != name for w in words(n)}
    if not shared - others:
        return 0.0
    # its last word, the head noun, where it is the component's own, names it as plainly as half of its words
    # (`FFN` for PositionWiseFFN: helper-76, two learners' correct FFNs kept 0 of 2)
    return max(len(shared) / max(1, len(mine)), 0.5 if mine[-1] in shared - others else 0.0)


def spelled_otherwise(course: Course, cells: Iterable[Cell]) -> dict[str, str]:
    """Per component that the submission never binds under the contract's name, its one top-level
    definition spelled like it (`spelled_like`; a class for a class, a function for a function) that is
    no name a test asks for. None where two definitions could be meant.

    Where no definition is spelled like it, the definition named most plainly for it (`named_for`: half of its
    words or more, one of them its own, `PositionalEmbedding`, `PositionWiseFeedForward`, `AddAndNorm`,
    `MultiHeadSelfAttention`), when exactly one is, and no other missing component is named as plainly in it. Such a stand-in costs nothing but
    the naming test: a definition that is not the component fails its tests, which a missing one fails anyway."""
    from autograder.grading.dependencies import contract_names, defined_names
    cells = list(cells)
    found, bound, taken = _definitions(cells), defined_names(cells), contract_names(course)
    out: dict[str, str] = {}
    components = [c.name for a in course.assignments for c in a.components]
    missing = [c for c in components if c not in bound]
    free: dict[str, list[str]] = {}  # per missing component, the free definitions of its kind
    like: dict[str, list[str]] = {}  # ... and those of them spelled like it
    for component in missing:
        is_class = inspect.isclass(course.reference_object(component))
        free[component] = [n for n, stmt in found.items() if not n.startswith("_") and n not in taken
                           and isinstance(stmt, ast.ClassDef) == is_class]
        like[component] = [n for n in free[component] if spelled_like(component, n)]
        if len(like[component]) == 1:
            out[component] = like[component][0]
    claimed = {n for names in like.values() for n in names}  # spelled like a component: never named for another
    plain = {(c, n): named_for(c, n, components) for c in missing if c not in out for n in free[c] if n not in claimed}
    plain = {pair: share for pair, share in plain.items() if share >= 0.5}
    for component in missing:
        if component in out:
            continue
        mine = {n: share for (c, n), share in plain.items() if c == component}
        best = max(mine.values(), default=0.0)
        top = [n for n, share in mine.items() if share == best]
        rivals = [c for (c, n), share in plain.items() if c != component and top and n == top[0] and share >= best]
        if len(top) == 1 and not rivals:
            out[component] = top[0]
    # Last, a class by what its constructor takes (helper-81's F1: a correct `AttentionGRUDecoder` for
    # Seq2SeqAttentionDecoder and `BahdanauAttention` for AdditiveAttention kept 0, their words naming several
    # components): one that ends in the component's head noun (`decoder`, `attention`) and whose constructor takes
    # the component's parameters (`_constructor_takes`), where it is the only one for the component and for no other
    # missing component
    fitting: dict[str, list[str]] = {}
    signatures = contract(course)
    # a given class's name counts here too: a learner's decoder named `Decoder`, shadowing the given base class, whose
    # constructor takes the component's parameters, which the given base's (**kwargs) does not (helper-83's F4: 0 of 10)
    given = [n for n, stmt in found.items() if n in course.given_names and isinstance(stmt, ast.ClassDef)]
    for component in missing:
        if component in out or not inspect.isclass(course.reference_object(component)):
            continue
        fitting[component] = [n for n in free[component] + given if n not in claimed and n not in out.values()
                              and _heads_alike(component, n) and _constructor_takes(signatures[component][component],
                                                                        _class_params(found[n], found))]
    for component, names in fitting.items():
        if len(names) == 1 and not any(names[0] in others for c, others in fitting.items() if c != component):
            out[component] = names[0]
    return out


def _heads_alike(name: str, other: str) -> bool:
    """Whether `other` ends in `name`'s head noun, its last word (`AttentionGRUDecoder` and Seq2SeqAttentionDecoder),
    with an ending or abbreviated (`BahdanauAttn`)."""
    parts = re.findall(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+", other)  # an acronym is a word: `GRUDecoder`
    head, last = words(name)[-1], parts[-1].lower() if parts else ""
    return _stem(last) == _stem(head) or abbreviates(last, head)


def _class_params(stmt: ast.stmt, found: dict[str, ast.stmt], method: str = "__init__") -> Optional[Params]:
    """The parameters of a method (the constructor) of a class the submission defines, its own or a base class's;
    None for anything else."""
    fn = _method(stmt, method, found) if isinstance(stmt, ast.ClassDef) else None
    return _student_params(fn, True) if fn is not None else None


def _constructor_takes(theirs: Params, mine: Optional[Params]) -> bool:
    """Whether a constructor written `mine` takes the contract's `theirs`: as many parameters (those the contract
    gives a default may be left out), half of the contract's names or more among them (`loose_name`), and nothing
    else it requires."""
    if mine is None or mine.keywords:
        return False
    required = sum(d is None for d in theirs.defaults)
    mine_required = sum(d is None for d in mine.defaults)
    if not required <= len(mine.names) <= len(theirs.names) or mine_required > len(theirs.names):
        return False
    names = {loose_name(n) for n in mine.names}
    return 2 * sum(loose_name(n) in names for n in theirs.names) >= len(theirs.names)


@dataclass(frozen=True)
class MethodForm:
    """A contract function the submission wrote as a method of one of its classes, such as `transpose_qkv`
    as `MultiHeadAttention.transpose_qkv(self, X)` reading `self.num_heads`. The grader grades it in the
    function's place: a call with the contract's arguments calls the method on an instance of the class
    that holds only the arguments it reads from `self` (the child's `function_of_method`). Nothing of the
    class's constructor runs, so the method is graded on its own, as the function would be."""

    cls: str  # the name the submission binds the class to
    method: str
    static: bool  # a @staticmethod: called on the class, with no instance
    contract: tuple[str, ...]  # the contract's parameter names in order (a test may pass any by name)
    from_self: tuple[tuple[str, str], ...]  # (contract parameter, the attribute of self it is read as)
    positional: tuple[tuple[str, str], ...]  # (contract parameter, the method's own parameter), in its order

    @property
    def qualname(self) -> str:
        return f"{self.cls}.{self.method}"

    def spec(self) -> dict[str, Any]:
        """What the child needs (plain data: a job is sent as JSON)."""
        return {"cls": self.cls, "method": self.method, "static": self.static, "contract": list(self.contract),
                "from_self": [list(p) for p in self.from_self], "positional": [list(p) for p in self.positional]}


def methods_as_functions(course: Course, cells: Iterable[Cell]) -> dict[str, MethodForm]:
    """Per contract function that the submission neither binds under its name nor spells otherwise at
    the top level (`spelled_otherwise`), its one method named like it (the same name or `spelled_like`)
    of a top-level class, where the method can be called as the function: it reads nothing of `self` but
    the contract's parameters it does not take itself (`self.num_heads`) and the class's methods, and it
    takes the rest of the contract's parameters in the contract's order. None where two could be meant."""
    from autograder.grading.dependencies import defined_names
    cells = list(cells)
    taken = set(defined_names(cells)) | set(spelled_otherwise(course, cells))
    methods = _class_methods(cells)
    out: dict[str, MethodForm] = {}
    for component, targets in contract(course).items():
        if component in taken or inspect.isclass(course.reference_object(component)):
            continue
        forms = [form for cls, fns in methods.items() for fn in fns.values()
                 if (fn.name == component or spelled_like(component, fn.name))
                 and (form := _method_form(cls, fn, set(fns), targets[component])) is not None]
        if len(forms) == 1:
            out[component] = forms[0]
    return out


def method_specs(course: Course, cells: Iterable[Cell]) -> dict[str, dict[str, Any]]:
    """`methods_as_functions` as a job carries it (dependencies.job's `methods`)."""
    return {name: form.spec() for name, form in methods_as_functions(course, cells).items()}


#: How a nested function's qualified name joins its enclosing function's and its own, as Python's `__qualname__` does.
NESTED = ".<locals>."


@dataclass(frozen=True)
class NestedForm:
    """A contract function the submission wrote inside one of its top-level functions, as d2l 1.0 writes
    `_sequence_mask` inside `masked_softmax`: graded in the contract function's place, built in the child from the
    enclosing function's code (`child.function_of_nested`) with its defaults, as if it were written at the top level.
    Only a function that reads nothing of the enclosing function's (no free variables), takes the contract's
    parameters and has literal defaults: it then computes at the top level exactly what it computes inside."""

    outer: str  # the top-level function, by the name the submission binds it to
    inner: str
    defaults: tuple[Any, ...]  # its defaults' values (literals)

    @property
    def qualname(self) -> str:
        return f"{self.outer}{NESTED}{self.inner}"

    def spec(self) -> dict[str, Any]:
        """What the child needs (plain data: a job is sent as JSON)."""
        return {"outer": self.outer, "inner": self.inner, "defaults": list(self.defaults)}


def nested_functions(course: Course, cells: Iterable[Cell]) -> dict[str, NestedForm]:
    """Per contract function that the submission binds neither under its name, nor spelled otherwise, nor as a method
    (`methods_as_functions`), its one function named like it (the same name or `spelled_like`) defined in the body of
    a top-level function, where it can stand for it (`NestedForm`). None where two could be meant."""
    from autograder.grading.dependencies import defined_names
    cells = list(cells)
    taken = set(defined_names(cells)) | set(spelled_otherwise(course, cells)) | set(methods_as_functions(course, cells))
    outers = {name: stmt for name, stmt in _definitions(cells).items() if isinstance(stmt, ast.FunctionDef)}
    out: dict[str, NestedForm] = {}
    for component, targets in contract(course).items():
        if component in taken or inspect.isclass(course.reference_object(component)):
            continue
        forms = [form for name, outer in outers.items() for fn in outer.body
                 if isinstance(fn, ast.FunctionDef) and (fn.name == component or spelled_like(component, fn.name))
                 and (form := _nested_form(name, outer, fn, targets[component])) is not None]
        if len(forms) == 1:
            out[component] = forms[0]
    return out


def nested_specs(course: Course, cells: Iterable[Cell]) -> dict[str, dict[str, Any]]:
    """`nested_functions` as a job carries it (dependencies.job's `as_nested`)."""
    return {name: form.spec() for name, form in nested_functions(course, cells).items()}


def _nested_form(name: str, outer: ast.FunctionDef, fn: ast.FunctionDef, contract: Params) -> Optional[NestedForm]:
    """`fn`, defined in the body of the top-level function `outer` (bound as `name`), as the contract's function, or
    None where it is not the same function at the top level: decorated, defined twice in `outer`, taking other
    parameters than the contract's, a default that is no literal, or a name of `outer`'s scope read (`symtable`)."""
    own = _student_params(fn, method=False)
    # every parameter of the contract's, its options too: a helper taking fewer does another job (helper-83's F10: a
    # `_sequence_mask(X, valid_lens)` masking the 3-D scores itself, graded as sequence_mask, was told to move it out)
    if fn.decorator_list or own is None or len(own.names) != len(contract.names) or fn.args.vararg or \
            fn.args.kwonlyargs or fn.args.kwarg or \
            sum(isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and s.name == fn.name
                for s in outer.body) != 1 or compare("", fn.name, "function", own, contract) is not None:
        return None
    try:
        defaults = tuple(ast.literal_eval(d) for d in fn.args.defaults)
        table = symtable.symtable(ast.unparse(outer), "<submission>", "exec")
    except (ValueError, SyntaxError, TypeError):
        return None
    scopes = [t for t in table.get_children() if t.get_name() == outer.name]
    inner = [t for t in scopes[0].get_children() if t.get_name() == fn.name] if len(scopes) == 1 else []
    if len(inner) != 1 or not isinstance(inner[0], symtable.Function) or inner[0].get_frees():
        return None
    return NestedForm(name, fn.name, defaults)


def _class_methods(cells: list[Cell]) -> dict[str, dict[str, ast.FunctionDef]]:
    """Per top-level class of the submission (by a name it is bound to), its methods as loading leaves
    them: those of its body, and those d2l 1.0's `@add_to_class(C)` adds to it later (the last one wins)."""
    classes: dict[ast.ClassDef, str] = {}
    for name, stmt in _definitions(cells).items():
        if isinstance(stmt, ast.ClassDef) and (stmt not in classes or name == stmt.name):
            classes[stmt] = name  # one name per class: its own where loading binds it
    out = {name: _body_methods(stmt) for stmt, name in classes.items()}
    for tree in cell_trees(tuple(cells)):
        for stmt in tree.body if tree is not None else []:
            if isinstance(stmt, ast.FunctionDef) and loader.adds_to_a_class(stmt):
                decorator = next(d for d in stmt.decorator_list if isinstance(d, ast.Call))
                cls = decorator.args[0] if len(decorator.args) == 1 else None
                if isinstance(cls, ast.Name) and cls.id in out:
                    out[cls.id][stmt.name] = stmt
    return out


def _body_methods(cls: ast.ClassDef) -> dict[str, ast.FunctionDef]:
    """The methods a class's body leaves bound: a name the body binds again after its `def` (`impl = ...`)
    is data, not a method (helper-57's attack read such class data as a method's `self.impl`)."""
    out: dict[str, ast.FunctionDef] = {}
    for stmt in cls.body:
        if isinstance(stmt, ast.FunctionDef):
            out[stmt.name] = stmt
        elif isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.AsyncFunctionDef, ast.ClassDef)):
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [getattr(stmt, "target", None)]
            names = {stmt.name} if isinstance(stmt, (ast.AsyncFunctionDef, ast.ClassDef)) else {
                n.id for t in targets if t is not None for n in ast.walk(t) if isinstance(n, ast.Name)}
            for name in names:
                out.pop(name, None)
    return out


def _without_self(fn: ast.FunctionDef, contract: Params) -> bool:
    """Whether `fn`, written in a class body without a decorator, takes the contract's parameters themselves and no
    `self` (the contract's functions pasted into a class: `def transpose_qkv(X, num_heads)`). Read on the class, as
    `Class.transpose_qkv(X, 2)`, it is the plain function (helper-78's F4: "not defined", 0 of 2 each)."""
    names = [p.arg for p in fn.args.posonlyargs + fn.args.args]
    return not fn.decorator_list and bool(names) and names[0] not in ("self", "cls") and \
        [same_name(n) for n in names] == [same_name(n) for n in contract.names]


def _method_form(cls: str, fn: ast.FunctionDef, methods: set[str], contract: Params) -> Optional[MethodForm]:
    """`fn`, a method of the class bound to `cls` (which has `methods`), called as the contract's
    function (`methods_as_functions`), or None where it cannot be."""
    static = any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in fn.decorator_list) or \
        _without_self(fn, contract)
    if contract.varargs or fn.args.vararg or fn.args.kwonlyargs or any(
            not (isinstance(d, ast.Name) and d.id == "staticmethod") and not loader.adds_to_a_class_decorator(d)
            for d in fn.decorator_list):
        return None
    own = _student_params(fn, method=not static)
    if own is None:
        return None
    first = [p.arg for p in fn.args.posonlyargs + fn.args.args][:1]
    self_name = first[0] if first and not static else None
    read: set[str] = set()
    bases = {id(n.value) for n in ast.walk(fn) if isinstance(n, ast.Attribute)}
    for node in ast.walk(fn):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == self_name:
            if isinstance(node.ctx, ast.Load) and node.attr not in methods:
                read.add(node.attr)
        elif isinstance(node, ast.Name) and node.id == self_name and id(node) not in bases:
            return None  # `self` itself handed on: the method needs the instance, not just values
    mine = {same_name(n) for n in own.names}
    from_self: list[tuple[str, str]] = []
    for param, default in zip(contract.names, contract.defaults):
        if same_name(param) in mine:
            continue
        attr = [a for a in sorted(read) if same_name(a) == same_name(param)]
        if len(attr) == 1 and default is None:
            from_self.append((param, attr[0]))
    if len(read) != len(from_self):
        return None  # it reads state of the instance the contract's arguments do not give
    rest = [p for p in contract.names if p not in dict(from_self)]
    required = sum(d is None for d in own.defaults)
    theirs = {same_name(p) for p in contract.names}
    if not required <= len(rest) <= len(own.names) or any(
            same_name(m) != same_name(p) and same_name(m) in theirs for m, p in zip(own.names, rest)):
        return None  # the method takes other parameters, or the contract's in another order
    return MethodForm(cls, fn.name, static, contract.names, tuple(from_self), tuple(zip(rest, own.names)))


def mismatches(course: Course, cells: Iterable[Cell]) -> dict[str, list[Mismatch]]:
    """Per component the submission defines (under its own name, or spelled otherwise: `renamed`), how
    its callables' parameters differ from the contract's."""
    cells = list(cells)
    found = _components_defined(course, cells)
    out: dict[str, list[Mismatch]] = {}
    for component, targets in contract(course).items():
        stmt = found.get(component)
        if stmt is None:
            continue
        for target, params in targets.items():
            method = target.partition(".")[2] or ("__init__" if isinstance(stmt, ast.ClassDef) else "")
            fn = _method(stmt, method, found) if isinstance(stmt, ast.ClassDef) else stmt
            if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            kind = "function" if not method else "constructor" if target == component else "method"
            student = _student_params(fn, bool(method))
            mismatch = compare(component, target, kind, student, params) if student is not None else None
            if mismatch is not None and mismatch.adapter is not None and mismatch.adapter.unpacked and \
                    isinstance(stmt, ast.ClassDef) and \
                    isinstance(_method(stmt, "__call__", found), (ast.FunctionDef, ast.AsyncFunctionDef)):
                # its own __call__ takes the tests' calls (helper-80's F1): they reach it as the contract makes them
                mismatch = replace(mismatch, adapter=None)
            if mismatch is not None:
                own_name = stmt.name if isinstance(stmt, ast.ClassDef) and stmt.name != component else ""
                out.setdefault(component, []).append(replace(mismatch, defined_as=own_name))
    return out


#: The name of the signature test (signature_tests).
SIGNATURE_TEST = N_("takes the contract's parameters in the contract's order")


def signature_test(component: str) -> str:
    """The function name of the test a component's signature mistake costs."""
    return f"test_{component}_contract_signature"


def signature_tests(found: dict[str, list[Mismatch]], components: Iterable[str]) -> list[TestOutcome]:
    """For each of `components` that the grader called by name (a mismatch with an `Adapter`), one
    failed structure test: what the mistake costs, whatever the rest of the component does (its text
    is the mistake's message, `attach`). A component called as the contract says has no such test."""
    return [TestOutcome(nodeid=f"signature::{name}", name=_(SIGNATURE_TEST), english=SIGNATURE_TEST, component=name, weight=1.0, public=True, kind="structure", function=signature_test(name))
            for name in dict.fromkeys(components) if any(m.adapter for m in found.get(name, []))]


#: The name of the naming test (naming_tests).
NAMING_TEST = N_("is defined under the contract's name")


def naming_test(component: str) -> str:
    """The function name of the test a component spelled otherwise costs."""
    return f"test_{component}_contract_name"


def naming_tests(renames: dict[str, str], components: Iterable[str]) -> list[TestOutcome]:
    """For each of `components` graded as a definition of another name (`renamed`), one failed structure
    test saying what was graded in its place: what the name costs, whatever the rest of the component does."""
    return [TestOutcome(nodeid=f"naming::{name}", name=_(NAMING_TEST), english=NAMING_TEST, component=name,
                        weight=1.0, public=True, kind="structure", function=naming_test(name),
                        output=_naming_message(name, renames[name]))
            for name in dict.fromkeys(components) if name in renames]


def _naming_message(name: str, theirs: str) -> str:
    if NESTED in theirs:  # a function inside another (nested_functions)
        outer, _locals, inner = theirs.partition(NESTED)
        return _("`{name}` is not defined in your submission: the grader graded your `{inner}`, written inside "
                 "`{outer}`, in its place, as the contract's function `{name}`. The contract fixes a top-level "
                 "function (docs/course-api.md): move it out of `{outer}`, name it `{name}`, and let `{outer}` "
                 "call it").format(name=name, inner=inner, outer=outer)
    if "." in theirs:  # a method (methods_as_functions)
        return _("`{name}` is not defined in your submission: the grader graded your method `{theirs}` in its "
                 "place, as the contract's function `{name}` (called on an instance of your class that holds only "
                 "the arguments the method reads from `self`). The contract fixes a top-level function "
                 "(docs/course-api.md): define `{name}` outside the class, and let the class call it").format(
                     name=name, theirs=theirs)
    return _("`{name}` is not defined in your submission: the grader graded your `{theirs}` in its place, as the "
             "contract's `{name}`. The contract fixes the name (docs/course-api.md): rename `{theirs}` to "
             "`{name}`, or add `{name} = {theirs}`").format(name=name, theirs=theirs)


#: The name of the test a stored attribute written as a method costs (attribute_tests).
ATTRIBUTE_TEST = N_("stores its attributes as the contract reads them")


def attribute_test(component: str) -> str:
    """The function name of the test a component's stored attribute written as a method costs."""
    return f"test_{component}_contract_attributes"


def method_attributes(course: Course, cells: Iterable[Cell]) -> dict[str, list[str]]:
    """Per contract class, what the test of its stored values (`attention_weights`, `P`: testing.STORED_VALUES) says
    of the definition graded for it (its own, or one spelled otherwise: `renamed`): each value it writes as a plain
    method (`def attention_weights(self)` without @property, which the tests read by calling: testing.attribute),
    and each value of the course's class it stores only under a name with one typing slip (`self.attention_weight
    = ...`, which the tests read in its place: testing.stored_spelling; helper-75's D3, helper-78's F8)."""
    from autograder.selfcheck.testing import (STORED_VALUES, method_attribute_message, misspelt_attribute_message,
                                              stored_spelling)
    cells = list(cells)
    definitions, renames, slips = _definitions(cells), renamed(course, cells), method_slips(course, cells)
    out: dict[str, list[str]] = {}
    for name in contract(course):
        cls = definitions.get(renames.get(name, name))
        if not isinstance(cls, ast.ClassDef):
            continue
        methods = _body_methods(cls)
        said = [method_attribute_message(n) for n in sorted(STORED_VALUES) if n in methods and not methods[n].decorator_list]
        stored = _stored_names(cls)
        in_body = {t.id for stmt in cls.body if isinstance(stmt, (ast.Assign, ast.AnnAssign))
                   for t in (stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]) if isinstance(t, ast.Name)}
        for value in sorted(_course_stores(course, name)):  # `attention_weights = property(...)`: defined (helper-79)
            defined = value in stored or value in methods or value in in_body
            theirs = stored_spelling(value, stored) if not defined else None
            if theirs is not None and theirs not in methods:
                said.append(misspelt_attribute_message(value, theirs))
        said += [_("your {cls} defines `{theirs}`, not the contract's method `{method}`: the grader called your "
                   "`{theirs}` in its place. Name it `{method}` (docs/course-api.md)").format(
                       cls=cls.name, theirs=theirs, method=method)
                 for method, theirs in sorted(slips.get(name, {}).items())]
        if said:
            out[name] = said
    return out


def method_slips(course: Course, cells: Iterable[Cell]) -> dict[str, dict[str, str]]:
    """Per contract class the submission defines (its own, or spelled otherwise: `renamed`), each method the contract
    calls (`forward`, `init_state`) that neither the class nor a base it defines has, but that its body defines with
    one typing slip or spelled otherwise (`init_states`): the method the child calls in its place (`child`'s
    `method_slips`), at the cost of the attribute test (`method_attributes`). Helper-83's F3: a decoder whose
    `init_states` is right inherited the given class's stub for init_state, and every test said "not implemented yet"
    (0 of 10)."""
    cells = list(cells)
    definitions, renames = _definitions(cells), renamed(course, cells)
    out: dict[str, dict[str, str]] = {}
    for name, targets in contract(course).items():
        cls = definitions.get(renames.get(name, name))
        if not isinstance(cls, ast.ClassDef):
            continue
        own = _body_methods(cls)
        for target in targets:
            method = target.partition(".")[2]
            if method in ("", "__init__") or _method(cls, method, definitions) is not None:
                continue
            like = [n for n in own if n != method and not n.startswith("__")
                    and (one_slip(method, n) or spelled_like(method, n))]
            if len(like) == 1:
                out.setdefault(name, {})[method] = like[0]
    return out


def _stored_names(cls: ast.ClassDef) -> set[str]:
    """The attributes the class's methods store on `self` (`self.<name> = ...`, also in a tuple or with +=)."""
    out: set[str] = set()
    for fn in _body_methods(cls).values():
        first = [p.arg for p in fn.args.posonlyargs + fn.args.args][:1]
        for node in ast.walk(fn):
            if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store) and \
                    isinstance(node.value, ast.Name) and first and node.value.id == first[0]:
                out.add(node.attr)
    return out


def _course_stores(course: Course, name: str) -> set[str]:
    """The stored values (testing.STORED_VALUES) that the course's class for the component `name` has."""
    from autograder.selfcheck.testing import STORED_VALUES
    source = _course_source(course.reference_object(name))
    if source is None:
        return set()
    return {v for v in STORED_VALUES if re.search(rf"\b(self\.{v}\b|def {v}\b)", source)}


def attribute_tests(slips: dict[str, list[str]], components: Iterable[str]) -> list[TestOutcome]:
    """For each of `components` whose stored values the tests read otherwise than the contract says (`method_attributes`:
    a method, a name with a typing slip), one failed structure test saying so: what the slip costs, whatever its
    values are (the tests read them by calling the method, or under the student's name)."""
    return [TestOutcome(nodeid=f"attributes::{name}", name=_(ATTRIBUTE_TEST), english=ATTRIBUTE_TEST, component=name,
                        weight=1.0, public=True, kind="structure", function=attribute_test(name),
                        output="\n".join(slips[name]))
            for name in dict.fromkeys(components) if name in slips]


def charged_tests(found: dict[str, list[Mismatch]], renames: dict[str, str],
                  components: Iterable[str], slips: Optional[dict[str, list[str]]] = None) -> list[TestOutcome]:
    """What a component's signature, name and interface cost, whatever the rest of it does: its signature tests,
    then its naming tests, then its attribute tests (`slips`: method_attributes) (the grading adds them to the
    suite's outcomes; the dependency rule counts them in every score)."""
    components = list(components)
    return signature_tests(found, components) + naming_tests(renames, components) + attribute_tests(slips or {}, components)


def attach(comp: ComponentScore, found: dict[str, list[Mismatch]]) -> bool:
    """Say the component's signature mistakes once, on its signature test if it has one (else its
    first failed test, a public one if one failed, as the student sees those first); True when one
    feeds wrong values to the student's code, so that no misconception may be named from its outputs."""
    own = found.get(comp.name, [])
    failed = [t for t in comp.tests if not t.passed]
    if not own or not failed:
        return False
    first = next((t for t in failed if t.function == signature_test(comp.name)), None) or \
        next((t for t in failed if t.public), failed[0])
    # the adapted calls ran the code: a test that runs it passed, or failed on something other than a crash
    helped = any(t.kind != "structure" and (t.passed or not t.crashed) for t in comp.tests)
    said = [m.message(helped) for m in own]
    first.output = "\n".join([first.output, *said]) if first.output else "\n".join(said)
    return misleading(found, comp.name)


def dropped_inputs(found: dict[str, list[Mismatch]], component: str) -> frozenset[str]:
    """The contract's inputs that the calls by name leave out of the component's code (`Mismatch.drops_inputs`)."""
    return frozenset(m.contract.names[j] for m in found.get(component, []) if m.drops_inputs and m.adapter
                     for j, name in enumerate(m.adapter.names) if name is None)


def feeds_wrong_values(found: dict[str, list[Mismatch]], component: str) -> bool:
    """Whether a signature mistake feeds the component's code another argument's values."""
    return any(m.wrong_values for m in found.get(component, []))


def misleading(found: dict[str, list[Mismatch]], component: str) -> bool:
    """Whether a signature mistake feeds the component's code another argument's values, or leaves out
    inputs the tests pass, so that no misconception may be named from its outputs (the grader's rule,
    and the catalogue's measure's): the signature finding names the mistake."""
    return feeds_wrong_values(found, component) or any(m.drops_inputs for m in found.get(component, []))
