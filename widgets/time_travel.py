"""Time travel on screen: the timeline bar in step with the run's history, and "Diff with live".

The truth is the run (:class:`app.run.Run`): it records every step and knows which one is
in view. This controller only observes it, keeps the :class:`~widgets.timeline_bar.TimelineBar`
in step, and turns the bar's requests into the run's :meth:`~app.run.Run.view` and
:meth:`~app.run.Run.go_live`; the window observes the run's ``on_viewed`` to show a step.
Nothing is re-executed: a past step is shown as recorded.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, QTimer
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QPlainTextEdit, QVBoxLayout, QWidget

from app.i18n import N_, tr
from app.run import Run
from widgets.timeline_bar import TimelineBar

#: While a run is recorded, the timeline is redrawn at most this often (ms).
RECORDING_REFRESH_MS = 150


def describe_diff(diff: dict[str, Any], first: int, second: int) -> str:
    """A readable account of :meth:`History.diff` between two pauses."""
    lines = [tr("From step {first} to step {second}:", first=first + 1, second=second + 1)]
    labels = {("vars", "added"): N_("new variables"), ("vars", "removed"): N_("gone variables"),
              ("vars", "changed"): N_("changed variables"), ("globals", "added"): N_("new globals"),
              ("globals", "removed"): N_("gone globals"), ("globals", "changed"): N_("changed globals")}
    for scope in ("vars", "globals"):
        part = diff.get(scope, {})
        for key in ("added", "removed", "changed"):
            if part.get(key):
                lines.append(f"  {tr(labels[scope, key])}: {', '.join(part[key])}")
    for tensor in diff.get("tensors", []):
        what = []
        if tensor.get("values_changed"):
            what.append(tr("values"))
        before, after = tensor.get("grad_fn", [None, None])
        if before != after:
            what.append(f"grad_fn {before} → {after}")
        if tensor.get("grad_changed"):
            what.append(".grad")
        if what:
            lines.append("  " + tr("tensor {name}: {what}", name=tensor["name"], what=", ".join(what)))
    graph = diff.get("graph", {})
    if graph.get("added"):
        names = [node["name"] for node in graph["added"]]
        lines.append("  " + tr("graph nodes added: {n} ({names})", n=len(names),
                               names=", ".join(names[:12]) + ("…" if len(names) > 12 else "")))
    if graph.get("removed"):
        lines.append("  " + tr("graph nodes removed: {n}", n=len(graph["removed"])))
    if len(lines) == 1:
        lines.append("  " + tr("nothing changed"))
    return "\n".join(lines)


class TimeTravel(QObject):
    """Keeps the timeline bar in step with the run shown in the window.

    Parameters
    ----------
    bar
        The timeline under the code.
    is_running
        Whether the lesson runs now (a running lesson has no still past to show yet).
    parent
        The window, which also parents the "Diff with live" dialog.
    """

    def __init__(self, bar: TimelineBar, is_running: Callable[[], bool], parent: QWidget) -> None:
        super().__init__(parent)
        self.bar = bar
        self.run: Run | None = None
        self.last_comparison = ""  # the text of the last "Diff with live"
        self._is_running = is_running
        self._parent = parent
        self._dialog: QDialog | None = None
        self._refresh_timer = QTimer(self, singleShot=True, interval=RECORDING_REFRESH_MS)
        self._refresh_timer.timeout.connect(self._refresh_bar)
        bar.position_requested.connect(self._on_bar_position_requested)
        bar.live_requested.connect(self._on_bar_live_requested)
        bar.compare_requested.connect(self._on_bar_compare_requested)
        self.set_run(None)

    def set_run(self, run: Run | None) -> None:
        """Follow ``run`` (None: no run, an empty bar)."""
        if self.run is not None:
            self.run.on_recorded.remove(self._on_run_recorded)
            self.run.on_viewed.remove(self._on_run_viewed)
            self.run.on_ended.remove(self._on_run_ended)
        self.run = run
        self._refresh_timer.stop()
        self.bar.clear()
        self.bar.set_finished(False)
        if run is not None:
            run.on_recorded.append(self._on_run_recorded)
            run.on_viewed.append(self._on_run_viewed)
            run.on_ended.append(self._on_run_ended)
            self.bar.set_finished(run.is_over, run.ended.status if run.ended is not None else "ok")
            if len(run.history or ()):
                self._refresh_bar()

    def _on_run_recorded(self, index: int, recording: bool) -> None:
        self.bar.set_recording(recording)
        if recording:
            if not self._refresh_timer.isActive():
                self._refresh_timer.start()
        else:
            self._refresh_bar()

    def _on_run_viewed(self, index: int | None) -> None:
        self.bar.set_position(index if index is not None else self.run.live_index)

    def _on_run_ended(self, ended: Any) -> None:
        self.bar.set_recording(False)
        self.bar.set_finished(True, ended.status)
        self._refresh_bar()

    def _refresh_bar(self) -> None:
        run = self.run
        if run is None or run.history is None:
            return
        first = run.first_index
        self.bar.set_range(first, run.live_index, run.marks, first)
        self.bar.set_position(run.shown_index)

    def _on_bar_position_requested(self, index: int) -> None:
        if self.run is None:
            return
        if self._is_running():
            self._refresh_bar()  # a running lesson has no still past to show yet
            return
        self.run.view(index)

    def _on_bar_live_requested(self) -> None:
        if self.run is not None:
            self.run.go_live()

    def _on_bar_compare_requested(self) -> None:
        diff = self.run.diff_with_live() if self.run is not None else None
        if diff is None:
            return
        text = describe_diff(diff, self.run.viewing, self.run.live_index)
        self.last_comparison = text
        dialog = self._comparison_dialog()
        dialog.findChild(QPlainTextEdit).setPlainText(text)
        dialog.open()

    def _comparison_dialog(self) -> QDialog:
        """The "Diff with live" dialog, made at its first use and shown again at every other."""
        if self._dialog is None:
            self._dialog = QDialog(self._parent)
            self._dialog.setObjectName("comparison_dialog")
            view = QPlainTextEdit(self._dialog)
            view.setReadOnly(True)
            buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self._dialog)
            buttons.rejected.connect(self._dialog.reject)
            layout = QVBoxLayout(self._dialog)
            layout.addWidget(view)
            layout.addWidget(buttons)
            self._dialog.resize(520, 360)
        self._dialog.setWindowTitle(tr("What changed since this step"))  # in the language of now
        return self._dialog
