"""Time travel for the main window: records every pause of the run and shows any of them again.

The truth is :class:`app.history.History`; this controller feeds it from the session
bridge, keeps the :class:`~widgets.timeline_bar.TimelineBar` in step with it, and asks the
window to show a past pause. Nothing is re-executed: a past pause is shown as recorded,
and stepping from it returns to the live pause first.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, QTimer
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QPlainTextEdit, QVBoxLayout

from app.history import History
from widgets import settings
from widgets.timeline_bar import TimelineBar

if TYPE_CHECKING:
    from widgets.main_window import MainWindow

#: While a run is recorded, the timeline is redrawn at most this often (ms).
RECORDING_REFRESH_MS = 150


def mark_of(snapshot: dict[str, Any]) -> str | None:
    """Why a pause deserves a tick on the timeline, if it does."""
    if snapshot.get("post_mortem") or snapshot.get("event") == "exception":
        return "exception"
    if snapshot.get("watch_changed"):
        return "watch"
    if snapshot.get("breakpoint"):
        return "breakpoint"
    return None


def describe_diff(diff: dict[str, Any], first: int, second: int) -> str:
    """A readable account of :meth:`History.diff` between two pauses."""
    lines = [f"From step {first + 1} to step {second + 1}:"]
    for scope in ("vars", "globals"):
        part = diff.get(scope, {})
        for key, label in (("added", "new"), ("removed", "gone"), ("changed", "changed")):
            if part.get(key):
                lines.append(f"  {label} {'variables' if scope == 'vars' else 'globals'}: {', '.join(part[key])}")
    for tensor in diff.get("tensors", []):
        what = []
        if tensor.get("values_changed"):
            what.append("values")
        before, after = tensor.get("grad_fn", [None, None])
        if before != after:
            what.append(f"grad_fn {before} → {after}")
        if tensor.get("grad_changed"):
            what.append(".grad")
        if what:
            lines.append(f"  tensor {tensor['name']}: {', '.join(what)}")
    graph = diff.get("graph", {})
    if graph.get("added"):
        names = [node["name"] for node in graph["added"]]
        lines.append(f"  graph nodes added: {len(names)} ({', '.join(names[:12])}{'…' if len(names) > 12 else ''})")
    if graph.get("removed"):
        lines.append(f"  graph nodes removed: {len(graph['removed'])}")
    if len(lines) == 1:
        lines.append("  nothing changed")
    return "\n".join(lines)


class TimeTravel(QObject):
    """Keeps the run's history and moves the window's view through it.

    Parameters
    ----------
    window
        The main window whose panels show a pause (:meth:`MainWindow.show_pause`).
    bar
        The timeline under the code.
    """

    def __init__(self, window: MainWindow, bar: TimelineBar) -> None:
        super().__init__(window)
        self.window = window
        self.bar = bar
        self.history = History()
        self.viewing: int | None = None
        self.marks: dict[int, str] = {}
        self.last_comparison = ""  # the text of the last "Diff with live"
        self._refresh_timer = QTimer(self, singleShot=True, interval=RECORDING_REFRESH_MS)
        self._refresh_timer.timeout.connect(self._refresh_bar)
        bar.position_requested.connect(self._on_bar_position_requested)
        bar.live_requested.connect(self.go_live)
        bar.compare_requested.connect(self._on_bar_compare_requested)
        self.reset()

    @property
    def live(self) -> int:
        """History index of the newest pause (-1 before the first)."""
        return len(self.history) - 1

    def reset(self) -> None:
        """A new run: an empty history with the budget from the settings."""
        self.history = History(budget_bytes=settings.get("history/budget_mb") * 2**20)
        self.viewing = None
        self.marks.clear()
        self.bar.clear()
        self.bar.set_finished(False)

    def record_output(self, stream: str, text: str) -> None:
        self.history.add_output(stream, text)

    def record_graph_change(self, diff: dict[str, Any]) -> None:
        """A reply changed the graph between pauses (a backward, another frame)."""
        self.history.add_graph_change(diff)

    def record_pause(self, snapshot: dict[str, Any]) -> int:
        """Add a pause; while recording, the timeline only counts it."""
        mark = mark_of(snapshot)
        index = self.history.add_pause(snapshot, mark)
        if mark:
            self.marks[index] = mark
        recording = bool(snapshot.get("recording"))
        self.bar.set_recording(recording)
        if recording:
            if not self._refresh_timer.isActive():
                self._refresh_timer.start()
        else:
            self.viewing = None
            self._refresh_bar()
        return index

    def record_change(self, snapshot: dict[str, Any]) -> int:
        """A change made from outside the lesson's code (a backward() or zero grad from a panel): a step of
        its own, marked on the timeline, so that stepping back and "Diff with live" see it."""
        index = self.history.add_pause(snapshot, "action")
        self.marks[index] = "action"
        self.viewing = None
        self._refresh_bar()
        return index

    def run_ended(self) -> None:
        self.bar.set_recording(False)
        self.bar.set_finished(True)
        self._refresh_bar()

    def step_back(self) -> bool:
        """Show the pause before the one in view; False when there is none."""
        current = self.viewing if self.viewing is not None else self.live
        if current - 1 < self.history.dropped_before:
            return False
        self.show(current - 1)
        return True

    def show(self, index: int) -> None:
        """Show pause ``index`` as it was (the live one returns to the live view)."""
        if index >= self.live:
            self.go_live()
            return
        snapshot = self.history.snapshot(index)
        previous = self.history.snapshot(index - 1)["line"] if index > self.history.dropped_before else None
        self.viewing = index
        self.bar.set_position(index)
        self.window.show_pause(snapshot, previous, past=(index, self.live))

    def go_live(self) -> None:
        """Back to the newest pause, with the lesson's state as it is now."""
        if self.viewing is None:
            return
        self.viewing = None
        self.bar.set_position(self.live)
        self.window.show_live(self.history.snapshot(self.live)["graph_full"], self.history.output())

    def _refresh_bar(self) -> None:
        first = self.history.dropped_before
        marks = {i: kind for i, kind in self.marks.items() if i >= first}
        self.marks = marks
        self.bar.set_range(first, self.live, marks, first)
        self.bar.set_position(self.viewing if self.viewing is not None else self.live)

    def _on_bar_position_requested(self, index: int) -> None:
        if self.window.session.state == "running":
            self._refresh_bar()  # a running lesson has no still past to show yet
            return
        self.show(index)

    def _on_bar_compare_requested(self) -> None:
        if self.viewing is None:
            return
        text = describe_diff(self.history.diff(self.viewing, self.live), self.viewing, self.live)
        dialog = QDialog(self.window)
        dialog.setWindowTitle("What changed since this step")
        view = QPlainTextEdit(text, dialog)
        view.setReadOnly(True)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, dialog)
        buttons.rejected.connect(dialog.reject)
        layout = QVBoxLayout(dialog)
        layout.addWidget(view)
        layout.addWidget(buttons)
        dialog.resize(520, 360)
        self.last_comparison = text
        dialog.open()
