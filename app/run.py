"""One lesson run as the app knows it: the live pause, the console transcript, the history, and which step is in view.

A :class:`Run` is fed the session's messages in arrival order (:meth:`Run.feed`) and the
changes made to the lesson from outside its own code (a ``backward()`` from the Backward
panel, a statement typed in the console: :meth:`Run.add_change`), each of which becomes a
step of the history of its own. The window and the headless trace both build on it; the
window's panels and time-travel controller observe it. A new run gets a new :class:`Run`, so
nothing of one run can be shown over another. Feed and read a run from one thread.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from app import messages as m
from app.history import BUDGET_BYTES, History
from app.transcript import Transcript


def mark_of(snapshot: dict[str, Any]) -> str | None:
    """Why a pause deserves a tick on the timeline, if it does."""
    if snapshot.get("post_mortem") or snapshot.get("event") == "exception":
        return "exception"
    if snapshot.get("watch_changed"):
        return "watch"
    if snapshot.get("breakpoint"):
        return "breakpoint"
    return None


def same_frame(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Whether two pauses show the variables of the same frame (the same function at the same depth)."""
    return len(a["stack"]) == len(b["stack"]) and a["function"] == b["function"] \
        and a.get("frame_index", 0) == b.get("frame_index", 0)


class Run:
    """A run of one lesson file, from its start to its end and after.

    Parameters
    ----------
    path
        The lesson's file.
    budget_bytes
        Memory for the history; None keeps no history (the headless trace).
    """

    def __init__(self, path: str, budget_bytes: int | None = BUDGET_BYTES) -> None:
        self.path = path
        self.history = History(budget_bytes) if budget_bytes is not None else None
        self.transcript = Transcript()
        self.live: dict[str, Any] | None = None
        """The newest pause (or change), as the lesson has it now."""
        self.ended: m.Ended | None = None
        self.marks: dict[int, str] = {}
        """History index → why that step has a tick on the timeline ("exception", "watch", "breakpoint", "action")."""
        self.viewing: int | None = None
        """The history index of the past step in view, None when the live one is."""
        self.just_ran: int | None = None
        """The line that ran to reach the live pause, when a step ran exactly that one (None after a
        continue, a run to cursor or the end: then no single line did)."""
        self.output_before_pause: list[tuple[str, str]] = []
        """What the lesson printed between the previous pause and the newest one."""
        self.output_since_pause: list[tuple[str, str]] = []
        """What the lesson printed since the newest pause."""
        self.on_recorded: list[Callable[[int, bool], None]] = []
        """Called with a new step's index and whether it came while recording."""
        self.on_viewed: list[Callable[[int | None], None]] = []
        """Called when another step is in view: its index, or None for the live one."""
        self.on_ended: list[Callable[[m.Ended], None]] = []
        """Called once the run is over."""
        self._before_live: dict[str, Any] | None = None  # the step before the live one, in its frame
        self._before_past: tuple[int, dict[str, Any] | None] | None = None  # (index, its step before) of past()

    # ---- what happens ---------------------------------------------------------------

    def feed(self, message: Any) -> None:
        """Take one of the session's messages (output, pauses, the end; anything else is not the run's)."""
        if isinstance(message, m.Output):
            self.add_output(message.stream, message.text)
        elif isinstance(message, m.Paused):
            self.add_pause(message.snapshot)
        elif isinstance(message, m.Ended):
            self.end(message)

    def add_output(self, stream: str, text: str) -> None:
        """The lesson wrote ``text`` to ``stream``."""
        self.output_since_pause.append((stream, text))
        self.transcript.add_output(stream, text, self.live_index + 1)  # printed before the next step
        if self.history is not None:
            self.history.add_output(stream, text)

    def add_pause(self, snapshot: dict[str, Any]) -> int:
        """The lesson paused (or passed a pause while recording); returns the step's index (-1 without history)."""
        self.output_before_pause, self.output_since_pause = self.output_since_pause, []
        previous, self.live = self.live, snapshot
        self._before_live = previous if previous is not None and same_frame(previous, snapshot) else None
        recording = bool(snapshot.get("recording"))
        if not recording:
            self.viewing = None
        index = self._record(snapshot, mark_of(snapshot), recording)
        return index

    def add_graph_change(self, diff: dict[str, Any]) -> None:
        """A reply changed the graph between pauses (another frame selected, an action)."""
        if self.history is not None and diff:
            self.history.add_graph_change(diff)

    def add_change(self, kind: str, result: dict[str, Any]) -> int | None:
        """A request changed the lesson (``result`` carries ``vars``, ``globals`` and the ``graph`` diff).

        The change is a step of the history of its own, marked "action", so that stepping back
        and comparing with the live step see it; ``kind`` ("backward", "grad", "console"…) is
        kept in the step as ``changed_by``. Returns the step's index (None when nothing changed).
        """
        if "vars" not in result or self.live is None:
            return None
        self.add_graph_change(result.get("graph") or {})
        self._before_live = self.live
        self.live = {**self.live, "vars": result["vars"], "globals": result["globals"], "changed_by": kind}
        self.viewing = None
        return self._record(self.live, "action", False)

    def end(self, ended: m.Ended) -> None:
        """The run is over."""
        self.ended = ended
        for listener in list(self.on_ended):
            listener(ended)

    # ---- the state --------------------------------------------------------------------

    @property
    def is_over(self) -> bool:
        return self.ended is not None

    @property
    def live_index(self) -> int:
        """History index of the newest step (-1 before the first)."""
        return len(self.history) - 1 if self.history is not None else -1

    @property
    def first_index(self) -> int:
        """History index of the oldest step still kept."""
        return self.history.dropped_before if self.history is not None else 0

    @property
    def shown_index(self) -> int:
        """History index of the step in view."""
        return self.viewing if self.viewing is not None else self.live_index

    def can_step_back(self) -> bool:
        return self.history is not None and self.shown_index - 1 >= self.first_index

    # ---- time travel ------------------------------------------------------------------

    def view(self, index: int) -> None:
        """Show step ``index`` as it was (the newest one is the live view)."""
        if self.history is None:
            return
        if index >= self.live_index:
            self.go_live()
            return
        index = max(index, self.first_index)
        if index == self.viewing:
            return
        self.viewing = index
        self._tell_viewed(index)

    def step_back(self) -> bool:
        """Show the step before the one in view; False when there is none."""
        if not self.can_step_back():
            return False
        self.view(self.shown_index - 1)
        return True

    def go_live(self) -> None:
        """Back to the newest step, with the lesson's state as it is now."""
        if self.viewing is None:
            return
        self.viewing = None
        self._tell_viewed(None)

    def past(self, index: int) -> tuple[dict[str, Any], int | None]:
        """Step ``index`` as recorded (with ``graph_full`` and ``output``), and the line of the step before it."""
        assert self.history is not None
        snapshot = self.history.snapshot(index)
        before = self.history.snapshot(index - 1) if index > self.first_index else None
        self._before_past = (index, before if before is not None and same_frame(before, snapshot) else None)
        return snapshot, before["line"] if before is not None else None

    def before(self, index: int | None = None) -> dict[str, Any] | None:
        """The step whose variables step ``index``'s are compared with: the one before it in the history.

        What differs is what the step that led to ``index`` changed, whichever way the learner
        arrived there (a step, the timeline, going live). ``None`` (the default) means the live
        view, which after the end shows the module as the run left it: compared with the last
        pause when that paused in the module. Returns None when there is no step before (the
        first one, or one dropped to stay within the budget) or it paused in another frame.
        """
        live = index is None or index >= self.live_index
        if live and self.ended is not None and self.ended.variables is not None:
            paused = self.live
            return paused if paused is not None and paused["function"] == "<module>" else None
        if live:
            return self._before_live
        if self.history is None:
            return None
        if self._before_past is None or self._before_past[0] != index:
            self.past(index)
        assert self._before_past is not None
        return self._before_past[1]

    def live_graph(self) -> dict[str, Any]:
        """The whole graph of the newest step."""
        assert self.history is not None
        return self.history.snapshot(self.live_index)["graph_full"]

    def diff_with_live(self) -> dict[str, Any] | None:
        """What changed from the step in view to the live one (None when the live one is in view)."""
        if self.viewing is None or self.history is None:
            return None
        return self.history.diff(self.viewing, self.live_index)

    def _record(self, snapshot: dict[str, Any], mark: str | None, recording: bool) -> int:
        if self.history is None:
            return -1
        index = self.history.add_pause(snapshot, mark)
        self.transcript.step = index  # what the console says from now on, it says at this step
        if mark:
            self.marks[index] = mark
        first = self.history.dropped_before
        if self.marks and min(self.marks) < first:
            self.marks = {i: kind for i, kind in self.marks.items() if i >= first}
        for listener in list(self.on_recorded):
            listener(index, recording)
        return index

    def _tell_viewed(self, index: int | None) -> None:
        for listener in list(self.on_viewed):
            listener(index)
