"""A value summary as text: the one-line summaries, a tensor's tooltip and grad state, and what changed.

Summaries are the plain dicts :mod:`app.lesson.summaries` builds in the lesson process. The
views show these texts: a row of Variables (:func:`summary_line`, with the grad state in
columns of its own), a watch or a line of the console (``summary_line(..., alone=True)``, the
device and autograd state on the line), a gradient in the backward panel (:func:`value_text`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import numpy as np

from app.backward_drill import array_text
from app.i18n import N_, tr

#: A row of Variables previews this many of a tensor's first values after its statistics.
PREVIEW_VALUES = 4
#: A tensor shown alone with at most this many elements shows its values instead of μ/σ.
INLINE_VALUES = 4
#: A gradient with at most this many elements shows every value; a larger one its shape, μ and σ.
GRADIENT_VALUES = 8
#: Settings of an optimizer its line shows; the tooltip has them all.
OPTIMIZER_SETTINGS_SHOWN = 4
#: What ``.grad`` holds, by :func:`grad_state`, in words (the state is kept; the view says it).
GRAD_STATES = {"has grad": N_("has grad"), "none": N_("none"), "non-leaf": N_("non-leaf"),
               "retains grad": N_("retains grad")}

#: What a tensor's autograd field says of it in one sentence, by field and state; the other fields by field.
FIELD_TIPS = {
    ("requires_grad", True): N_("autograd records operations on this tensor so gradients can flow back to it"),
    ("requires_grad", False): N_("autograd does not track this tensor, so no gradient will flow back to it"),
    ("is_leaf", True): N_("created by you, not by an operation: backward() stores its gradient in .grad"),
    ("is_leaf", False): N_("computed by an operation: backward() passes its gradient on to the leaves instead of "
                           "keeping it"),
    ("grad_fn", True): N_("the autograd node that made this tensor; backward() starts here"),
    ("grad_fn", False): N_("no grad_fn: this tensor was not produced by a recorded operation"),
    ("grad", "has grad"): N_(".grad holds the gradient that backward() accumulated into this tensor"),
    ("grad", "none"): N_("no .grad yet: it appears once backward() reaches this leaf"),
    ("grad", "not tracked"): N_("no .grad: the tensor does not require grad, so backward() never reaches it"),
    ("grad", "non-leaf"): N_("non-leaf: .grad is not kept unless retain_grad() was called"),
    ("grad", "retains grad"): N_("retain_grad() was called: this non-leaf keeps its .grad after backward()"),
    "_version": N_("_version counts in-place changes; autograd uses it to catch a saved tensor modified before "
                   "backward()"),
    "device": N_("where the values live"),
    "dtype": N_("the type of each element"),
}

_DTYPE_PREFIXES = (("bfloat", "bf"), ("float", "f"), ("uint", "u"), ("int", "i"), ("complex", "c"))


def short_dtype(dtype: str) -> str:
    """``float32`` → ``f32``, ``bfloat16`` → ``bf16``; names without a width (``bool``) unchanged."""
    for long, short in _DTYPE_PREFIXES:
        match = re.fullmatch(long + r"(\d+.*)", dtype)
        if match:
            return short + match.group(1)
    return dtype


def number(value: Any, digits: int = 3) -> str:
    """One value of an array: a float or complex to ``digits`` significant digits, a bool as ``True``."""
    if isinstance(value, (bool, np.bool_)):
        return str(bool(value))
    if isinstance(value, (float, np.floating, complex, np.complexfloating)):
        return f"{value:.{digits}g}"
    return str(value.item() if isinstance(value, np.generic) else value)


def is_tensor(summary: Mapping[str, Any]) -> bool:
    """Whether a summary describes a tensor (or a Parameter)."""
    return "dtype" in summary and "shape" in summary


def grad_state(summary: Mapping[str, Any]) -> str:
    """``has grad``, ``none``, ``non-leaf`` or ``retains grad``: what ``.grad`` holds (a key of :data:`GRAD_STATES`).

    A non-leaf has a ``.grad`` only after ``retain_grad()`` and a backward() that reached it.
    """
    if summary.get("grad") is not None:
        return "has grad"
    if not summary["is_leaf"]:
        return "retains grad" if summary.get("retains_grad") else "non-leaf"
    return "none"


def grad_text(summary: Mapping[str, Any]) -> str:
    """What a tensor's grad column shows: the gradient's values when ``.grad`` holds one (``[1, -8, 36]``, or
    ``[64, 32] μ=0.01 σ=0.2``), else the state (a key of :data:`GRAD_STATES`, shown in words)."""
    grad = summary.get("grad")
    return value_text(grad) if grad is not None else grad_state(summary)


def grad_words(text: str) -> str:
    """A :func:`grad_text` as shown: a state in the interface's language, a gradient's values as they are."""
    return tr(GRAD_STATES[text]) if text in GRAD_STATES else text


def field_tip(field: str, summary: Mapping[str, Any]) -> str:
    """What a tensor's ``field`` (``shape``, ``requires_grad``, ``grad``, ``_version``…) says of it, in one sentence.

    '' for a field without one.
    """
    if field == "shape":
        return tr("the size of each dimension: {n} values, {bytes} bytes", n=f"{summary['numel']:,}",
                  bytes=f"{summary['nbytes']:,}")
    if field in ("requires_grad", "is_leaf"):
        return tr(FIELD_TIPS[field, bool(summary[field])])
    if field == "grad_fn":
        return tr(FIELD_TIPS[field, summary["grad_fn"] is not None])
    if field == "grad":
        state = grad_state(summary)
        tip = tr(FIELD_TIPS[field, "not tracked" if state == "none" and not summary["requires_grad"] else state])
        return f"{tip}\n{full_text(summary['grad'])}" if state == "has grad" else tip
    return tr(FIELD_TIPS[field]) if field in FIELD_TIPS else ""


def summary_line(summary: Mapping[str, Any], alone: bool = False) -> str:
    """A value's summary in one line.

    Parameters
    ----------
    summary
        The value's summary.
    alone
        Whether the line is all that is shown of the value (a watch, the console): a tensor's
        line then carries its device and autograd state too, compactly (``tensor[2,3] f32 μ=2
        σ=0 grad_fn=MulBackward0``), and any other value shows its repr. Otherwise the line is
        a Value cell beside columns of grad state: :func:`tensor_line`, a module's tensor
        count, a long container's item count.
    """
    if is_tensor(summary):
        return tensor_line(summary, alone)
    text = str(summary.get("repr", summary.get("type", "?" if alone else "")))
    if alone:
        return " ".join(text.split())
    if summary.get("module"):
        return module_line(summary)
    if summary.get("optimizer"):
        return optimizer_line(summary)
    if "items" in summary and ("\n" in text or len(text) > 100 or "tensor(" in text):
        return f"{summary['type']} · {item_count(summary.get('length', len(summary['items'])))}"
    # a repr of several lines on one: its first line alone said as little as "SGD ("
    return " ".join(line.strip() for line in text.splitlines() if line.strip())


def tensor_line(summary: Mapping[str, Any], alone: bool = False) -> str:
    """The lovely-tensors line of a tensor summary, e.g. ``tensor[2, 3] f32 μ=0.12 σ=1.03 [0.5, …]``.

    ``alone`` (see :func:`summary_line`) gives the compact line with device and autograd state,
    e.g. ``param[2] f32 [0.5, -1] requires_grad has .grad``.
    """
    if alone:
        return " ".join(_alone_parts(summary))
    shape = summary["shape"]
    values = summary.get("values")
    parts = [_head(summary, "Parameter", ", ")]
    if not shape and values is not None and np.size(values) == 1:
        parts.append(number(np.asarray(values).reshape(-1)[0]))
    parts.append(short_dtype(summary["dtype"]))
    layout = summary.get("layout", "strided")
    if "nnz" in summary:
        parts.append(f"{layout} nnz={summary['nnz']:,}")
    elif layout != "strided":
        parts.append(layout)
    why = summary.get("why_no_values")
    if why and "nnz" not in summary:  # a sparse tensor's entries are its values: the nnz says enough
        parts.append(f"· {why}")
        return " ".join(parts)
    parts.extend(_alarms(summary))
    if summary.get("numel", 0) == 0:
        parts.append("empty")
    elif shape and summary["dtype"] != "bool" and summary.get("mean") is not None:
        parts.append(_statistics(summary, "≈" if summary.get("stats_sampled") else "="))  # ≈: of a sample
    if shape and values is not None and not summary.get("sampled") and np.size(values):
        flat = np.asarray(values).reshape(-1)
        shown = ", ".join(number(v) for v in flat[:PREVIEW_VALUES])
        parts.append(f"[{shown}{', …' if flat.size > PREVIEW_VALUES else ''}]")
    return " ".join(parts)


def _alone_parts(summary: Mapping[str, Any]) -> list[str]:
    """The compact line's parts: kind and shape, dtype, device, values or μ/σ, alarms, autograd state."""
    shape = summary["shape"]
    parts = [_head(summary, "param", ","), short_dtype(summary["dtype"])]
    if summary.get("device", "cpu") != "cpu":
        parts.append(summary["device"])
    values = summary.get("values")
    if summary["numel"] == 0:
        parts.append("empty")
    elif values is not None and summary["numel"] <= INLINE_VALUES and not summary.get("sampled"):
        flat = [number(v, 4) for v in np.asarray(values).reshape(-1)]
        parts.append(flat[0] if not shape else "[" + ", ".join(flat) + "]")
    elif summary.get("mean") is not None:
        parts.append(_statistics(summary, "=", 4))
    parts.extend(_alarms(summary))
    if summary.get("grad_fn"):
        parts.append(f"grad_fn={summary['grad_fn']}")
    elif summary.get("requires_grad"):
        parts.append("requires_grad")
    if summary.get("grad") is not None:
        parts.append(tr("has .grad"))
    return parts


def _head(summary: Mapping[str, Any], parameter: str, separator: str) -> str:
    """``tensor[2, 3]``, ``Parameter[4]``, or ``tensor`` for a scalar; ``parameter`` names a Parameter."""
    kind = parameter if summary.get("is_parameter") or summary.get("type") == "Parameter" else "tensor"
    shape = summary["shape"]
    return f"{kind}[{separator.join(map(str, shape))}]" if shape else kind


def _statistics(summary: Mapping[str, Any], eq: str, digits: int = 3) -> str:
    return f"μ{eq}{summary['mean']:.{digits}g} σ{eq}{summary['std']:.{digits}g}"


def _alarms(summary: Mapping[str, Any]) -> list[str]:
    """``NaN×3``, ``Inf×1``: the values that are not finite, counted."""
    return [f"{flag}×{summary[key]}" for flag, key in (("NaN", "nan"), ("Inf", "inf")) if summary.get(key)]


def module_line(summary: Mapping[str, Any]) -> str:
    """``Linear(in_features=3, …) · 2 tensors, 8 values``, and ``, eval mode`` when it is in eval mode."""
    params = summary.get("parameters", [])
    count = sum(int(np.prod(p["shape"], dtype=np.int64)) for p in params)
    head = summary.get("repr", summary["type"]).split("\n", 1)[0]
    head = summary["type"] if head.endswith("(") else head
    mode = "" if summary.get("training", True) else tr(", eval mode")
    values = tr("1 value") if count == 1 else tr("{n} values", n=f"{count:,}")
    if summary.get("parameters_cut"):
        return f"{head} · " + tr("{tensors}, the first {n} listed ({values})", values=values, n=len(params),
                                 tensors=tensor_count(summary["parameter_count"])) + mode
    return f"{head} · " + tr("{tensors}, {values}", tensors=tensor_count(len(params)), values=values) + mode


def optimizer_line(summary: Mapping[str, Any]) -> str:
    """``SGD(lr=0.1, momentum=0, dampening=0, weight_decay=0, …) · 2 tensors``: its first group's settings."""
    read = summary["optimizer"]
    settings = [f"{key}={value}" for key, value in read["settings"][:OPTIMIZER_SETTINGS_SHOWN]]
    more = ", …" if len(read["settings"]) > OPTIMIZER_SETTINGS_SHOWN else ""
    count = tensor_count(read["tensors"])
    if read["groups"] > 1:
        count = tr("{n} parameter groups, {tensors}", n=read["groups"], tensors=count)
    return f"{summary['type']}({', '.join(settings)}{more}) · {count}"


def item_count(n: int) -> str:
    """``1 item``, ``6 items``, in the interface's language."""
    return tr("1 item") if n == 1 else tr("{n} items", n=f"{n:,}")


def tensor_count(n: int) -> str:
    """``1 tensor``, ``1,000 tensors``, in the interface's language."""
    return tr("1 tensor") if n == 1 else tr("{n} tensors", n=f"{n:,}")


def value_tip(summary: Mapping[str, Any]) -> str:
    """What a tensor's one line leaves out, a sentence a line: full statistics, NaN and Inf explained, sampling."""
    lines = []
    if summary.get("is_parameter"):
        lines.append(tr("a Parameter: a tensor a module registered as something to learn"))
    if summary.get("min") is not None:
        lines.append(tr("min {min}   max {max}   mean μ {mean}   std σ {std}", min=f"{summary['min']:.6g}",
                        max=f"{summary['max']:.6g}", mean=f"{summary['mean']:.6g}", std=f"{summary['std']:.6g}"))
    if summary.get("nan"):
        lines.append(tr("{n} values are NaN (not a number): a 0/0, inf − inf or log of a negative "
                        "happened upstream", n=summary["nan"]))
    if summary.get("inf"):
        lines.append(tr("{n} values are infinite: something overflowed or divided by zero", n=summary["inf"]))
    if summary.get("why_no_values"):
        lines.append(summary["why_no_values"])
    if summary.get("stats_sampled"):
        lines.append(tr("large view: statistics (≈) come from a sample of its values, the preview is left out"))
    elif summary.get("sampled"):
        lines.append(tr("large tensor: statistics cover every value, the preview is left out"))
    return "\n".join(lines)


def result_text(result: Mapping[str, Any]) -> str:
    """An evaluation result (``{"ok", "value" | "error"}``) in one line: its value alone, or the error."""
    if result.get("ok"):
        value = result.get("value")
        return "(no value)" if value is None else summary_line(value, alone=True)
    error = result.get("error") or {}
    return f"{error.get('type', 'Error')}: {error.get('message', '')}"


def value_text(summary: Mapping[str, Any] | None) -> str:
    """A tensor summary's values in one short line: ``[1, 2]``, ``3.5``, or ``[64, 32] μ=0.01 σ=0.2``."""
    if summary is None:
        return "None"
    values = summary.get("values")
    shape = list(summary.get("shape", []))
    if values is not None and summary.get("numel", 0) <= GRADIENT_VALUES and not summary.get("sampled"):
        return array_text(values)
    head = f"[{', '.join(map(str, shape))}]"
    if summary.get("mean") is None:
        return head
    return f"{head} μ={number(summary['mean'], 4)} σ={number(summary['std'], 4)}"


def full_text(summary: Mapping[str, Any] | None) -> str:
    """A tensor summary's values, up to a few hundred of them, for a tooltip."""
    if summary is None or summary.get("values") is None:
        return value_text(summary)
    text = np.array2string(np.asarray(summary["values"]), separator=", ", threshold=200,
                           formatter={"float_kind": lambda v: number(v, 4)})
    return f"{text}\n{tr('(a sample of the values)')}" if summary.get("sampled") else text


def _same_values(old: Mapping[str, Any], new: Mapping[str, Any]) -> bool:
    keys = ("shape", "dtype", "sampled", "min", "max", "mean", "nan", "inf")
    if any(old.get(k) != new.get(k) for k in keys):
        return False
    a, b = old.get("values"), new.get("values")
    if a is None or b is None:
        return a is b
    a, b = np.asarray(a), np.asarray(b)
    return bool(np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"))


def _tensor_change(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[str]:
    changes = []
    if old.get("id") == new.get("id") and old["version"] != new["version"]:
        changes.append(tr("changed in place (_version {version})", version=new["version"]))
    elif not _same_values(old, new):
        changes.append(tr("new value"))
    if old["grad_fn"] != new["grad_fn"]:
        changes.append(tr("new grad_fn: {grad_fn}", grad_fn=new["grad_fn"]))
    if old["requires_grad"] != new["requires_grad"]:
        changes.append(tr("requires_grad turned on") if new["requires_grad"] else tr("requires_grad turned off"))
    old_grad, new_grad = old.get("grad"), new.get("grad")
    if old_grad is None and new_grad is not None:
        changes.append(tr(".grad appeared"))
    elif old_grad is not None and new_grad is None:
        changes.append(tr(".grad was cleared"))
    elif old_grad is not None and new_grad is not None and old_grad is not new_grad \
            and not _same_values(old_grad, new_grad):
        changes.append(tr(".grad changed"))
    return changes


def describe_change(old: Mapping[str, Any] | None, new: Mapping[str, Any], child: bool = False) -> str:
    """What changed between two summaries of the same name, in words; '' when nothing did.

    ``child``: the summaries are of an item or a parameter inside a variable, not of a name.
    """
    if old is None:
        return tr("new item") if child else tr("new name")
    if old is new:
        return ""
    if old.get("type") != new.get("type"):
        return tr("new value (now a {type})", type=new.get("type"))
    if is_tensor(new):
        return "; ".join(_tensor_change(old, new))
    if new.get("module"):
        return "" if old.get("training") == new.get("training") else \
            tr("switched to {mode} mode", mode="train()" if new.get("training") else "eval()")
    if "items" in new:
        if old.get("length") != new.get("length"):
            return tr("now 1 item") if new.get("length") == 1 else tr("now {n} items", n=new.get("length"))
        return "" if new["items"] or old.get("repr") == new.get("repr") else tr("new value")
    if new.get("type") == "PackedSequence":
        return ""
    return "" if (old.get("repr"), old.get("value")) == (new.get("repr"), new.get("value")) else tr("new value")
