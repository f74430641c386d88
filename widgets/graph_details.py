"""A graph node's details as text: the code that made it, its leaf tensor and ``.grad``, saved tensors, next nodes."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from app.i18n import join_words, tr


def shape_text(shape: Iterable[int] | None) -> str:
    """A tensor shape as the learner reads it: ``[1, 8]``, or ``scalar`` for ``[]``; empty when unknown."""
    if shape is None:
        return ""
    shape = list(shape)
    return f"[{', '.join(str(s) for s in shape)}]" if shape else tr("scalar")


def _values_text(values: Any) -> str:
    if values is None:
        return tr("values not sent")
    return np.array2string(np.asarray(values), precision=4, threshold=40, edgeitems=3, suppress_small=True)


def _tensor_text(summary: Mapping[str, Any], indent: str = "  ") -> list[str]:
    head = f"{indent}{shape_text(summary.get('shape'))} {summary.get('dtype', '')}".rstrip()
    if summary.get("variable"):
        head += "  " + tr("(variable {name})", name=summary["variable"])
    values = _values_text(summary.get("values")).splitlines()
    return [head] + [indent + "  " + line for line in values]


def _saved_text(entry: Mapping[str, Any]) -> list[str]:
    name = entry.get("name", "?")
    if entry.get("freed"):
        return [f"  {name}: {tr('freed by backward()')}"]
    if entry.get("error"):
        return [f"  {name}: {entry['error']}"]
    value = entry.get("value")
    if isinstance(value, Mapping) and "shape" in value:
        return [f"  {name}:"] + _tensor_text(value, "    ")
    if isinstance(value, list) and any(isinstance(v, Mapping) for v in value):
        lines = [f"  {name}:"]
        for item in value:
            lines += _tensor_text(item, "    ") if isinstance(item, Mapping) else [f"    {item!r}"]
        return lines
    return [f"  {name}: {value!r}"]


#: Sibling nodes named in the details before the rest are only counted.
SIBLINGS_NAMED = 4


def unknown_origin(origin: Mapping[str, Any]) -> tuple | None:
    """Who made the nodes, or between which lines, when the engine does not know the line (a key part).

    :func:`unknown_origin_text` words it, so a box keeps its key across a change of language."""
    if origin.get("line") is not None:
        return None
    by, at = origin.get("by"), origin.get("at")
    if by:
        return ("by", by, at)
    lines = origin.get("lines") or []
    if len(lines) == 2 and lines[0] and lines[1]:
        return ("between", lines[0], lines[1])
    return ("continuing",)


def unknown_origin_text(unknown: tuple) -> str:
    """What a box says for :func:`unknown_origin`'s answer, in the current language."""
    if unknown[0] == "by":
        _, by, at = unknown
        who = tr("the console") if by == "console" else f"{by}()" if by != "gradstep" else "GradStep"
        return tr("made by {who} at line {line}", who=who, line=at) if at else tr("made by {who}", who=who)
    if unknown[0] == "between":
        if unknown[1] == unknown[2]:  # continued from a pause at a line in a loop to the next pause there
            return tr("ran between two pauses at line {line}", line=unknown[1])
        return tr("ran between lines {first} and {last}", first=unknown[1], last=unknown[2])
    return tr("ran while continuing")


def leaf_origin_text(origin: Mapping[str, Any] | None) -> str:
    """Where a leaf's node came from: the line that first used the tensor, which is where autograd made the node
    (``w = torch.ones(3, requires_grad=True)`` makes a tensor, not a node); as :func:`origin_text` when unknown."""
    if not origin or origin.get("line") is None:
        return origin_text(origin)
    return _in_module(tr("first used by {where}: autograd makes a leaf's node when an operation first uses the tensor",
                         where=_where(origin)), origin)


def _where(origin: Mapping[str, Any]) -> str:
    """``line 72, pass 2`` (or ``line 72`` when the pass is not known) of an origin that names its line."""
    where = tr("line {line}", line=origin["line"])
    return tr("{where}, pass {n}", where=where, n=origin["pass"]) if origin.get("pass") is not None else where


def _in_module(text: str, origin: Mapping[str, Any]) -> str:
    """``text``, then the module that ran, when the origin names one."""
    return tr("{made}, in {module}", made=text, module=origin["module"]) if origin.get("module") else text


def origin_text(origin: Mapping[str, Any] | None, siblings: Sequence[Mapping[str, Any]] = ()) -> str:
    """Which code made a node: ``made by line 72, pass 2, in model.rnn``, or, made while stepping,
    ``made by `x_t @ W_xh` (Tensor.matmul) on line 72, pass 2, which also made UnsqueezeBackward0 and
    SqueezeBackward4``; empty when unknown.

    Parameters
    ----------
    origin : dict or None
        The node's origin, as the engine sends it.
    siblings : list of dict
        The other nodes its operation made in the same pass, in creation order.
    """
    if not origin:
        return ""
    unknown = unknown_origin(origin)
    if unknown == ("continuing",):
        text = tr("made while continuing (several lines ran; which one is not known)")
    elif unknown is not None and unknown[0] == "between" and unknown[1] == unknown[2]:
        text = tr("made while continuing, between two pauses at line {line} (which line is not known)",
                  line=unknown[1])
    elif unknown is not None and unknown[0] == "between":  # as its box says, with why no one line is named
        text = tr("made while continuing, between lines {first} and {last} (which line is not known)",
                  first=unknown[1], last=unknown[2])
    elif unknown is not None:
        text = unknown_origin_text(unknown)
    else:
        where = _where(origin)
        if origin.get("text"):
            text = tr("made by `{code}` ({op}) on {where}", code=" ".join(origin["text"].split()),
                      op=origin.get("op") or tr("an operation"), where=where)
        else:
            text = tr("made by {where}", where=where)
    text = _in_module(text, origin)
    if siblings:
        names = [sibling.get("name", "?") for sibling in siblings[:SIBLINGS_NAMED]]
        if len(siblings) > SIBLINGS_NAMED:
            names.append(tr("{n} more", n=len(siblings) - SIBLINGS_NAMED))
        text = tr("{made}, which also made {names}", made=text, names=join_words(names))
    return text


def node_details(node_id: int, node: Mapping[str, Any], names: Sequence[str],
                 next_nodes: Mapping[int, Mapping[str, Any]], siblings: Sequence[Mapping[str, Any]] = ()) -> str:
    """The details pane text for a node: what it is, what it saved for backward, where its gradients go.

    Parameters
    ----------
    node_id : int
    node : dict
        The engine's dict for the node.
    names : list of str
        The variables whose ``grad_fn`` the node is.
    next_nodes : dict
        The engine's dicts of the drawn nodes it points to, by id; a node not in it is named ``?``.
    siblings : list of dict
        The engine's dicts of the other drawn nodes the same operation made in the same pass.
    """
    kinds = {"leaf": tr("leaf (accumulates into .grad)"), "custom": tr("custom Function"), "op": tr("operation")}
    lines = [f"{node.get('name', '?')}  ·  {kinds.get(node.get('kind'), node.get('kind'))}  ·  "
             f"{tr('node {id}', id=node_id)}"]
    siblings = sorted(siblings, key=lambda sibling: (sibling.get("seq") is None, sibling.get("seq") or 0))
    origin = node.get("origin")
    made = leaf_origin_text(origin) if node.get("kind") == "leaf" else origin_text(origin, siblings)
    if made:
        lines.append(made)
    if names:
        lines.append(tr("grad_fn of: {names}", names=", ".join(names)))
    if node.get("shape") is not None:
        lines.append(tr("output shape: {shape}", shape=shape_text(node["shape"])))
    leaf = node.get("leaf")
    if node.get("kind") == "leaf":
        lines += ["", tr("leaf tensor {name}:", name=node.get("variable") or tr("(unnamed)"))]
        lines += _tensor_text(leaf) if leaf else ["  " + tr("not sent")]
        grad = leaf.get("grad") if leaf else None
        lines += ["", ".grad:"] + (_tensor_text(grad) if grad else ["  " + tr("None (no backward has reached it yet)")])
    saved = [line for entry in node.get("saved") or [] for line in _saved_text(entry)]
    lines += ["", tr("saved for backward:")] + (saved or ["  " + tr("nothing")])
    lines += ["", tr("next functions (where its gradients go):")]
    nexts = node.get("next") or []
    for position, (target, _) in enumerate(nexts):
        other = next_nodes.get(int(target))
        label = "?" if other is None else other.get("name", "?")
        if other is not None and other.get("variable"):
            label += f" ({other['variable']})"
        lines.append("  " + tr("input {n} → {label}", n=position, label=label) + "  ·  " + tr("node {id}", id=target))
    if not nexts:
        lines.append("  " + tr("none"))
    return "\n".join(lines)


def name_lines(name: str, width_of: Callable[[str], float], limit: float) -> list[str]:
    """A node's name as the lines of its box: whole on one line when it fits ``limit``, else broken in two
    between the words of its CamelCase (``BackwardHookFunction`` / ``Backward``) where the longer half is shortest.

    ``width_of`` measures a text. A name without such a break point stays on one line.
    """
    if width_of(name) <= limit:
        return [name]
    breaks = [i for i in range(1, len(name)) if name[i].isupper() and not name[i - 1].isupper()]
    if not breaks:
        return [name]
    best = min(breaks, key=lambda i: max(width_of(name[:i]), width_of(name[i:])))
    return [name[:best], name[best:]]


def code_spans(text: str) -> tuple[str, list[tuple[int, int]]]:
    """``text`` without its `` `code` `` backticks, and where each piece of code is in it (UTF-16 offsets, as Qt's
    text documents count), so a view shows code as code rather than the backticks."""
    pieces = text.split("`")
    if len(pieces) % 2 == 0:  # an odd backtick is not markup
        return text, []
    plain, spans, at = [], [], 0
    for index, piece in enumerate(pieces):
        length = len(piece.encode("utf-16-le")) // 2
        if index % 2 and piece:
            spans.append((at, at + length))
        plain.append(piece)
        at += length
    return "".join(plain), spans
