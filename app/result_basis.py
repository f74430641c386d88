"""Whether a Backward-panel result still matches the lesson: what it rests on, checked at each later pause.

Plain Python (the panel shows the verdict): :class:`ResultBasis` records the nodes a preview,
``backward()`` or ``autograd.grad`` walked, the root it ran on and the ``.grad`` values it
showed, and says why a later pause no longer matches them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from app.i18n import N_, join_words, tr

#: What a result is called in the sentence saying it was cleared, and what to do next.
#: (English msgids; ``backward()`` and ``autograd.grad`` are code and stay as they are).
STALE_WHAT = {"preview": (N_("preview"), N_("Preview again.")),
              "backward": ("backward()", N_("Preview to see the gradients of the graph as it is now.")),
              "grad": ("autograd.grad", N_("Compute it again."))}

__all__ = ["STALE_WHAT", "ResultBasis", "grad_key", "has_freed", "join_words", "nodes_text", "tensor_in"]


def grad_key(summary: Mapping[str, Any] | None) -> tuple | None:
    """Which ``.grad`` a summary shows: the tensor and its version, so an in-place change counts."""
    return None if summary is None else (summary.get("id"), summary.get("version"))


def tensor_in(variables: Mapping[str, Any], name: str) -> Mapping[str, Any] | None:
    """The summary of the tensor ``name`` (``x``, or ``model.weight`` for a module's parameter)."""
    summary = variables.get(name)
    if summary is not None:
        return summary if summary.get("type") in ("Tensor", "Parameter") else None
    head, _, rest = name.partition(".")
    for parameter in (variables.get(head) or {}).get("parameters", []) if rest else []:
        if parameter.get("name") == rest:
            return parameter.get("summary")
    return None


def has_freed(node: Mapping[str, Any]) -> bool:
    return any(entry.get("freed") for entry in node.get("saved", []))


@dataclass
class ResultBasis:
    """What a shown result rests on, to tell whether a later pause still matches it.

    A result is stale, and the panel clears it, when a later pause shows that

    - the graph lost a node its replay walked (the lesson rebuilt the graph: a new loss, a
      new iteration), so the replay and its highlight point at nodes that are gone;
    - the root variable no longer names the tensor it was run on, or that tensor's
      ``grad_fn`` changed (an in-place operation on it), or the variable is gone;
    - for a preview or a backward: the ``.grad`` of a tensor in its table is not the
      ``.grad`` it showed (a preview: the one when it was computed; a backward: its
      "after"), because a backward, ``zero_grad`` or assignment changed it since;
    - for a preview only: the saved tensors of a node it walked were freed since, so the
      backward it previews would now fail.

    Anything else keeps the result: new variables, changed values of tensors it does not
    describe, new nodes added beside or above its graph. ``torch.autograd.grad`` results
    never described a ``.grad``, and a backward or autograd.grad that freed its own graph
    says so itself, so neither is judged on ``.grad`` or freed saved tensors. What the panel
    cannot see (an expression root such as ``(x * w).sum()`` has no variable, its nodes are
    never in the frame's graph) cannot make a result stale.
    """

    kind: str
    root: str | None
    nodes: frozenset[int]
    root_node: int | None = None
    root_tensor: tuple | None = None
    grads: dict[str, tuple | None] | None = None
    freed: frozenset[int] = frozenset()
    earlier: bool = False

    def after_snapshot(self, variables: Mapping[str, Any]) -> str | None:
        """Why a pause with these ``vars`` no longer matches the result, or None."""
        what = tr(STALE_WHAT[self.kind][0])
        root = self.root
        if self.root is not None and self.root_tensor is not None:
            summary = tensor_in(variables, self.root)
            if summary is None:
                return tr("{root} is no longer a tensor of this frame.", root=root)
            if summary.get("id") != self.root_tensor[0]:
                return tr("{root} was computed again since this {what}: it is a new tensor with its own graph.",
                          root=root, what=what)
            if summary.get("grad_fn") != self.root_tensor[1]:
                return tr("{root}'s grad_fn changed since this {what} (it is now {grad_fn}).", root=root, what=what,
                          grad_fn=summary.get("grad_fn"))
        changed = []
        for name, key in (self.grads or {}).items():
            summary = tensor_in(variables, name)
            if summary is not None and grad_key(summary.get("grad")) != key:
                changed.append(f"{name}.grad")
        return tr("{names} changed since this {what}.", names=join_words(changed), what=what) if changed else None

    def after_graph(self, removed: Sequence[int], roots: Mapping[str, int] | None,
                    updated: Sequence[Mapping[str, Any]]) -> str | None:
        """Why a graph change (node ids removed, the roots now, nodes updated) makes the result stale, or None."""
        what = tr(STALE_WHAT[self.kind][0])
        gone = self.nodes.intersection(removed)
        if gone:
            return tr("The graph changed since this {what}: {nodes} it walked are no longer in it.", what=what,
                      nodes=nodes_text(len(gone)))
        if self.root_node is not None and roots is not None and roots.get(self.root or "") != self.root_node:
            return tr("{root}'s grad_fn changed since this {what}: the graph it heads is not the one walked.",
                      root=self.root, what=what)
        if self.kind == "preview" and any(n["id"] in self.nodes and n["id"] not in self.freed and has_freed(n)
                                          for n in updated):
            return tr("The graph's saved tensors were freed since this {what} (a backward ran without "
                      "retain_graph=True): the backward it previews would now fail.", what=what)
        return None


def nodes_text(count: int) -> str:
    """``1 node``, ``3 nodes``."""
    return tr("1 node") if count == 1 else tr("{n} nodes", n=count)
