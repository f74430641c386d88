"""The step in view: which step of the run the panels show, how it reads, and whether the lesson can be asked.

:class:`ShownStep` follows a :class:`~app.run.Run` (the one record of time travel) and the
lesson's state, and turns them into one :class:`Step` that every panel reads: the live pause,
a past step as recorded, or the end of the run. It feeds the :class:`~app.graph_model.GraphModel`
each graph change once (a pause's diff, a whole graph when a past step or the end of a
recording comes into view). A change made from outside the lesson's code (a reply to the
Backward panel or the console) is recorded in the run first (:meth:`ShownStep.take_reply`);
the panels hear of it after, from :attr:`ShownStep.changed`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from app.events import Event
from app.graph_model import GraphModel
from app.run import Run
from app.session import ENDED, IDLE, PAUSED, RUNNING


def made_nodes(snapshot: dict[str, Any] | None) -> list[int]:
    """The ids of the graph nodes the step that led to ``snapshot`` made (outlined as new when it is shown)."""
    return [int(node["id"]) for node in ((snapshot or {}).get("graph") or {}).get("added", [])]


def grad_leaves(variables: dict[str, Any], used: bool = False) -> list[str]:
    """The names of a snapshot's tensors that require grad and have no ``grad_fn`` (leaves); with ``used``, only
    those that have a ``.grad`` (a backward ran through a graph that used them).

    A module's parameters count, by their dotted names (``model.weight``).
    """
    names = []
    for name, summary in variables.items():
        if summary.get("module"):
            names += [f"{name}.{parameter['name']}" for parameter in summary.get("parameters") or ()
                      if parameter.get("requires_grad") and (parameter.get("has_grad") or not used)]
        elif (summary.get("type") in ("Tensor", "Parameter") and summary.get("requires_grad")
              and not summary.get("grad_fn") and (summary.get("grad") is not None or not used)):
            names.append(name)
    return names


@dataclass(frozen=True)
class Step:
    """One step as the panels show it.

    ``where`` is "none" (no pause yet), "live", "past" or "ended". ``line`` is where the lesson
    is about to run (None when nothing is: a past or ended step shows its line through
    ``snapshot``); ``previous_line`` the line that just ran, when one step ran exactly it.
    ``off`` says why the lesson cannot be asked now ("idle", "running", "past", "ended"; None
    when it can).
    """

    where: str = "none"
    snapshot: dict[str, Any] | None = None
    variables: dict[str, Any] = field(default_factory=dict)
    globals: dict[str, Any] = field(default_factory=dict)
    before: dict[str, Any] | None = None
    line: int | None = None
    event: str = "line"
    previous_line: int | None = None
    op_span: list[int] | None = None
    stack: list[dict[str, Any]] = field(default_factory=list)
    stack_cut: bool = False
    off: str | None = IDLE
    index: int | None = None
    """The history index of a past step."""
    live_index: int = -1
    frame: int = 0
    """The call-stack frame whose variables are shown (another than the paused one after a pick in the stack)."""
    over: bool = False
    """Whether the run has ended (a past step of a finished run is "past" and over)."""

    @property
    def is_live(self) -> bool:
        return self.off is None


class ShownStep:
    """The step every panel shows, kept in step with the run and the lesson's state.

    Events
    ------
    changed(step)
        Another :class:`Step` is in view (a pause, a past step, the end, a change by a reply,
        another frame, the lesson running again).
    """

    def __init__(self, graph: GraphModel) -> None:
        self.graph = graph
        self.run: Run | None = None
        self.state = IDLE
        self.step = Step()
        self.changed = Event()
        self._stepped = False
        self._latest: dict[str, Any] | None = None  # the newest pause seen, recorded or shown
        self._change_diff: dict[str, Any] | None = None  # the graph diff of the change being recorded

    # ---- what the window tells it -------------------------------------------------------

    def set_run(self, run: Run | None) -> None:
        """Follow ``run`` from now on (a new run starts empty)."""
        if self.run is not None:
            for listeners, callback in self._listeners(self.run):
                listeners.remove(callback)
        self.run, self._latest, self.state = run, None, IDLE
        if run is not None:
            for listeners, callback in self._listeners(run):
                listeners.append(callback)
        self.graph.clear()
        self._show(Step(off=self._off()))

    def resumed(self, stepped: bool) -> None:
        """The lesson runs again; ``stepped`` when by a step (then the line paused at next is the one that ran)."""
        self._stepped = stepped
        if self.state != RUNNING:
            self.state = RUNNING
            self._show(self._with_state(self.step))

    def show_frame(self, frame: int, result: dict[str, Any]) -> None:
        """Another frame of the call stack picked: its variables (nothing to compare with) and its graph."""
        diff = result.get("graph") or {}
        if self.run is not None:
            self.run.add_graph_change(diff)
        if diff:
            self.graph.apply_diff(diff)
        self._show(_replace(self.step, variables=result["vars"], globals=result["globals"], before=None,
                            frame=frame))

    def take_reply(self, kind: str, result: dict[str, Any]) -> bool:
        """A reply that may have changed the lesson: recorded in the run first, then shown; True if it was a change.

        A reply with ``vars`` (a backward, ``autograd.grad``, a console statement) is a step of the
        history of its own; one with only a ``graph`` diff (a preview) changes the graph between steps.
        """
        run = self.run
        if run is None:
            return False
        diff = result.get("graph") or {}
        if "vars" in result and run.live is not None:
            self._change_diff = diff
            try:
                run.add_change(kind, result)  # Run.on_recorded: the change is shown once it is recorded
            finally:
                self._change_diff = None
            return True
        run.add_graph_change(diff)
        if diff:
            self.graph.apply_diff(diff)
        return False

    # ---- what the run tells it ----------------------------------------------------------

    def _listeners(self, run: Run) -> list[tuple[list, Any]]:
        return [(run.on_recorded, self._on_run_recorded), (run.on_viewed, self._on_run_viewed),
                (run.on_ended, self._on_run_ended)]

    def _on_run_recorded(self, index: int, recording: bool) -> None:
        run = self.run
        assert run is not None and run.live is not None
        if self._change_diff is not None:  # a reply's change, recorded: now shown
            if self._change_diff:
                self.graph.apply_diff(self._change_diff)
            self._show_live()
            return
        snapshot, previous = run.live, self._latest
        self._latest = snapshot
        if recording:
            return  # recorded for the timeline; the panels show the pause the recording ends at
        self.state = PAUSED
        # The "just ran" arrow only after a step: after a continue or run to cursor, the last pause's
        # line is not the line that ran last.
        run.just_ran = previous["line"] if previous is not None and self._stepped else None
        if previous is not None and previous.get("recording"):
            self._show_live(whole_graph=True)  # the graph changes of the recording's pauses were skipped
            return
        if snapshot.get("graph"):
            self.graph.apply_diff(snapshot["graph"])
        self._show_live()

    def _show_leaves(self, snapshot: dict[str, Any]) -> None:
        """Tell the graph the step's leaves (why it is empty), those already used, and whether a backward runs."""
        variables = snapshot["vars"]
        self.graph.set_waiting_leaves(grad_leaves(variables), snapshot.get("in_backward", False),
                                      grad_leaves(variables, used=True))

    def _on_run_viewed(self, index: int | None) -> None:
        if index is None:
            self._show_live(whole_graph=True)
            return
        run = self.run
        assert run is not None
        snapshot, previous_line = run.past(index)
        self.graph.set_graph(snapshot["graph_full"], new=made_nodes(snapshot), past=index)
        self._show_leaves(snapshot)
        self._show(Step("past", snapshot, snapshot["vars"], snapshot["globals"], run.before(index),
                        snapshot["line"], snapshot["event"], previous_line,
                        snapshot["op"]["span"] if "op" in snapshot else None, snapshot["stack"],
                        snapshot.get("stack_cut", False), "past", index, run.live_index))

    def _on_run_ended(self, _ended: Any) -> None:
        run = self.run
        assert run is not None
        self.state = ENDED
        run.just_ran = None
        if run.viewing is None:
            recorded = run.live is not None and bool(run.live.get("recording"))
            self._show_live(whole_graph=recorded)  # a recording ran to the end: its graph changes were skipped
        else:
            self._show(self._with_state(self.step))

    # ---- the steps ----------------------------------------------------------------------

    def _show_live(self, whole_graph: bool = False) -> None:
        run = self.run
        assert run is not None
        snapshot = run.live
        if whole_graph and run.history is not None and len(run.history):
            self.graph.set_graph(run.live_graph(), new=made_nodes(snapshot))
        if snapshot is None:
            self._show(self._with_state(Step()))
            return
        self._show_leaves(snapshot)
        ended = run.ended
        if ended is not None and ended.variables is not None:  # the module as the run left it
            variables, globals_ = ended.variables, {}
        else:
            variables, globals_ = snapshot["vars"], snapshot["globals"]
        self._show(self._with_state(Step(
            "live", snapshot, variables, globals_, run.before(), snapshot["line"], snapshot["event"],
            run.just_ran, snapshot["op"]["span"] if "op" in snapshot else None, snapshot["stack"],
            snapshot.get("stack_cut", False), None, None, run.live_index)))

    def _with_state(self, step: Step) -> Step:
        """``step`` as the lesson's state has it.

        While the lesson runs, the last pause stays in view (a step would otherwise flash the
        panels empty); once it is over nothing is about to run and no frame is left.
        """
        if step.where == "past":
            return step
        off = self._off()
        if off is None:
            return _replace(step, off=None, where="live")
        if off == RUNNING:
            return _replace(step, off=off)
        return _replace(step, off=off, where="ended" if step.snapshot is not None else "none", line=None,
                        previous_line=None, op_span=None, stack=[], stack_cut=False)

    def _off(self) -> str | None:
        if self.run is not None and self.run.is_over:
            return ENDED
        return None if self.state == PAUSED else self.state

    def _show(self, step: Step) -> None:
        over = self.run is not None and self.run.is_over
        self.step = step if step.over == over else _replace(step, over=over)
        self.changed.emit(self.step)


def _replace(step: Step, **changes: Any) -> Step:
    return Step(**{**step.__dict__, **changes})
