"""Trusted procedures that run where the student's objects live: seeding, gradients, training.

One home for both places that hold a student's objects: the sandboxed child (runtime/child.py,
asked by the grader through messages) and the student's own kernel during a self-check
(selfcheck/testing.py, which ships a copy of this file). It imports torch and the standard
library only, because the sandbox sees nothing else of the kit.
"""
from __future__ import annotations

import linecache
import random
import re
import traceback
from typing import Any, Optional
from collections.abc import Callable, Sequence

import torch

#: The seed every test starts from, in the grader's process and where the student's code runs.
TEST_SEED = 0
#: Contract parameters of a course class that a student's own class may leave out, and what the course's class
#: standing in for it (the dependency rule) gets for one when the student's code calls it without: code whose
#: AddNorm takes no dropout applies none (helper-75's D7: `AddNorm(norm_shape)` kept the student's buggy AddNorm in
#: every block, 0 of 6 for a right DecoderBlock). The grader reads it (signatures.course_cannot_take), the child
#: fills it in (child._take_calls_as_written).
LEFT_OUT = {"dropout": 0.0}


def N_(message: str) -> str:
    """Mark a message for extraction: selfcheck/i18n.py's N_ (the sandbox's runtime imports nothing of the kit)."""
    return message


#: What the code where the student's objects live says (a crash site, load-time errors), in English. The
#: grader sends their translations with each job (dependencies.job), the self-check translates them itself:
#: `use_words`, then `say`.
WORDS = {
    "frame": N_("{where}, line {line}, in {function}"),
    "shapes": N_("shapes: {shapes}"),
    "contract": N_("{function} (its docstring): {doc}"),
    "where": N_("{where}, line {line}"),
    "syntax": N_("SyntaxError: {message} (line {line})"),
    "unparsable": N_("{error}: Python cannot parse this cell"),
    "at_load": N_("{error} raised at load time"),
    "d2l": N_("d2l.{name} is not part of this course: where your code is graded, d2l.<name> means this course's "
              "own names only; define {name} yourself or use the notebook's imports instead of d2l"),
}
_words = dict(WORDS)


def use_words(words: Any) -> None:
    """Say WORDS as `words` (their translations) from now on in this process."""
    if isinstance(words, dict):
        _words.update({k: v for k, v in words.items() if k in WORDS and isinstance(v, str)})


def say(key: str, **fields: Any) -> str:
    """WORDS[key] in the words in use, with `fields` filled in (in English if a translation cannot take them)."""
    try:
        return _words[key].format(**fields)
    except (KeyError, IndexError, ValueError):
        return WORDS[key].format(**fields)


def seed_everything(seed: int = TEST_SEED) -> None:
    """Seed torch, random and numpy (not torch.manual_seed: it also queues CUDA seeding, slowly)."""
    torch.default_generator.manual_seed(seed)
    random.seed(seed)
    try:
        import numpy
        numpy.random.seed(seed)
    except ImportError:  # pragma: no cover - numpy ships with the course's environment
        pass


def vjp(fn: Any, args: Sequence[Any], kwargs: dict[str, Any], grad_output: Any, wrt: Sequence[int],
        output_index: Optional[int]) -> list[Optional[torch.Tensor]]:
    """Gradients of <fn(*args)[output_index], grad_output> with respect to args[i] for i in wrt.

    fn gets non-leaf copies of the leaves (as a layer's output is in a model): an in-place write into
    an input is then legal for autograd and costs only the tests of inputs left unchanged."""
    args = list(args)
    leaves = {i: torch.Tensor.detach(args[i]).clone().requires_grad_(True) for i in wrt}
    for i in wrt:
        args[i] = leaves[i] * 1
    out = fn(*args, **kwargs)
    if output_index is not None:
        out = out[output_index]
    grads = torch.autograd.grad(out, [leaves[i] for i in wrt], grad_output, allow_unused=True)
    return [None if g is None else torch.Tensor.detach(g) for g in grads]


def fit(model: Any, batches: list[dict[str, Any]], loss: str, lr: float, steps: int,
        optimizer: str = "adam") -> list[float]:
    """A fixed training loop over `batches`; returns the loss per step (for feedback only).

    loss "mse": batch = {"inputs": [...], "target": tensor}; model(*inputs) is compared with target.
    loss "masked_ce": batch = {"inputs": [enc_X, enc_valid_len, dec_input, target, target_valid_len]}
    for an EncoderDecoder whose forward(enc_X, dec_input, enc_valid_len) returns (logits, state).
    The grader never scores these numbers: it re-measures the trained model itself.
    """
    if loss not in ("mse", "masked_ce"):
        raise ValueError(f"unknown loss {loss!r}")
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.SGD(params, lr=lr) if optimizer == "sgd" else torch.optim.Adam(params, lr=lr)
    losses: list[float] = []
    model.train()
    for step in range(int(steps)):
        batch = batches[step % len(batches)]
        opt.zero_grad()
        if loss == "mse":
            value = ((model(*batch["inputs"]) - batch["target"]) ** 2).mean()
        else:
            enc_X, enc_len, dec_in, target, tgt_len = batch["inputs"]
            logits, _ = model(enc_X, dec_in, enc_len)  # (B, T, vocab)
            mask = torch.arange(target.shape[1]).unsqueeze(0) < tgt_len.unsqueeze(1)  # (B, T)
            ce = torch.nn.functional.cross_entropy(logits.permute(0, 2, 1), target, reduction="none")
            value = (ce * mask).sum() / mask.sum()
        value.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        opt.step()
        losses.append(float(value.detach()))  # float() of a tensor that requires grad warns in the output
    model.eval()
    return losses


#: The student's frames a crash report shows (the innermost ones: where it broke, and what called it).
CRASH_FRAMES = 3


def crash_site(exc: BaseException, label: Callable[[str], Optional[str]], limit_chars: int = 2000) -> str:
    """Where the student's code broke, as they see it: for each of the student's frames (those whose
    file `label` names, e.g. "In [16]" or "cell 23"), "In [16], line 7, in forward" and the line; for the
    innermost, the shapes of the tensors named on that line and the function's docstring (the stub's
    contract). "" when no frame is the student's."""
    frames = [(f, n) for f, n in traceback.walk_tb(exc.__traceback__) if label(f.f_code.co_filename)]
    lines = []
    for frame, lineno in frames[-CRASH_FRAMES:]:
        code = frame.f_code
        source = linecache.getline(code.co_filename, lineno).strip()
        lines.append(say("frame", where=label(code.co_filename), line=lineno, function=code.co_name)
                     + (f": {source}" if source else ""))
    if not frames:
        return ""
    frame, lineno = frames[-1]
    shapes = _shapes_on_line(frame, linecache.getline(frame.f_code.co_filename, lineno))
    if shapes:
        lines.append("  " + say("shapes", shapes=shapes))
    doc = _docstring(frame)
    if doc:
        lines.append("  " + say("contract", function=frame.f_code.co_name, doc=doc))
    return "\n".join(lines)[-limit_chars:]


def _shapes_on_line(frame: Any, line: str) -> str:
    """"self.attention_weights (2, 4, 3), values (2, 4, 7)": the tensors among the frame's locals (and
    the attributes of `self`) that the line names."""
    shown = []
    for name in dict.fromkeys(re.findall(r"(?<![.\w])(?:self\.)?[A-Za-z_]\w*", line)):
        head, _, attribute = name.partition(".")
        try:
            value = frame.f_locals.get(head)
            if attribute:
                value = getattr(value, attribute, None)
            if isinstance(value, torch.Tensor):
                shown.append(f"{name} {tuple(torch.Tensor.size(value))}")
        except Exception:  # an object of the student's may refuse to be looked at
            continue
    return ", ".join(shown[:8])


def _docstring(frame: Any) -> str:
    """The first paragraph of the docstring of the function running in `frame` (a method: of its class)."""
    code, owner = frame.f_code, frame.f_locals.get("self")
    fn = getattr(type(owner), code.co_name, None) if owner is not None else frame.f_globals.get(code.co_name)
    if getattr(fn, "__code__", None) is not code:
        return ""
    doc = fn.__doc__ if isinstance(fn.__doc__, str) else ""
    return " ".join(doc.strip().split("\n\n")[0].split())[:400]
