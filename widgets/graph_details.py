"""A graph node's details as text: the code that made it, its leaf tensor and ``.grad``, saved tensors, next nodes."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np


def shape_text(shape: Iterable[int] | None) -> str:
    """A tensor shape as the learner reads it: ``[1, 8]``, or ``scalar`` for ``[]``; empty when unknown."""
    if shape is None:
        return ""
    shape = list(shape)
    return f"[{', '.join(str(s) for s in shape)}]" if shape else "scalar"


def _values_text(values: Any) -> str:
    if values is None:
        return "values not sent"
    return np.array2string(np.asarray(values), precision=4, threshold=40, edgeitems=3, suppress_small=True)


def _tensor_text(summary: Mapping[str, Any], indent: str = "  ") -> list[str]:
    head = f"{indent}{shape_text(summary.get('shape'))} {summary.get('dtype', '')}".rstrip()
    if summary.get("variable"):
        head += f"  (variable {summary['variable']})"
    values = _values_text(summary.get("values")).splitlines()
    return [head] + [indent + "  " + line for line in values]


def _saved_text(entry: Mapping[str, Any]) -> list[str]:
    name = entry.get("name", "?")
    if entry.get("freed"):
        return [f"  {name}: freed by backward()"]
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
    if origin.get("line") is None:
        text = "made while continuing (several lines ran; which one is not known)"
    else:
        text = "made by "
        if origin.get("text"):
            text += f"`{' '.join(origin['text'].split())}` ({origin.get('op') or 'an operation'}) on "
        text += f"line {origin['line']}"
        if origin.get("pass") is not None:
            text += f", pass {origin['pass']}"
    if origin.get("module"):
        text += f", in {origin['module']}"
    if siblings:
        names = [sibling.get("name", "?") for sibling in siblings[:SIBLINGS_NAMED]]
        if len(siblings) > SIBLINGS_NAMED:
            names.append(f"{len(siblings) - SIBLINGS_NAMED} more")
        text += f", which also made {', '.join(names[:-1]) + ' and ' if len(names) > 1 else ''}{names[-1]}"
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
    kinds = {"leaf": "leaf (accumulates into .grad)", "custom": "custom Function", "op": "operation"}
    lines = [f"{node.get('name', '?')}  ·  {kinds.get(node.get('kind'), node.get('kind'))}  ·  node {node_id}"]
    siblings = sorted(siblings, key=lambda sibling: (sibling.get("seq") is None, sibling.get("seq") or 0))
    made = origin_text(node.get("origin"), siblings)
    if made:
        lines.append(made)
    if names:
        lines.append(f"grad_fn of: {', '.join(names)}")
    if node.get("shape") is not None:
        lines.append(f"output shape: {shape_text(node['shape'])}")
    leaf = node.get("leaf")
    if node.get("kind") == "leaf":
        lines += ["", f"leaf tensor {node.get('variable') or '(unnamed)'}:"]
        lines += _tensor_text(leaf) if leaf else ["  not sent"]
        grad = leaf.get("grad") if leaf else None
        lines += ["", ".grad:"] + (_tensor_text(grad) if grad else ["  None (no backward has reached it yet)"])
    saved = [line for entry in node.get("saved") or [] for line in _saved_text(entry)]
    lines += ["", "saved for backward:"] + (saved or ["  nothing"])
    lines += ["", "next functions (where its gradients go):"]
    nexts = node.get("next") or []
    for position, (target, _) in enumerate(nexts):
        other = next_nodes.get(int(target))
        label = "?" if other is None else other.get("name", "?")
        if other is not None and other.get("variable"):
            label += f" ({other['variable']})"
        lines.append(f"  input {position} → {label}  ·  node {target}")
    if not nexts:
        lines.append("  none")
    return "\n".join(lines)
