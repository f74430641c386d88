"""The status bar: what the run is doing and why actions are off, the step count, the grad mode."""

from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import QLabel, QStatusBar, QWidget

from app import messages as m
from widgets.variables_view import summary_line

#: Characters of a returned value the status text shows.
RETURNED_CHARS = 60

#: What the status bar says for each way a run can end.
END_TEXT = {
    "ok": "Finished",
    "error": "Stopped by an error",
    "exited": "Exited",
    "crashed": "The lesson process crashed",
    "stopped": "Stopped",
    "empty": "Nothing to run: the file holds no statements",
}

#: The grad-mode chip: text, colour and a one-sentence explanation.
GRAD_MODES = {
    "inference_mode": ("inference_mode", "#8e44ad", "torch.inference_mode(): no graph and no version counters"),
    "grad": ("grad enabled", "#1e8449", "autograd records the operations of this line"),
    "no_grad": ("no_grad", "#b9770e", "torch.no_grad(): results of this line will not require grad"),
}


def end_text(ended: m.Ended) -> str:
    """How a run ended, in words."""
    text = END_TEXT.get(ended.status, ended.status)
    if ended.status == "exited":
        text += f" with code {ended.exit_code}"
    elif ended.status == "crashed" and ended.error:  # it said something it should not have
        text = f"{ended.error['message'][:1].upper()}{ended.error['message'][1:]}; the next run starts a fresh one"
    elif ended.status == "crashed":
        how = ended.signal or f"exit code {ended.exit_code}"
        text += f" ({how}); the next run starts a fresh one"
    elif ended.status == "error" and ended.error:
        where = f" on line {ended.error['line']}" if ended.error.get("line") else ""
        text += f": {ended.error['type']}{where}"
    return text


def pause_text(snapshot: dict[str, Any]) -> str:
    """Where a live pause is and what the learner can do next."""
    if snapshot.get("post_mortem"):
        return (f"Error: {snapshot['exception']['type']} on line {snapshot['line']} — inspect the "
                "variables, then F5 or Shift+F5 to end the run")
    if snapshot.get("watch_changed"):
        return f"Paused at line {snapshot['line']}: {', '.join(snapshot['watch_changed'])} changed"
    where = "line" if snapshot["function"] == "<module>" else f"{snapshot['function']}(), line"
    what = {"call": "entering", "return": "returning from", "exception": "exception at"}.get(snapshot["event"], "at")
    if snapshot["event"] == "return":
        error = snapshot.get("exception") or {}
        what = {"yield": "yielding from", "await": "suspended at an await in",
                "raise": f"raising {error.get('type', 'an exception')} from"}.get(snapshot.get("return_kind"), what)
    returned = snapshot.get("returned")
    came_back = ""
    if returned:  # a step out landed here: say what the function gave back, as VS Code does
        value = summary_line(returned["value"])
        came_back = f" after {returned['function']}() returned {value[:RETURNED_CHARS]}"
        came_back += "…" if len(value) > RETURNED_CHARS else ""
    return f"Paused {what} {where} {snapshot['line']}{came_back} — F10 step over, F11 step into, F5 continue"


class RunStatusBar(QStatusBar):
    """The window's status bar: a state message, the step count and the grad-mode chip."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.state_label = QLabel(self)
        self.step_label = QLabel(self)
        self.grad_label = QLabel(self)
        self.grad_label.setMargin(2)
        self.addWidget(self.state_label, 1)
        self.addPermanentWidget(self.step_label)
        self.addPermanentWidget(self.grad_label)

    def show_run(self, state: str, snapshot: dict[str, Any] | None, ended: m.Ended | None, has_file: bool) -> None:
        """Describe the session's state (``idle``, ``running``, ``paused`` or ``ended``)."""
        if not has_file:
            text = "Open a lesson to begin"
        elif state == "paused" and snapshot:
            text = pause_text(snapshot)
        elif state == "running":
            text = "Running… (F6 pauses, Shift+F5 stops)"
        elif state == "ended" and ended is not None:
            text = end_text(ended) + " — F5 or F10 steps from the start again, F8 runs to the end"
        else:
            text = "Ready: F5 or F10 starts at the first line, then F10 steps; F8 runs to the end"
        self.state_label.setText(text)
        self.step_label.setText(f"step {snapshot['step']}" if snapshot and state == "paused" else "")
        self.show_grad_mode(snapshot if state == "paused" else None)

    def show_notice(self, text: str) -> None:
        """Say what the running lesson is doing that the learner must know (it is inside a long call)."""
        self.state_label.setText(text)

    def show_past(self, snapshot: dict[str, Any], index: int, live: int) -> None:
        """Say that a recorded pause is shown, not the live one."""
        self.state_label.setText(f"Viewing the past: step {index + 1} of {live + 1}, line {snapshot['line']}, "
                                 "values as they were then — Ctrl+Shift+F10 goes back to live")
        self.step_label.setText(f"step {snapshot['step']}")
        self.show_grad_mode(snapshot)

    def show_grad_mode(self, snapshot: dict[str, Any] | None) -> None:
        """The grad mode of the pause's line, or nothing when there is no pause."""
        if snapshot is None:
            self.grad_label.setText("")
            self.grad_label.setStyleSheet("")
            return
        if snapshot.get("inference_mode"):
            mode = "inference_mode"
        else:
            mode = "grad" if snapshot.get("grad_enabled") else "no_grad"
        text, colour, tip = GRAD_MODES[mode]
        self.grad_label.setText(f" {text} ")
        self.grad_label.setToolTip(tip)
        self.grad_label.setStyleSheet(f"color: white; background: {colour}; border-radius: 3px;")
