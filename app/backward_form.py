"""The Backward panel's truth: the requests its forms make, the result they brought back, and whether it still holds.

Plain Python (the panel and its forms show it): a :class:`BackwardForm` holds the frame's tensors
a backward can start from, the ``backward()`` and ``torch.autograd.grad`` requests as the learner
fills them in, the result shown with what it rests on (:class:`~app.result_basis.ResultBasis`), and
the replay of its pass (:class:`~app.backward_replay.BackwardReplay`). It reads the graph from the
:class:`~app.graph_model.GraphModel` and drops a result the graph or the frame's variables no
longer match, saying why.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from app.backward_drill import BackwardDrill, split_commas
from app.backward_replay import BackwardReplay
from app.events import Event
from app.graph_model import GraphModel
from app.result_basis import ResultBasis, grad_key, has_freed, tensor_in
from app.shown_step import Step

#: The ``gradient`` of a non-scalar root: ``torch.ones_like(root)`` or an expression of the learner's
#: (a scalar root's is None: automatic).
ONES_LIKE, EXPRESSION = "ones_like", "expression"


@dataclass(frozen=True)
class BackwardRequest:
    """The ``backward()`` form's options besides the root."""

    gradient: str | None = None
    """None (automatic, a scalar root), :data:`ONES_LIKE` or :data:`EXPRESSION`."""
    expression: str = ""
    """The gradient typed, used when :attr:`gradient` is :data:`EXPRESSION`."""
    retain_graph: bool = False
    create_graph: bool = False


@dataclass(frozen=True)
class GradRequest:
    """The ``torch.autograd.grad`` form as typed: comma-separated expressions and options."""

    outputs: str = ""
    inputs: str = ""
    grad_outputs: str = ""
    retain_graph: bool = True  # the lesson's own next lines may walk the same graph
    create_graph: bool = False
    allow_unused: bool = False

    @property
    def frees_graph(self) -> bool:
        """Whether computing it frees the outputs' graph (neither retain_graph nor create_graph, which keeps it)."""
        return not self.retain_graph and not self.create_graph

    def params(self) -> dict[str, Any]:
        """What the lesson process is asked: lists of expressions; ``retain_graph`` True or None (PyTorch's default)."""
        return {
            "outputs": _expressions(self.outputs),
            "inputs": _expressions(self.inputs),
            "grad_outputs": _expressions(self.grad_outputs) or None,
            "retain_graph": True if self.retain_graph else None,
            "create_graph": self.create_graph,
            "allow_unused": self.allow_unused,
        }


class BackwardForm:
    """The backward and autograd.grad requests of the paused frame, their result and the replay of its pass.

    Parameters
    ----------
    graph : GraphModel
        The graph of the step in view; its changes are checked against the result shown.
    drill : BackwardDrill, optional
        The replay's drill (with the progress its answers go to).

    Events
    ------
    variables_changed()
        The frame's tensors changed: :attr:`roots` offered and the :attr:`root` chosen.
    request_changed()
        The root, :attr:`backward` or :attr:`grad` changed.
    state_changed()
        :attr:`paused`, :attr:`why_off` or :attr:`hidden` changed.
    result_changed()
        A result is shown (:attr:`shown`), or it went.
    freshness_changed()
        :attr:`freshness` changed: why a result was dropped, or that it is from an earlier pause.
    """

    def __init__(self, graph: GraphModel, drill: BackwardDrill | None = None) -> None:
        self.graph = graph
        self.replay = BackwardReplay(graph, drill or BackwardDrill())
        self.variables: dict[str, Any] = {}
        """The frame's ``vars`` (``{name: summary}``) the result is checked against."""
        self.roots: list[str] = []
        """The frame's tensors with a ``grad_fn`` or ``requires_grad``: what a backward can start from."""
        self.root: str | None = None
        self.chosen_root: str | None = None
        """The root the learner picked, kept across pauses while it exists."""
        self.backward = BackwardRequest()
        self.grad = GradRequest()
        self.paused = True
        self.why_off = "running"
        """What keeps the requests off: ``running``, ``past``, ``ended`` or ``stopped``."""
        self.predicting = False
        """A prediction about the paused line waits for its answer: a preview or a backward would give it away
        (and a backward would change the ``.grad`` the line is about)."""
        self.shown: tuple[str, Mapping[str, Any]] | None = None
        """The result on screen: its kind (``preview``, ``backward``, ``grad``) and the engine's dict."""
        self.step: int | None = None
        """The run's step the result belongs to."""
        self.basis: ResultBasis | None = None
        self.freshness: tuple[str, str | None] | None = None
        """``("stale", reason)`` once a result was dropped, ``("earlier", None)`` for one from an earlier pause."""
        self.stale_kind = "preview"
        """The kind of the result dropped."""
        self.viewing: int | None = None
        """The past step in view (None: the live step)."""
        self._known = frozenset(graph.nodes)  # the live graph's nodes the result was last checked against
        self.graph_before: dict[int, dict[str, Any]] = {}
        """The graph's nodes when the last request was sent: its reply is recorded, and changes the graph,
        before the result is shown, and a backward frees what the nodes saved."""
        self.variables_changed = Event()
        self.request_changed = Event()
        self.state_changed = Event()
        self.result_changed = Event()
        self.freshness_changed = Event()
        graph.replaced.connect(self._on_graph_replaced)
        graph.changed.connect(self._on_graph_changed)

    # ---- the requests ---------------------------------------------------------------------

    def set_variables(self, variables: Mapping[str, Any]) -> None:
        """A pause's ``vars``: the tensors offered as roots (the one chosen stays while it exists).

        A result these variables no longer match is dropped.
        """
        self.variables = dict(variables)
        if self.basis is not None:
            self._drop_if_stale(self.basis.after_snapshot(self.variables))
        self.roots = [name for name, s in variables.items()
                      if s.get("type") in ("Tensor", "Parameter") and (s.get("grad_fn") or s.get("requires_grad"))]
        if self.root in self.roots and self.root == self.chosen_root:
            root = self.root
        else:
            root = self._default_root() if self.roots else None
        self._set_root(root)
        self.variables_changed.emit()

    def set_root(self, name: str | None, chosen: bool = False) -> None:
        """The root to call ``.backward()`` on; ``chosen`` when the learner picked it (kept across pauses)."""
        if chosen:
            self.chosen_root = name
        if name != self.root:
            self._set_root(name)
            self.request_changed.emit()

    def set_backward(self, **fields: Any) -> None:
        """Change fields of :attr:`backward` (``gradient``, ``expression``, ``retain_graph``, ``create_graph``)."""
        request = replace(self.backward, **fields)
        if request != self.backward:
            self.backward = request
            self.request_changed.emit()

    def set_grad(self, **fields: Any) -> None:
        """Change fields of :attr:`grad`."""
        request = replace(self.grad, **fields)
        if request != self.grad:
            self.grad = request
            self.request_changed.emit()

    def forget_expressions(self) -> None:
        """Another lesson: forget the root picked and the autograd.grad form (retain_graph is ticked again)."""
        self.chosen_root = None
        self.grad = GradRequest()
        self.request_changed.emit()

    def is_vector(self, name: str | None) -> bool:
        """Whether the tensor ``name`` of the frame is not a scalar (its backward needs a gradient)."""
        summary = self.variables.get(name or "")
        return summary is not None and summary.get("numel", 1) != 1

    def backward_params(self) -> dict[str, Any]:
        """What Preview and Run backward() ask: ``{"root", "gradient", "retain_graph", "create_graph"}``."""
        request = self.backward
        gradient = None
        if request.gradient == ONES_LIKE:
            gradient = f"torch.ones_like({self.root})"
        elif request.gradient == EXPRESSION:
            gradient = request.expression.strip() or None
        return {"root": self.root, "gradient": gradient,
                "retain_graph": True if request.retain_graph else None, "create_graph": request.create_graph}

    def _set_root(self, name: str | None) -> None:
        """The gradient choice starts on the first one again: automatic, or ones_like for a non-scalar root."""
        self.root = name
        self.backward = replace(self.backward, gradient=ONES_LIKE if self.is_vector(name) else None)

    def _default_root(self) -> str:
        """The last scalar computed by an operation (usually the loss), else the last computed tensor."""
        computed = [n for n in self.roots if self.variables[n].get("grad_fn")]
        scalars = [n for n in computed if self.variables[n].get("numel") == 1]
        return (scalars or computed or self.roots)[-1]

    # ---- the state of the lesson ----------------------------------------------------------

    def set_state(self, paused: bool, why: str = "running") -> None:
        """Requests only while the lesson is paused; ``why`` is the state that keeps them off.

        A resume (``running``) marks the result as from an earlier pause, said at the next pause
        that still matches it; a reason a result was dropped is news at that pause only.
        """
        self.paused = paused
        if not paused and why == "running":
            if self.basis is None:
                self._set_freshness(None)
            else:
                self.basis.earlier = True
        elif self.basis is not None and paused and self.basis.earlier:
            self._set_freshness(("earlier", None))
        self.why_off = why
        self.state_changed.emit()

    @property
    def open(self) -> bool:
        """Whether requests can go now: the lesson is paused, and no prediction waits for its answer."""
        return self.paused and not self.predicting

    def set_predicting(self, predicting: bool) -> None:
        """A prediction about the paused line is asked (True) or answered or skipped (False)."""
        if predicting != self.predicting:
            self.predicting = predicting
            self.state_changed.emit()

    def show_step(self, step: Step) -> None:
        """The step in view: a live pause offers its tensors as roots; otherwise requests are off, and say why."""
        if step.is_live:  # an operation's result (⟨x @ W⟩) has no name in the frame for backward() to use
            self.set_variables({name: s for name, s in step.variables.items() if not name.startswith("⟨")})
        # A past step of a run that has ended: no step is live to go to, so it is the end that keeps them off.
        why = "ended" if step.over else {"idle": "stopped"}.get(step.off or "", step.off)
        self.set_state(step.is_live, why or "running")
        self.show_past(step.index)

    def show_past(self, step: int | None) -> None:
        """Step ``step`` of the run is in view (None: the live step); a result from a later step is hidden."""
        was = self.hidden
        self.viewing = step
        if self.hidden and not was:
            self.replay.set_playing(False)
        self.state_changed.emit()

    def sent(self) -> None:
        """A request goes to the lesson: keep the graph as the pass will find it (see :attr:`graph_before`)."""
        self.graph_before = dict(self.graph.nodes)

    @property
    def hidden(self) -> bool:
        """Whether the result belongs to a later step than the one in view."""
        return self.viewing is not None and self.shown is not None and self.step is not None \
            and self.viewing < self.step

    # ---- the result -----------------------------------------------------------------------

    def show_result(self, kind: str, result: Mapping[str, Any], step: int | None = None) -> None:
        """Show what a request did.

        Parameters
        ----------
        kind : {"preview", "backward", "grad"}
            The request that produced ``result``.
        result : dict
            The dict :class:`app.lesson.autograd_actions.AutogradActions` returned for it.
        step : int, optional
            The run's step (history index) the result belongs to; a past step before it hides it.
        """
        self.step = step
        self.basis = self._basis_of(kind, result)
        self.shown = (kind, result)
        self._set_freshness(None)
        self.replay.load(kind, list(result.get("replay", [])), failed=result.get("error") is not None,
                         root=result.get("root"), before=self.graph_before)
        self.result_changed.emit()

    def clear(self) -> None:
        """No frame: no variables, no result, no reason."""
        self.variables, self.roots = {}, []
        self._set_root(None)
        self._clear_result()
        self._set_freshness(None)
        self.variables_changed.emit()
        self.result_changed.emit()

    def _clear_result(self) -> None:
        self.basis = None
        self.shown = None
        self.step = None
        self.replay.load("", [])

    def _set_freshness(self, freshness: tuple[str, str | None] | None) -> None:
        if freshness != self.freshness:
            self.freshness = freshness
            self.freshness_changed.emit()

    def _basis_of(self, kind: str, result: Mapping[str, Any]) -> ResultBasis:
        """What ``result`` rests on, read from it and from the pause it was asked in."""
        root = result.get("root") if kind != "grad" else None
        replay = list(result.get("replay", []))
        summary = tensor_in(self.variables, root) if root else None
        root_node = self.graph.roots.get(root or "")
        if root_node is None and summary is not None and summary.get("grad_fn") and replay \
                and replay[0].get("name") == summary["grad_fn"]:
            root_node = replay[0]["id"]  # a backward from a tensor's grad_fn starts at that node
        rows = result.get("grads", [])
        if kind == "backward":
            grads = {g["name"]: grad_key(g.get("after")) for g in rows}
        elif kind == "preview":
            grads = {g["name"]: grad_key(t.get("grad")) for g in rows if (t := tensor_in(self.variables, g["name"]))}
        else:
            grads = {}
        nodes = frozenset(int(e["id"]) for e in replay)
        freed = {i for i in nodes if has_freed(self.graph_before.get(i) or self.graph.nodes.get(i, {}))} \
            | set(result.get("freed_nodes", []))
        return ResultBasis(kind, root, nodes, root_node,
                           None if summary is None else (summary.get("id"), summary.get("grad_fn")),
                           grads, frozenset(freed))

    def _drop_if_stale(self, reason: str | None) -> None:
        """Drop a result the lesson no longer matches, saying why; its replay and the graph's mark go too."""
        if reason is None or self.basis is None:
            return
        self.stale_kind = self.basis.kind
        self._clear_result()
        self.result_changed.emit()
        self._set_freshness(("stale", reason))

    def _on_graph_replaced(self) -> None:
        if self.graph.past is not None:  # a past step's graph: the result is judged against the live one
            return
        known, self._known = self._known, frozenset(self.graph.nodes)
        if self.basis is not None:
            gone = [i for i in self.basis.nodes if i in known and i not in self.graph.nodes]
            self._drop_if_stale(self.basis.after_graph(gone, self.graph.roots, list(self.graph.nodes.values())))

    def _on_graph_changed(self, diff: Mapping[str, Any]) -> None:
        self._known = frozenset(self.graph.nodes)
        if diff.get("changed", True) and self.basis is not None:
            self._drop_if_stale(self.basis.after_graph(diff.get("removed", []), diff.get("roots"),
                                                       diff.get("updated", [])))


def _expressions(text: str) -> list[str]:
    return [part for part in split_commas(text) if part]
