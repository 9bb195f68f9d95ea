"""The submission child: loads one submission for one component and answers the grader's calls.

It runs inside the sandbox, forked from the zygote. It holds the student's objects in a handle
table and sends back only data (see wire.py); it never learns what the tests check.
"""
from __future__ import annotations

import builtins
import inspect
import itertools
import os
import socket
import sys
import types
import warnings
from typing import Any, Optional

import torch

import loader
import wire
from environment import ENVIRONMENT
from procedures import LEFT_OUT, TEST_SEED, fit, say, seed_everything, use_words, vjp

MAX_ITEMS = 10_000  # generators and iterators are listed up to this many items
SUBMISSION = "__submission__"  # the module name of the submission's code


class Server:
    """Resolve handles, run calls, encode results."""

    def __init__(self, namespace: dict[str, Any], scaffold: Optional[dict[str, Any]] = None) -> None:
        self.objects: dict[int, Any] = {}
        self.ids: dict[int, int] = {}  # id(obj) -> handle id
        self.namespace = namespace
        self.scaffold = scaffold or {}  # given names: the tests get the course's

    def to_handle(self, obj: Any) -> wire.Handle:
        key = id(obj)
        hid = self.ids.get(key)
        if hid is None or self.objects.get(hid) is not obj:
            hid = len(self.objects) + 1
            self.objects[hid] = obj
            self.ids[key] = hid
        return wire.Handle(hid, type(obj).__name__, callable(obj))

    def resolve(self, h: wire.Handle) -> Any:
        if h.id not in self.objects:
            raise wire.WireError(f"unknown handle {h.id}")
        return self.objects[h.id]

    def encodable(self, value: Any, depth: int = 0) -> Any:
        """Turn iterators into lists, so that `named_parameters()` and friends come back as data."""
        if depth > 32:
            return value
        if isinstance(value, (types.GeneratorType, map, filter, zip)):
            items = []
            for i, item in enumerate(value):
                if i >= MAX_ITEMS:
                    break
                items.append(self.encodable(item, depth + 1))
            return items
        if type(value) in (list, tuple):
            return type(value)(self.encodable(v, depth + 1) for v in value)
        if isinstance(value, (tuple, list)) and not isinstance(value, torch.Size):  # a NamedTuple, a list subclass (a
            # decoder's state): read as the tuple or list it is, sent back as itself (remote.RemoteTuple, RemoteList);
            # its items as the container's own storage holds them, whatever the class says of them
            handle = self.to_handle(value)
            kind = tuple if isinstance(value, tuple) else list
            handle.items = kind(self.encodable(v, depth + 1) for v in kind.__iter__(value))  # type: ignore[arg-type]
            return handle
        if type(value) is dict:
            return {k: self.encodable(v, depth + 1) for k, v in value.items()}
        if isinstance(value, dict) and all(isinstance(k, str) for k in value):  # OrderedDict (state_dict)
            return {k: self.encodable(v, depth + 1) for k, v in value.items()}
        return value

    def handle(self, msg: dict[str, Any]) -> Any:
        op = msg["op"]
        if "seed_first" in msg:  # the grader's seed for what follows, sent along to save a round trip
            seed_everything(int(msg["seed_first"]))
        if op == "get":
            name = msg["name"]
            if name in self.scaffold:
                return self.scaffold[name]
            if name not in self.namespace:
                raise NameError(f"name '{name}' is not defined")
            return self.namespace[name]
        obj: Any = msg.get("obj")  # handles were resolved to objects while decoding
        if op == "getattr":
            return getattr(obj, msg["name"])
        if op == "call":
            if msg.get("name"):
                obj = getattr(obj, msg["name"])
            return obj(*msg.get("args", ()), **msg.get("kwargs", {}))
        if op == "call_return_args":
            args = list(msg.get("args", ()))
            result = obj(*args, **msg.get("kwargs", {}))
            return [result, args]
        if op == "vjp":
            return vjp(obj, msg.get("args", ()), msg.get("kwargs", {}), msg["grad_output"], msg["wrt"],
                       msg.get("output_index"))
        if op == "fit":
            return fit(obj, msg["batches"], str(msg["loss"]), float(msg["lr"]), int(msg["steps"]),
                       str(msg.get("optimizer", "adam")))
        if op == "describe":
            return describe(obj)
        if op == "release":
            for hid in msg["ids"]:
                self.objects.pop(hid, None)
            return None
        raise ValueError(f"unknown op {op!r}")


def describe(obj: Any) -> dict[str, Any]:
    """What the grader may know of an object without running it: kind, name and signature."""
    info: dict[str, Any] = {"type": type(obj).__name__, "callable": callable(obj),
                            "is_class": isinstance(obj, type)}
    try:
        sig = inspect.signature(obj)
        info["params"] = [[p.name, int(p.kind), p.default is not inspect.Parameter.empty]
                          for p in sig.parameters.values()]
    except (TypeError, ValueError):
        info["params"] = None
    info["is_module_class"] = isinstance(obj, type) and issubclass(obj, torch.nn.Module)
    return info


def install_modules(modules: dict[str, str]) -> None:
    """Create the importable helper modules (given code, handed-in dependencies) from source."""
    for name, source in modules.items():
        module = types.ModuleType(name)
        module.__dict__["__builtins__"] = builtins
        sys.modules[name] = module
        exec(compile(source, f"<course {name}>", "exec"), module.__dict__)


def _method(name: str) -> Any:
    """d2l's way of calling a tensor method as a function: `d2l.reshape(x, ...)` is `x.reshape(...)`."""
    return lambda x, *args, **kwargs: getattr(x, name)(*args, **kwargs)


#: d2l.torch's own short names for torch's (its "aliases": `d2l.zeros`, `d2l.arange`, `d2l.float32`), which
#: the book's code calls (the 0.17 package's PositionalEncoding builds its table with them).
D2L_TORCH_ALIASES: dict[str, Any] = {
    **{name: getattr(torch, name) for name in (
        "ones", "zeros", "tensor", "arange", "meshgrid", "sin", "sinh", "cos", "cosh", "tanh", "linspace", "exp",
        "log", "normal", "rand", "matmul", "int32", "float32", "stack", "abs", "eye")},
    "concat": torch.cat,
    # Where grading runs there is no GPU: d2l's device helpers give the CPU, as the book's do without one.
    "try_gpu": lambda i=0: torch.device("cpu"),
    "try_all_gpus": lambda: [torch.device("cpu")],
    "cpu": lambda: torch.device("cpu"),
    "numpy": lambda x, *args, **kwargs: x.detach().numpy(*args, **kwargs),
    **{alias: _method(name) for alias, name in (
        ("size", "numel"), ("reshape", "reshape"), ("to", "to"), ("reduce_sum", "sum"), ("reduce_mean", "mean"),
        ("argmax", "argmax"), ("astype", "type"), ("transpose", "t"))},
}


class _HyperParameters:
    """d2l 1.0's `d2l.HyperParameters`: `save_hyperparameters()` keeps the caller's arguments as attributes."""

    def save_hyperparameters(self, ignore: Any = ()) -> None:
        frame = inspect.currentframe()
        caller = frame.f_back if frame is not None else None
        arguments = dict(caller.f_locals) if caller is not None else {}
        skip = set(ignore) | {"self"}
        self.hparams = {k: v for k, v in arguments.items() if k not in skip and not k.startswith("_")}
        for key, value in self.hparams.items():
            setattr(self, key, value)


class _Module(torch.nn.Module, _HyperParameters):
    """d2l 1.0's `d2l.Module` as a model's definition uses it (the base of its MultiHeadAttention): an
    nn.Module that can save its hyperparameters. Its plotting and training hooks are the book's trainer's."""


def _add_to_class(cls: type) -> Any:
    """d2l 1.0's `@d2l.add_to_class(C)`: the decorated function becomes a method of C."""
    def add(function: Any) -> None:
        setattr(cls, function.__name__, function)
    return add


def _init_seq2seq(module: torch.nn.Module) -> None:
    """d2l 1.0's `d2l.init_seq2seq`, which its Seq2Seq decoders apply to themselves (`self.apply(d2l.init_seq2seq)`):
    Xavier-uniform weights for each nn.Linear and for the weight matrices of each nn.GRU (the tests load the
    course's weights afterwards; this only has to run)."""
    if type(module) is torch.nn.Linear:
        torch.nn.init.xavier_uniform_(module.weight)
    if type(module) is torch.nn.GRU:
        for name in module._flat_weights_names:
            weight = module._parameters[name]
            if "weight" in name and weight is not None:
                torch.nn.init.xavier_uniform_(weight)


#: d2l 1.0's base classes, decorator and weight initializer that its models' definitions use (not its trainer or plots).
D2L_1_0_BASES: dict[str, Any] = {"Module": _Module, "HyperParameters": _HyperParameters,
                                 "add_to_class": _add_to_class, "init_seq2seq": _init_seq2seq}


class D2LNames(types.ModuleType):
    """`d2l.torch` as the grader sees it: code in the book's style (`from d2l import torch as d2l`,
    then `d2l.masked_softmax(...)`) gets this course's names: the student's own where the grader
    uses them, the course's where it replaces them (the dependency rule), the given toolkit, and
    d2l's short names for torch's (`D2L_TORCH_ALIASES`) and the bases d2l 1.0's models derive from
    (`D2L_1_0_BASES`). The d2l package itself is not installed
    where grading runs."""

    def __init__(self, namespace: dict[str, Any], modules: list[str]) -> None:
        super().__init__("d2l.torch")
        self._namespace, self._modules = namespace, modules

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        if name in self._namespace:
            return self._namespace[name]
        for module_name in self._modules:
            module = sys.modules.get(module_name)
            if module is not None and not name.startswith("_") and hasattr(module, name):
                return getattr(module, name)
        if name in D2L_TORCH_ALIASES:
            return D2L_TORCH_ALIASES[name]
        if name in D2L_1_0_BASES:
            return D2L_1_0_BASES[name]
        raise AttributeError(say("d2l", name=name))


def install_d2l(namespace: dict[str, Any], modules: list[str]) -> None:
    """Make `import d2l`, `from d2l import torch as d2l` and `import d2l.torch as d2l` work (see D2LNames)."""
    package = types.ModuleType("d2l")
    package.__path__ = []  # a package, so that `import d2l.torch` works
    names = D2LNames(namespace, modules)
    package.torch = names  # type: ignore[attr-defined]
    sys.modules["d2l"], sys.modules["d2l.torch"] = package, names


#: torch's warnings about the arguments a test builds the student's module with, which say nothing of the
#: student's code and are not shown as its output: a one-layer GRU given the decoder's dropout (the tests
#: pass a dropout for the attention too; the book's decoder hands it to both).
ARGUMENT_WARNINGS = ("dropout option adds dropout after all but last recurrent layer",)


def load_submission(job: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """Install the handed-in modules, then load the submission's cells: (namespace, report)."""
    use_words(job.get("words"))
    for message in ARGUMENT_WARNINGS:
        warnings.filterwarnings("ignore", message=message, category=UserWarning)
    install_modules(job.get("modules", {}))
    deps = _deps(job)
    namespace: dict[str, Any] = {"__name__": SUBMISSION, "__builtins__": builtins}
    # Given code and dependencies are there from the start, as after `from attention_support import *`.
    namespace.update({name: deps[name] for name in job.get("prelude", []) if name in deps})
    install_d2l(namespace, list(job.get("modules", {})))
    report = loader.load([tuple(c) for c in job["cells"]], namespace)
    # A component the source never binds by the contract's name is graded as its definition spelled
    # otherwise (the grader's signatures.renamed; the naming test charges the name).
    for name, theirs in (job.get("alias") or {}).items():
        if isinstance(name, str) and isinstance(theirs, str) and theirs in namespace:
            namespace[name] = namespace[theirs]
    # A contract function written as a method of the student's class (the grader's signatures.MethodForm).
    for name, spec in (job.get("as_method") or {}).items():
        cls = _method_class(namespace, spec)
        if isinstance(name, str) and cls is not None:
            namespace[name] = function_of_method(name, cls, spec)
    # ... or written inside another of its functions (the grader's signatures.NestedForm).
    for name, spec in (job.get("as_nested") or {}).items():
        nested = function_of_nested(namespace, spec)
        if isinstance(name, str) and nested is not None:
            namespace[name] = nested
    # A contract method the student's class defines spelled otherwise (`init_states`), called in its place (the
    # grader's signatures.method_slips), before the course's classes are put in for the dependencies.
    for name, slips in (job.get("method_slips") or {}).items():
        cls = namespace.get(name) if isinstance(name, str) else None
        if not isinstance(cls, type) or not isinstance(slips, dict):
            continue
        for method, theirs in slips.items():
            if isinstance(method, str) and isinstance(theirs, str) and theirs in vars(cls) and method not in vars(cls):
                setattr(cls, method, vars(cls)[theirs])
    # No double jeopardy: the component's dependencies are the reference ones, whatever was loaded,
    # under the contract's names and under the student's own spelling of them (the grader's signatures.renamed).
    namespace.update({name: deps[name] for name in job.get("inject", []) if name in deps})
    for theirs, name in (job.get("stand_in_as") or {}).items():
        if isinstance(theirs, str) and isinstance(name, str) and name in job.get("inject", []) and name in deps:
            namespace[theirs] = deps[name]
    # ... and where the student wrote it as a method, which their class calls through `self` (signatures.MethodForm).
    for name, spec in (job.get("method_stand_in") or {}).items():
        cls = _method_class(namespace, spec)
        if name in job.get("inject", []) and name in deps and cls is not None:
            setattr(cls, spec["method"], method_of_function(deps[name], spec))
    read_as_written(namespace, job.get("called_as") or {})
    install_own = deps.get("_install_own")  # d2l 1.0's constructors for the student's own dependencies too
    if callable(install_own):
        install_own(namespace, [n for n in job.get("own", []) if isinstance(n, str)])
    return namespace, report


def _method_class(namespace: dict[str, Any], spec: Any) -> Optional[type]:
    """The student's class a method spec (signatures.MethodForm.spec) names, if loading bound it."""
    if not isinstance(spec, dict) or not isinstance(spec.get("method"), str):
        return None
    cls = namespace.get(str(spec.get("cls")))
    return cls if isinstance(cls, type) else None


def _pairs(spec: dict[str, Any], key: str) -> list[tuple[str, str]]:
    """A method spec's (contract parameter, the method's name for it) pairs under `key`."""
    return [(a, b) for a, b in spec.get(key, []) if isinstance(a, str) and isinstance(b, str)]


def function_of_method(name: str, cls: type, spec: dict[str, Any]) -> Any:
    """The contract's function `name` that calls the method `spec["method"]` of the student's `cls`: on an
    instance made without running the class's constructor that holds, under the method's names, the
    arguments it reads from `self` (`from_self`: [contract parameter, attribute]); the rest go to the
    method's own parameters (`positional`: [contract parameter, the method's], in its order)."""
    contract = [p for p in spec.get("contract", []) if isinstance(p, str)]
    from_self, positional = _pairs(spec, "from_self"), _pairs(spec, "positional")
    method, static = spec["method"], bool(spec.get("static"))

    def function(*args: Any, **kwargs: Any) -> Any:
        if len(args) > len(contract):
            raise TypeError(f"{name}() takes {len(contract)} positional arguments but {len(args)} were given")
        given = dict(zip(contract, args))
        for key, value in kwargs.items():
            if key not in contract or key in given:
                raise TypeError(f"{name}() got an unexpected or repeated argument '{key}'")
            given[key] = value
        absent = [p for p, _ in from_self if p not in given]
        if absent:
            raise TypeError(f"{name}() missing required argument: '{absent[0]}'")
        if static:
            target = getattr(cls, method)
        else:
            instance: Any = object.__new__(cls)
            for param, attr in from_self:
                object.__setattr__(instance, attr, given[param])
            target = getattr(instance, method)
        values: list[Any] = []
        for param, _mine in positional:  # by position while each one is given, then by the method's names
            if param not in given:
                break
            values.append(given.pop(param))
        mine = dict(positional)
        return target(*values, **{mine[p]: v for p, v in given.items() if p in mine})

    function.__name__ = function.__qualname__ = name
    return function


def function_of_nested(namespace: dict[str, Any], spec: Any) -> Optional[types.FunctionType]:
    """The function `spec["inner"]` defined in the body of the submission's function `spec["outer"]`, as a top-level
    function: made from its code (a constant of the enclosing function's code) with the submission's globals and
    the spec's defaults. None where loading bound no such function or its code reads the enclosing function's names
    (the grader checked the source; the code is checked again, as loading made it)."""
    if not isinstance(spec, dict) or not isinstance(spec.get("inner"), str):
        return None
    outer = namespace.get(str(spec.get("outer")))
    code = getattr(outer, "__code__", None) if isinstance(outer, types.FunctionType) else None
    found = [c for c in (code.co_consts if code is not None else ()) if isinstance(c, types.CodeType)
             and c.co_name == spec["inner"] and not c.co_freevars]
    if outer is None or len(found) != 1:
        return None
    defaults = spec.get("defaults")
    return types.FunctionType(found[0], outer.__globals__, spec["inner"],
                              tuple(defaults) if isinstance(defaults, list) and defaults else None)


def method_of_function(fn: Any, spec: dict[str, Any]) -> Any:
    """The inverse of `function_of_method`: a method, for the student's class, that calls the course's function
    `fn` with the contract's arguments: the method's own (`positional`) and those it reads from `self` (`from_self`)."""
    positional, from_self = _pairs(spec, "positional"), _pairs(spec, "from_self")
    contract_of = {m: p for p, m in positional}

    def given(args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
        out = {contract_of[m]: v for (_p, m), v in zip(positional, args)}
        out.update({contract_of.get(k, k): v for k, v in kwargs.items()})
        return out

    if spec.get("static"):
        return staticmethod(lambda *args, **kwargs: fn(**given(args, kwargs)))

    def method(self: Any, *args: Any, **kwargs: Any) -> Any:
        return fn(**given(args, kwargs), **{param: getattr(self, attr) for param, attr in from_self})

    return method


def read_as_written(namespace: dict[str, Any], called_as: dict[str, Any]) -> None:
    """The course's classes standing in for the student's (`called_as`: the grader's signatures.called_as,
    per class the student's positional parameters and the contract's parameter each one is) take a call
    from the student's own code by the student's signature: its arguments go to the course's class by the
    contract's names. A call from anywhere else (the course's code, the tests) is the contract's."""
    for name, spec in called_as.items():
        cls = namespace.get(name)
        if not isinstance(cls, type) or not isinstance(spec, dict):
            continue
        params, contract, sites = spec.get("params"), spec.get("contract"), spec.get("sites")
        if isinstance(params, list) and isinstance(contract, dict):
            _take_calls_as_written(cls, [p for p in params if isinstance(p, str)],
                                   {k: v for k, v in contract.items() if isinstance(k, str) and isinstance(v, str)},
                                   {(f"<{site[0]}>", *site[1:]) for site in sites or [] if isinstance(site, list)
                                    and len(site) == 5 and isinstance(site[0], str)
                                    and all(type(n) is int for n in site[1:])})
        aliases = spec.get("attributes")
        if isinstance(aliases, dict) and issubclass(cls, torch.nn.Module):
            _answer_to_their_names(cls, {k: v for k, v in aliases.items() if isinstance(k, str) and isinstance(v, str)})
        forward = spec.get("forward")
        if isinstance(forward, dict) and isinstance(forward.get("params"), list) and isinstance(
                forward.get("contract"), dict) and callable(vars(cls).get("forward")):
            unpacked = forward.get("unpacked")
            _take_forward_calls_as_written(cls, [p for p in forward["params"] if isinstance(p, str)],
                                           {k: v for k, v in forward["contract"].items()
                                            if isinstance(k, str) and isinstance(v, str)},
                                           [p for p in unpacked if isinstance(p, str)] if isinstance(unpacked, list) else [])


def _answer_to_their_names(cls: type, aliases: dict[str, str]) -> None:
    """`cls` (the course's, standing in) answering a read of one of the student's names for its submodules
    (`aliases`: signatures.submodule_aliases, `attention_1` for the course's `attention1`) with the course's
    submodule, where it has no attribute of that name itself. Nothing else changes: every other read, and
    every write, is the course's."""
    original = cls.__getattr__  # type: ignore[attr-defined]  # nn.Module's: parameters, buffers, submodules

    def __getattr__(self: Any, name: str) -> Any:
        try:
            return original(self, name)
        except AttributeError:
            if name not in aliases:
                raise
            return getattr(self, aliases[name])

    cls.__getattr__ = __getattr__  # type: ignore[attr-defined]  # in this child's own copy of the course's code


def _take_forward_calls_as_written(cls: type, params: list[str], contract: dict[str, str],
                                   unpacked: Optional[list[str]] = None) -> None:
    """`cls.forward` (the course's, standing in) taking a call from the submission's code (through
    `module(...)`: the first caller outside torch's Module machinery) that its own signature cannot take, by
    the student's forward's `params`, each passed on by its contract name; `unpacked`, the student's parameters
    that are the parts of the contract's last parameter, `state`, passed on as that one list (a learner's `blk(X, *state)`); any
    other call is the contract's."""
    original = vars(cls)["forward"]
    own = inspect.signature(original)

    def forward(self: Any, *args: Any, **kwargs: Any) -> Any:
        caller: Optional[types.FrameType] = sys._getframe(1)
        while caller is not None and caller.f_globals.get("__name__", "").startswith("torch."):
            caller = caller.f_back
        if caller is not None and caller.f_globals.get("__name__") == SUBMISSION and len(args) <= len(params) \
                and not _binds(own, self, *args, **kwargs):
            named = _by_contract_names(params, contract, args, kwargs) if not unpacked else \
                _packed(params, contract, unpacked, args, kwargs)
            if named is not None:  # else the course's own TypeError, below
                return original(self, **named)
        return original(self, *args, **kwargs)

    forward.__qualname__, forward.__doc__ = original.__qualname__, original.__doc__
    cls.forward = forward  # type: ignore[attr-defined]  # in this child's own copy of the course's code


def _take_calls_as_written(cls: type, params: list[str], contract: dict[str, str],
                           sites: frozenset[tuple[Any, ...]] | set[tuple[Any, ...]] = frozenset()) -> None:
    """`cls` (in place: its identity and `super()` calls stay) taking a call from the submission's code that
    its own signature cannot take by `params`, each passed on by its contract name (`contract`; one of
    `params` that it lacks is the student's own extra, which the course's class has no use for and does not
    get: a `training` flag; another keyword passes as it is; a contract parameter the student's class leaves out gets
    its neutral value, `procedures.LEFT_OUT`: no dropout). A call its own signature takes is the contract's, whoever makes it: a call in
    the contract's order means the contract's parameters, even where the student's class lists them in
    another (helper-50's review: reading it by the student's order charged a signature mistake twice, and
    let an unused class's signature redirect the book's `d2l.MultiHeadAttention(...)`), except at `sites`, the
    calls whose arguments the grader read as the student's order (signatures.own_order_sites: (cell file, line,
    end line, column, end column), the span of the call: `_call_site`)."""
    original = next(vars(c)["__init__"] for c in cls.__mro__ if "__init__" in vars(c))  # its own, or inherited
    own = inspect.signature(original)

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        caller = sys._getframe(1)
        if caller.f_globals.get("__name__") == SUBMISSION and len(args) <= len(params) and (
                (sites and _call_site(caller) in sites) or not _binds(own, self, *args, **kwargs)):
            named = _by_contract_names(params, contract, args, kwargs)
            if named is not None:  # else the course's own TypeError, below
                left_out = {key: value for key, value in LEFT_OUT.items() if key in own.parameters and key not in
                            named and own.parameters[key].default is inspect.Parameter.empty}
                original(self, **named, **left_out)
                return
        original(self, *args, **kwargs)

    __init__.__qualname__, __init__.__doc__ = original.__qualname__, original.__doc__
    cls.__init__ = __init__  # type: ignore[misc]  # in this child's own copy of the course's code


def _by_contract_names(params: list[str], contract: dict[str, str], args: tuple[Any, ...],
                       kwargs: dict[str, Any]) -> Optional[dict[str, Any]]:
    """A call by the student's signature (`params` in order, then keywords) as keywords of the contract's names
    (`contract`), without the student's extras the contract has no parameter for; None where a keyword repeats
    a positional argument."""
    given = _given(params, args, kwargs)
    if given is None:
        return None
    return {contract.get(key, key): value for key, value in given.items() if key in contract or key not in params}


def _packed(params: list[str], contract: dict[str, str], unpacked: list[str], args: tuple[Any, ...],
            kwargs: dict[str, Any]) -> Optional[dict[str, Any]]:
    """A call by the student's signature whose `unpacked` parameters are the parts of the contract's `state`, as
    keywords of the contract's names with those parts as one list under `state`; None where a part is missing or a
    keyword repeats a positional argument."""
    given = _given(params, args, kwargs)
    if given is None or any(part not in given for part in unpacked):
        return None
    parts = [given.pop(part) for part in unpacked]
    return {**{contract.get(key, key): value for key, value in given.items() if key in contract}, "state": parts}


def _given(params: list[str], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Optional[dict[str, Any]]:
    """A call's arguments by the student's parameter names (`params` in order, then keywords); None where a keyword
    repeats a positional argument."""
    given = dict(zip(params, args))
    if any(key in given for key in kwargs):
        return None
    given.update(kwargs)
    return given


def _call_site(frame: Any) -> tuple[Any, ...]:
    """The call a frame is making, as the grader's syntax tree spans it: (file, line, end line, column, end
    column) of the call expression (two calls on one line, or in two cells of the same label, differ). The
    position of the frame's current instruction, the call, is that expression's (Python 3.11's co_positions);
    before 3.11, the line alone (file, line, line, -1, -1), which no site has: nothing is read otherwise."""
    positions = getattr(frame.f_code, "co_positions", None)
    if positions is None:
        return (frame.f_code.co_filename, frame.f_lineno, frame.f_lineno, -1, -1)
    line, end, column, end_column = next(itertools.islice(positions(), frame.f_lasti // 2, None))
    return (frame.f_code.co_filename, line, end, column, end_column)


def _binds(signature: inspect.Signature, *args: Any, **kwargs: Any) -> bool:
    """Whether a call with these arguments binds to `signature`."""
    try:
        signature.bind(*args, **kwargs)
    except TypeError:
        return False
    return True


def scaffolding(job: dict[str, Any]) -> dict[str, Any]:
    """The given classes a test builds around the student's code (EncoderDecoder, Seq2SeqEncoder): the
    course's, even where the submission redefines them (its own code keeps its own)."""
    deps = _deps(job)
    return {name: deps[name] for name in job.get("scaffold", []) if name in deps}


def _deps(job: dict[str, Any]) -> dict[str, Any]:
    """The names of the job's installed module of given code and dependencies."""
    deps_module = sys.modules.get(job.get("deps_module") or "")
    return deps_module.__dict__ if deps_module is not None else {}


def uniform_process() -> None:
    """What the student's code reads of its process is the same in every mode: exactly ENVIRONMENT
    (what a mode or an import added is gone: bubblewrap's PWD, torch's TORCHINDUCTOR_CACHE_DIR where the
    user has a name) and a command line of the submission's name alone (not the fork server's path and
    flags). Code can still tell machines apart (their CPUs, the time), not the modes of one machine."""
    os.environ.clear()
    os.environ.update(ENVIRONMENT)
    sys.argv[:] = [SUBMISSION]


def serve(job: dict[str, Any], sock: socket.socket) -> None:
    """Load the submission, report, then answer calls until the grader hangs up."""
    uniform_process()
    seed_everything(int(job.get("seed", TEST_SEED)))
    torch.set_num_threads(1)
    namespace, report = load_submission(job)
    seed_everything(int(job.get("seed", TEST_SEED)))
    server = Server(namespace, scaffolding(job))
    wire.send(sock, {"ready": report})
    receiver = wire.Receiver(sock)
    while True:
        try:
            msg = receiver.recv(from_handle=server.resolve)
        except EOFError:
            return
        rid = msg.get("rid") if isinstance(msg, dict) else None  # echoed: the grader matches replies to requests
        returned = False
        try:
            result = server.handle(msg)
            returned = True  # from here on, a failure is about what the code returned
            wire.send(sock, {"ok": server.encodable(result), "rid": rid}, server.to_handle,
                      shapes=isinstance(msg, dict) and msg.get("shapes") is True)  # tensors as shapes only
        except BaseException as exc:  # student code may raise anything, even SystemExit
            if returned and isinstance(exc, wire.WireError):  # a reply wire.encode refuses (helper-82's F6)
                wire.send(sock, {"error": {"type": "WireError", "message": _message(exc), "returned": True}, "rid": rid})
                continue
            wire.send(sock, {"error": {"type": type(exc).__name__, "message": _message(exc),
                                       "traceback": loader.student_traceback(exc, error=False)}, "rid": rid})


def _message(exc: BaseException) -> str:
    try:
        return str(exc)[:2000]
    except BaseException:
        return "<unprintable exception>"
