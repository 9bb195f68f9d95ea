"""Diagnosis by behaviour: which known misconception, if any, reproduces a student's wrong output.

The grading process records how the course's reference produced every value a test compares with
(`Recorder`: the function or module, its constructor arguments, its weights, train/eval mode, the
random state and the inputs). When a comparison fails, `diagnose` runs the catalogue's variants of
that component (the reference with one known mistake each) on exactly that call and compares each
variant's output with the student's. If the variants that reproduce it all belong to one family,
the feedback names that misconception and its fix; otherwise it names none. Everything here runs in
the trusted grading process on the catalogue's own code, never on a submission.
"""
from __future__ import annotations

import dataclasses
import functools
import importlib
import inspect
import json
from pathlib import Path
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from typing import Any, Optional

import torch

from autograder.catalogue import index
from autograder.config import Course
from autograder.selfcheck import symptoms
from autograder.selfcheck.i18n import N_, _
from autograder.selfcheck.symptoms import DIAGNOSIS_MARK, SIGNATURE_TABLES, conclude, text_hash, where_hash

__all__ = ["DEGENERATE", "DIAGNOSIS_MARK", "Call", "Diagnosis", "Recorder", "conclude", "conclude_component", "conclude_mistakes",
           "conclude_pair", "contradicted", "entry_family", "explain", "reproducing_without", "without_inputs",
           "families", "is_degenerate", "reproducing", "signature_candidates", "signature_entries",
           "text_hash", "where_entries", "where_hash"]


@dataclass(frozen=True)
class Diagnosis:
    """A misconception that reproduces the student's output (one family; `entries` are its members)."""

    family: str
    entries: tuple[str, ...]
    ways: tuple[tuple[str, str], ...]  # (bug, fix) in English of the members the code behaves like (`explain`)
    degenerate: bool = False  # a degenerate entry (code that ignores its inputs), not a realistic mistake
    # The mistake was seen in numbers the code computed: a comparison that failed on values, which replaying
    # it reproduced or whose text is its (testing.Mismatch.on_values). Only then does the gate get the floor
    # (ComponentScore.seen_in_values, scoring.shares): a crash's text or a structure check's can be written
    # without computing anything (helper-60, session 42).
    seen_in_values: bool = False

    def said(self) -> tuple[str, str]:
        """The misconception and its fix in the student's language, the members' words joined where
        several fail the tests alike (symptoms.either)."""
        return symptoms.either([_(bug) for bug, _fix in self.ways], [_(fix) for _bug, fix in self.ways])

    def message(self, component: str) -> str:
        """What a failure it explains gets appended, in the student's language (symptoms.diagnosis)."""
        return symptoms.diagnosis(component, *self.said())


@dataclass
class Call:
    """How the reference produced a value: enough to replay the call with another implementation."""

    component: str
    args: tuple[Any, ...]
    kwargs: dict[str, Any]
    path: tuple[Any, ...]  # where the value sits in the result: (), (0,), ("attention_weights",), ...
    ctor: Optional[tuple[tuple[Any, ...], dict[str, Any]]] = None  # a module's constructor arguments
    state: Optional[dict[str, torch.Tensor]] = None  # a module's parameters and buffers before the call
    training: bool = False
    rng: Optional[torch.Tensor] = None  # torch's random state before the call
    keep: list[Any] = field(default_factory=list)  # the recorded values, kept alive (ids stay unique)


def _clone(value: Any) -> Any:
    if isinstance(value, torch.Tensor):
        return torch.Tensor.clone(torch.Tensor.detach(value))
    if isinstance(value, (list, tuple)):
        return type(value)(_clone(v) for v in value)
    if isinstance(value, dict):
        return {k: _clone(v) for k, v in value.items()}
    return value


def _walk(value: Any, path: tuple[Any, ...] = (), depth: int = 0) -> list[tuple[tuple[Any, ...], torch.Tensor]]:
    """Every tensor in a call's result, with its path (tuples and lists, two levels deep)."""
    if isinstance(value, torch.Tensor):
        return [(path, value)]
    if isinstance(value, (list, tuple)) and depth < 2:
        return [p for i, v in enumerate(value) for p in _walk(v, path + (i,), depth + 1)]
    return []


def _follow(value: Any, path: tuple[Any, ...]) -> Any:
    for step in path:
        value = getattr(value, step) if isinstance(step, str) else value[step]
    return value


#: The first seed of the course's modules built in one test (`Recorder.construct`).
REFERENCE_SEED = 4321


class Recorder:
    """Wraps the course's reference so that every tensor it returns can be traced back to its call."""

    def __init__(self) -> None:
        self.calls: dict[tuple[Any, ...], Call] = {}
        self.built = 0  # the course's modules built in this test so far

    def construct(self, cls: type, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """`cls(*args, **kwargs)` with its random initial weights from a stream of its own: the test's
        n-th course module is seeded REFERENCE_SEED + n, and the grader's random state is as before. So
        the course's weights, which tests copy into the student's modules, do not depend on what drew
        from the process's stream before (in-process, the student's own code shares it; in the sandbox
        it does not): a grading in-process and in the sandbox compute the same expected values, and
        the catalogue's failure texts, made in-process, are those of a sandboxed grading."""
        seed, self.built = REFERENCE_SEED + self.built, self.built + 1
        with torch.random.fork_rng(devices=[]):
            torch.default_generator.manual_seed(seed)  # not torch.manual_seed: it also queues CUDA seeding
            return cls(*args, **kwargs)

    def given_class(self, cls: type) -> Callable[..., Any]:
        """A factory for a given module class of the course (`Seq2SeqEncoder`) built as `construct` builds."""
        def build(*args: Any, **kwargs: Any) -> Any:
            return self.construct(cls, args, kwargs)

        build.__name__ = build.__qualname__ = cls.__name__
        build.__doc__ = cls.__doc__
        return build

    @staticmethod
    def _key(tensor: torch.Tensor) -> tuple[Any, ...]:
        """The same key for a recorded tensor and the views a test makes of it (`.detach()`)."""
        return (tensor.data_ptr(), tuple(tensor.shape), tuple(tensor.stride()), tensor.dtype)

    def lookup(self, value: Any) -> Optional[Call]:
        """The call that produced `value`: the recorded tensor itself or a view of it, else (a test
        that copied it, `T.as_plain`) the latest recorded tensor equal to it in shape, dtype and values."""
        if not isinstance(value, torch.Tensor):
            return None
        found = self.calls.get(self._key(value))
        if found is not None:
            return found
        for call in reversed(list(self.calls.values())):
            if any(isinstance(t, torch.Tensor) and t.shape == value.shape and t.dtype == value.dtype
                   and t.device == value.device and torch.equal(t.detach(), value.detach()) for t in call.keep):
                return call
        return None

    @staticmethod
    def from_inputs(component: str, inputs: dict[str, Any]) -> Call:
        """A call of a function component rebuilt from the inputs a test shows (in argument order),
        for comparisons whose expected value was worked out by hand."""
        return Call(component, _clone(tuple(inputs.values())), {}, ())

    def _register(self, result: Any, make: Callable[[tuple[Any, ...]], Call]) -> None:
        for path, tensor in _walk(result):
            call = make(path)
            call.keep.append(tensor)  # alive, so no other tensor reuses its memory during the test
            self.calls[self._key(tensor)] = call

    def function(self, component: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(fn)
        def recorded(*args: Any, **kwargs: Any) -> Any:
            saved = (_clone(args), _clone(kwargs), torch.get_rng_state())
            result = fn(*args, **kwargs)
            self._register(result, lambda path: Call(component, saved[0], saved[1], path, rng=saved[2]))
            return result
        return recorded

    def module_class(self, component: str, cls: type) -> Callable[..., Any]:
        """A factory that builds the real reference module and records each of its forward calls."""
        recorder = self

        def build(*ctor_args: Any, **ctor_kwargs: Any) -> Any:
            module = recorder.construct(cls, ctor_args, ctor_kwargs)
            ctor = (_clone(ctor_args), _clone(ctor_kwargs))
            pending: dict[str, Any] = {}

            def before(mod: torch.nn.Module, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
                pending.update(args=_clone(args), kwargs=_clone(kwargs), rng=torch.get_rng_state(),
                               training=mod.training, state=_clone(dict(mod.state_dict())))

            def after(mod: torch.nn.Module, args: tuple[Any, ...], kwargs: dict[str, Any], output: Any) -> None:
                def make(path: tuple[Any, ...]) -> Call:
                    return Call(component, pending["args"], pending["kwargs"], path, ctor, pending["state"],
                                pending["training"], pending["rng"])
                recorder._register(output, make)
                weights = getattr(mod, "attention_weights", None)
                if weights is not None:
                    recorder._register(weights, lambda path: make(("attention_weights", *path)))

            module.register_forward_pre_hook(before, with_kwargs=True)
            module.register_forward_hook(after, with_kwargs=True)
            return module

        build.__name__ = build.__qualname__ = cls.__name__
        build.__doc__ = cls.__doc__
        return build


@dataclass(frozen=True)
class Variant:
    entry: index.Entry
    namespace: dict[str, Any]


@functools.cache
def variants(component: str, kind: str = "mutant") -> tuple[Variant, ...]:
    """The catalogue's entries of one kind (mutants, or degenerate code) of `component`, each loaded
    over the course's reference code."""
    from autograder import config as config_mod
    course = config_mod.default()
    out = []
    for entry in catalogue():
        if entry.kind != kind or entry.component != component:
            continue
        namespace = reference_globals(course, entry.assignment)
        try:
            exec(compile(entry.path.read_text(), str(entry.path), "exec"), namespace)
        except Exception:  # a catalogue entry that does not load is a kit bug, caught by the zoo's tests
            continue
        if component in namespace:
            out.append(Variant(entry, namespace))
    return tuple(out)


def reference_globals(course: Course, assignment_id: str) -> dict[str, Any]:
    """A fresh namespace with the reference of an assignment and of everything it builds on."""
    assignment = course.assignment(assignment_id)
    namespace: dict[str, Any] = {"__name__": f"__variant_{assignment_id}__"}
    names = [c.name for c in assignment.components]
    for name in course.closure(names) + names + list(assignment.given):
        namespace[name] = course.reference_object(name)
    module = importlib.import_module(assignment.solution)
    namespace.update({k: v for k, v in vars(module).items() if not k.startswith("__") and k not in namespace})
    return namespace


def replay(variant: Variant, call: Call) -> Optional[torch.Tensor]:
    """The variant's value for the recorded call, or None where the variant cannot make that call."""
    return replay_with(variant.namespace[call.component], call)


def replay_with(target: Any, call: Call) -> Optional[torch.Tensor]:
    """`target`'s value (a function, or a module class built as the call's was) for the recorded call."""
    try:
        if call.rng is not None:
            torch.set_rng_state(call.rng)
        if call.ctor is None:
            result = target(*_clone(call.args), **_clone(call.kwargs))
            return _follow(result, call.path)
        module = target(*_clone(call.ctor[0]), **_clone(call.ctor[1]))
        if call.state is not None:
            module.load_state_dict(_clone(call.state), strict=False)
        module.train(call.training)
        if call.rng is not None:
            torch.set_rng_state(call.rng)
        output = module(*_clone(call.args), **_clone(call.kwargs))
        return _follow(module if call.path[:1] == ("attention_weights",) else output, call.path)
    except Exception:
        return None


def _same(a: Any, b: torch.Tensor, rtol: float, atol: float) -> bool:
    if not isinstance(a, torch.Tensor) or a.shape != b.shape:
        return False
    a, b = a.detach().to(torch.float64), b.detach().to(torch.float64)
    return bool(torch.equal(a.isnan(), b.isnan()) and torch.allclose(a.nan_to_num(), b.nan_to_num(), rtol=rtol, atol=atol))


def family_of(entry: index.Entry) -> str:
    return getattr(entry, "family", "") or entry.name


#: The prefix of a degenerate entry's family among a failure's candidates: "degenerate:<family>".
DEGENERATE = "degenerate"

#: What the feedback says to do about code that ignores its inputs (degenerate entries have no fix of their own).
DEGENERATE_FIX = N_("compute the output from the inputs as the contract describes; until it does, the tests "
                  "that compare your code only with itself (shapes, invariances) earn nothing")


def degenerate_family(entry: index.Entry) -> str:
    return f"{DEGENERATE}:{family_of(entry)}"


def entry_family(entry: index.Entry) -> str:
    """An entry's family among a failure's candidates: a mistake's own, a degenerate version's "degenerate:<family>"."""
    return degenerate_family(entry) if entry.kind == DEGENERATE else family_of(entry)


def is_degenerate(family: str) -> bool:
    return family.startswith(f"{DEGENERATE}:")


def conclude_component(evidence: list[set[str]], replayed: list[set[str]],
                       compared: Optional[list[bool]] = None) -> tuple[Optional[str], bool]:
    """The family that explains a component's failures, if one does, and whether the component is
    degenerate. `evidence` holds each failure's candidate families, `replayed` those of them found
    by replaying the catalogue's variants on the failing call (behaviour, not failure text).

    Degenerate versions compete with the mistakes: uniform weights also reproduce a masked_softmax
    that fills with 0 on equal scores. A failure only degenerate versions reproduce is no evidence
    against a realistic mistake that explains the rest, provided that replaying the mistake itself
    reproduces one of the failures, and that it reproduces as many failures as any degenerate version
    does; a match of failure text alone does not outweigh it (code that returns zeros fails a training
    test with the same text as a w.item() mistake), and none when a degenerate version's replays reproduce
    every failure that some replay reproduced and the mistake's do not (a DotProductAttention with weights all 1 fails many tests
    with one query exactly as a softmax over the queries' axis does, and the others as only weights of 1
    do). Code a degenerate version reproduces, with no realistic mistake named, is degenerate.

    A realistic mistake is named only when it explains at least half of the failures the catalogue's
    variants were replayed on (`compared`: per failure, whether they were; default all), so that a
    replayed failure no variant of it reproduces is evidence against it. One that explains a few of
    many is a coincidence of small inputs (random weights fail a gradient test as detached weights
    do) or one of several mistakes, and naming it would give the floor's credit
    (grading/scoring.shares) as wrongly as it says the wrong words. A crash, or a failed
    self-consistency test, is no such evidence: there was no course's value to replay against."""
    every = [True] * len(evidence)
    compared = every if compared is None else compared

    def support(name: str, among: list[bool]) -> int:
        return sum(name in e for e, counted in zip(evidence, among) if counted)

    family = conclude(evidence)
    if family is None:
        realistic = conclude([{c for c in e if not is_degenerate(c)} for e in evidence])
        rivals = [c for c in set().union(*evidence) if is_degenerate(c)] if evidence else []
        # a degenerate version whose replays reproduce every failure that any replay reproduced, where the
        # mistake's do not, is what the code does (weights all 1 are a softmax over a one-query axis: helper-70)
        reproduced = [r for r in replayed if r]
        everywhere = any(all(c in r for r in reproduced) for c in rivals) and \
            not all((realistic or "") in r for r in reproduced)
        if realistic is not None and any(realistic in r for r in replayed) and not everywhere and \
                support(realistic, every) >= max((support(c, every) for c in rivals), default=0):
            family = realistic
    if family is not None and not is_degenerate(family) and 2 * support(family, compared) < sum(compared):
        family = None
    degenerate = is_degenerate(family) if family else any(is_degenerate(c) for e in evidence for c in e)
    return family, degenerate


def conclude_pair(evidence: list[set[str]], replayed: list[set[str]],
                  compared: Optional[list[bool]] = None) -> Optional[tuple[str, str]]:
    """The two realistic mistakes that together explain a component's failures where no one does
    (`conclude_component`), if exactly two do: every failure some mistake explains is explained by one
    of them, neither explains them all alone, no other pair does as much, a replay of one of them
    reproduced a failure, and together they explain at least half of the replayed failures (the rule for
    one). A failure only a degenerate version explains leaves it to `conclude_component`. Real code
    makes two mistakes at once (a table with base 1000 that is also added in place; session 43's
    chenkehan_pe): each costs what it touches, as one named mistake does (scoring.shares)."""
    if any(e and all(is_degenerate(c) for c in e) for e in evidence):
        return None
    informative = [{c for c in e if not is_degenerate(c)} for e in evidence if e]
    if len(informative) < 2:
        return None
    universe = sorted(set().union(*informative))
    covering = [(a, b) for i, a in enumerate(universe) for b in universe[i + 1:]
                if all(a in e or b in e for e in informative)
                and not all(a in e for e in informative) and not all(b in e for e in informative)]
    if len(covering) != 1:
        return None
    pair = covering[0]
    compared = [True] * len(evidence) if compared is None else compared
    explained = sum(bool(set(pair) & e) for e, counted in zip(evidence, compared) if counted)
    if not any(set(pair) & r for r in replayed) or 2 * explained < sum(compared):
        return None
    return pair


def conclude_mistakes(evidence: list[set[str]], replayed: list[set[str]],
                      compared: Optional[list[bool]] = None) -> tuple[tuple[str, ...], bool]:
    """What the diagnosis names for a component's failures, and whether the code is degenerate: the one
    family that explains them (`conclude_component`), else two realistic mistakes together
    (`conclude_pair`), else none. The one home of the rule: grading and the catalogue's measure use it."""
    family, degenerate = conclude_component(evidence, replayed, compared)
    if family is not None:
        return (family,), degenerate
    pair = None if degenerate else conclude_pair(evidence, replayed, compared)
    return (pair or ()), degenerate


def _inputs(target: Any) -> list[inspect.Parameter]:
    """The parameters a call passes: a function's, or a module class's forward's after `self`."""
    if isinstance(target, type) and issubclass(target, torch.nn.Module):
        return list(inspect.signature(target.forward).parameters.values())[1:]
    return list(inspect.signature(target).parameters.values())


def _default(parameter: inspect.Parameter) -> Any:
    return None if parameter.default is inspect.Parameter.empty else parameter.default


def _alike(a: Any, b: Any) -> bool:
    """Two defaults (None, numbers, strings) alike; anything else only as the same object."""
    plain = (type(None), bool, int, float, str)
    return a is b or (isinstance(a, plain) and isinstance(b, plain) and a == b)


def without_inputs(call: Call, reference: Any, names: frozenset[str]) -> Optional[Call]:
    """The call as code that does not take the inputs `names` makes it (a forward without valid_lens): each
    of them at the reference's default (None where it has none). None where the call passed none of them."""
    args, kwargs, changed = list(call.args), dict(call.kwargs), False
    for j, parameter in enumerate(_inputs(reference)):
        if parameter.name not in names:
            continue
        if j < len(args):
            args[j], changed = _default(parameter), changed or not _alike(args[j], _default(parameter))
        elif parameter.name in kwargs:
            kwargs[parameter.name], changed = _default(parameter), True
    return dataclasses.replace(call, args=tuple(args), kwargs=kwargs) if changed else None


def _keeps_defaults(target: Any, reference: Any, names: frozenset[str]) -> bool:
    """Whether a variant's parameters `names` have the reference's defaults: one whose mistake is a default
    (sequence_mask's value=-1e6) says nothing of code that has no such parameter."""
    try:
        ours = {p.name: _default(p) for p in _inputs(reference)}
        return all(_alike(_default(p), ours.get(p.name)) for p in _inputs(target) if p.name in names)
    except (TypeError, ValueError):  # no signature to read
        return False


def reproducing_without(call: Call, reference: Any, actual: torch.Tensor, rtol: float, atol: float,
                        dropped: frozenset[str], ignoring: frozenset[str]) -> dict[str, str]:
    """{entry id: family} that reproduce `actual` of code without the inputs `dropped` (its signature leaves
    them out: signatures.dropped_inputs), each replayed as such code is called (`without_inputs`): the
    entries that ignore exactly them (`ignoring`: their families, a degenerate version's among them) where the course's code so called gives
    `actual`, else the realistic mistakes that do (two mistakes at once: guohm230's softmax over the queries
    in a forward without valid_lens) and degenerate versions, but for those whose mistake is a default of a
    dropped input."""
    plain = without_inputs(call, reference, dropped)
    if plain is not None and (out := replay_with(reference, plain)) is not None and _same(out, actual, rtol, atol):
        return {e.id: entry_family(e) for e in catalogue() if e.component == call.component
                and entry_family(e) in ignoring}
    return reproducing(plain or call, actual, rtol, atol,
                       keep=lambda v: _keeps_defaults(v.namespace[call.component], reference, dropped))


def reproducing(call: Call, actual: torch.Tensor, rtol: float, atol: float,
                keep: Callable[[Variant], bool] = lambda v: True) -> dict[str, str]:
    """{entry id: family} of the catalogue's variants (those `keep` keeps) that reproduce `actual` on `call`:
    realistic mistakes by their family, degenerate versions (uniform weights, zeros, ...) as "degenerate:<family>"."""
    found = {}
    for kind, family in (("mutant", family_of), (DEGENERATE, degenerate_family)):
        found.update({v.entry.id: family(v.entry) for v in variants(call.component, kind)
                      if keep(v) and (out := replay(v, call)) is not None and _same(out, actual, rtol, atol)})
    return found


def explain(component: str, family: str, failures: Sequence[Collection[str]] = ()) -> Optional[Diagnosis]:
    """The catalogue's words for a family of misconceptions (or a degenerate family) of a component.

    A family's members are different ways of one mistake, each with words of its own (dropout on the
    values, on the output): the words are those of the member that reproduced the most of the failures
    (`failures`: per failure, the ids of the entries that reproduced it, by replay or by signature), and
    of every member that did as many, in name order (symptoms.most_alike) (the tests cannot tell them apart: the book's causal mask in training
    only and no mask at all fail every eval-mode test alike)."""
    degenerate = is_degenerate(family)
    kind, name = ("degenerate", family.split(":", 1)[1]) if degenerate else ("mutant", family)
    members = sorted((e for e in catalogue() if e.kind == kind and e.component == component
                      and family_of(e) == name), key=lambda e: e.name)
    if not members:
        return None
    alike = symptoms.most_alike([e.id for e in members], failures)
    told = [e for e in members if e.id in alike]
    ways = tuple((e.bug, DEGENERATE_FIX if degenerate else getattr(e, "fix", "")) for e in told)
    return Diagnosis(family, tuple(e.id for e in members), ways, degenerate)


# --- symptom signatures: the same evidence from the failure text, for every kind of test --------

#: Generated by `python -m autograder.catalogue.evaluate <assignment> --signatures`: for each test, the
#: hash of the exact failure text each catalogue mutant produces and the mutant's id. Derandomized tests
#: give a mistake the same smallest input and the same text, so a student's identical text is
#: evidence for that mutant's family in tests no replay covers (properties, dropout, gradients,
#: structure), and says which member of the family the code behaves like (`explain`). Its second table,
#: `where`, holds the same hashes without the measured values (symptoms.where_hash): where a mistake fails.
SIGNATURES = Path(__file__).resolve().parent / "signatures.json"


@functools.cache
def signature_tables(path: Path = SIGNATURES) -> dict[str, dict[str, dict[str, list[str]]]]:
    """{"tests": {"<component>::<test function>": {text hash: [entry ids]}}, "where": {...: {where hash: [entry
    ids]}}} (empty where not generated)."""
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return {name: data.get(name, {}) for name in SIGNATURE_TABLES} if isinstance(data, dict) else {}


def signatures(path: Path = SIGNATURES) -> dict[str, dict[str, list[str]]]:
    """{"<component>::<test function>": {text hash: [entry ids]}} (empty where not generated)."""
    return signature_tables(path).get("tests", {})


@functools.cache
def catalogue() -> tuple[index.Entry, ...]:
    """The catalogue's entries, read once per process: they do not change while a class is graded."""
    return tuple(index.entries())


@functools.cache
def _entries_by_id() -> dict[str, index.Entry]:
    return {e.id: e for e in catalogue()}


def _table_entries(table: str, component: str, function: str, text: str) -> set[str]:
    """The ids of the catalogue's mutants whose failure of this test has this text's digest in `table`."""
    digest = SIGNATURE_TABLES[table](text)
    return set(signature_tables().get(table, {}).get(f"{component}::{function}", {}).get(digest, []))


def signature_entries(component: str, function: str, text: str) -> set[str]:
    """The ids of the catalogue's mutants that fail this test with exactly this text."""
    return _table_entries("tests", component, function, text)


def where_entries(component: str, function: str, text: str) -> set[str]:
    """The ids of the catalogue's mutants that fail this test where this text says, with any values
    (symptoms.where_hash): evidence only for a mistake named on other evidence (session.name_misconceptions)."""
    return _table_entries("where", component, function, text)


def families(ids: Collection[str]) -> set[str]:
    """The families of the catalogue's entries `ids` (those it holds)."""
    known = _entries_by_id()
    return {family_of(known[i]) for i in ids if i in known}


def signature_candidates(component: str, function: str, text: str) -> set[str]:
    """The families of those mutants (`signature_entries`)."""
    return families(signature_entries(component, function, text))


def contradicted(component: str, names: Collection[str], passed: Collection[str]) -> set[str]:
    """The realistic families among `names` that the code's passed tests rule out: every catalogue entry of
    the family fails, in the signatures table, one of the test functions `passed` (comparisons of the
    outputs with the course's that the code passed in full: scoring.outputs_agreed). The tests are
    derandomized, so a mistake fails them for the student as for its entry: detached attention weights fail
    only the gradient test, and a softmax over the queries fails it with the same text at one query (the
    gradient is zero), but it fails every comparison that code passed."""
    table = signatures()
    out = set()
    for family in names:
        if is_degenerate(family):
            continue
        members = [e.id for e in catalogue() if e.kind == "mutant" and e.component == component and family_of(e) == family]
        if members and all(any(member in ids for f in passed for ids in table.get(f"{component}::{f}", {}).values())
                           for member in members):
            out.add(family)
    return out
