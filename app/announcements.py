"""What a screen reader says after each step: the line that ran, the nodes it made, the tensors that changed.

A sighted learner sees the graph grow and the variables' rows change colour; a learner who
listens hears one polite sentence per step instead, in the interface's language, e.g.
"Line 5 ran: 2 new nodes, MulBackward0 and AddBackward0; y requires grad."
"""

from __future__ import annotations

from typing import Any

from app.graph_model import GraphModel
from app.i18n import join_words, tr
from app.result_basis import grad_key
from app.shown_step import Step

#: New nodes named one by one up to this many; more are counted.
NAMED_NODES = 4


def step_announcement(step: Step, graph: GraphModel) -> str:
    """One sentence for the step in view (empty when there is nothing to say)."""
    if step.snapshot is None:
        return ""
    if step.where == "past":
        head = tr("Step {step}, line {line}, as it was", step=(step.index or 0) + 1, line=step.snapshot["line"])
    elif step.where == "ended":
        head = tr("The run ended")
    elif step.previous_line is not None:
        head = tr("Line {line} ran; paused on line {next}", line=step.previous_line, next=step.line)
    else:
        head = tr("Paused on line {line}", line=step.line)
    parts = [head]
    new = [graph.nodes[i].get("name") or "?" for i in graph.nodes if i in graph.new]
    if new:
        named = join_words(new[:NAMED_NODES]) if len(new) <= NAMED_NODES else \
            tr("{names} and {more} more", names=", ".join(new[:NAMED_NODES]), more=len(new) - NAMED_NODES)
        parts.append(tr("{n} new node(s): {names}", n=len(new), names=named))
    parts += changed_tensors(step.variables, step.before)
    return tr("{sentence}.", sentence=tr("; ").join(parts))


def changed_tensors(variables: dict[str, Any], before: dict[str, Any] | None) -> list[str]:
    """What the step did to the frame's tensors' grad state, in words (new names, requires_grad, .grad)."""
    if before is None:
        return []
    old = before.get("vars", {})
    said = []
    for name, summary in variables.items():
        if summary.get("type") not in ("Tensor", "Parameter") or name.startswith("⟨"):
            continue
        was = old.get(name)
        if was is None:
            said.append(tr("{name} is new", name=name) + (tr(", requires grad") if summary.get("requires_grad")
                                                          else ""))
        elif summary.get("requires_grad") and not was.get("requires_grad"):
            said.append(tr("{name} requires grad", name=name))
        elif summary.get("grad") is not None and grad_key(summary["grad"]) != grad_key(was.get("grad")):
            said.append(tr("{name}.grad changed", name=name))
    return said
