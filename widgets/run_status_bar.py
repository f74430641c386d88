"""The status bar: what the run is doing and why actions are off, the step count, the grad mode."""

from __future__ import annotations

from typing import Any

from PySide6.QtGui import QAccessible, QAccessibleAnnouncementEvent, QColor
from PySide6.QtWidgets import QLabel, QStatusBar, QWidget

from app import messages as m
from app.i18n import N_, tr
from app.value_text import summary_line
from widgets.colours import ensure_contrast
from widgets.theme import follow_palette, high_contrast

#: Characters of a returned value the status text shows.
RETURNED_CHARS = 60

#: What the status bar says for each way a run can end (English msgids).
END_TEXT = {
    "ok": N_("Finished"),
    "error": N_("Stopped by an error"),
    "exited": N_("Exited"),
    "crashed": N_("The lesson process crashed"),
    "stopped": N_("Stopped"),
    "empty": N_("Nothing to run: the file holds no statements"),
}

#: The grad-mode chip: text (code, or an English msgid), colour and a one-sentence explanation (msgid).
GRAD_MODES = {
    "inference_mode": ("inference_mode", "#8e44ad", N_("torch.inference_mode(): no graph and no version counters")),
    "grad": (N_("grad enabled"), "#1e8449", N_("autograd records the operations of this line")),
    "no_grad": ("no_grad", "#b9770e", N_("torch.no_grad(): results of this line will not require grad")),
}


def end_text(ended: m.Ended) -> str:
    """How a run ended, in words."""
    status = ended.status
    if status == "exited":
        return tr("Exited with code {code}", code=ended.exit_code)
    if status == "crashed" and ended.error:  # it said something it should not have
        error = ended.error
        message = tr(error["template"], **error.get("fields", {})) if error.get("template") else error["message"]
        return tr("{message}; the next run starts a fresh one", message=f"{message[:1].upper()}{message[1:]}")
    if status == "crashed":
        how = ended.signal or tr("exit code {code}", code=ended.exit_code)
        return tr("The lesson process crashed ({how}); the next run starts a fresh one", how=how)
    if status == "stopped" and ended.error and ended.error.get("template"):  # after the last line: not finished
        return tr(ended.error["template"], **ended.error.get("fields", {}))
    if status == "error" and ended.error:
        if ended.error.get("line"):
            return tr("Stopped by an error: {type} on line {line}", type=ended.error["type"], line=ended.error["line"])
        return tr("Stopped by an error: {type}", type=ended.error["type"])
    return tr(END_TEXT[status]) if status in END_TEXT else status


def pause_text(snapshot: dict[str, Any]) -> str:
    """Where a live pause is and what the learner can do next."""
    line = snapshot["line"]
    if snapshot.get("post_mortem"):
        return tr("Error: {type} on line {line} — inspect the variables, then F5 or Shift+F5 to end the run",
                  type=snapshot["exception"]["type"], line=line)
    if snapshot.get("watch_changed"):
        return tr("Paused at line {line}: {names} changed", line=line, names=", ".join(snapshot["watch_changed"]))
    where = tr("line {line}", line=line) if snapshot["function"] == "<module>" else \
        tr("{function}(), line {line}", function=snapshot["function"], line=line)
    what = {"call": N_("Paused entering {where}"), "return": N_("Paused returning from {where}"),
            "exception": N_("Paused exception at {where}")}.get(snapshot["event"], N_("Paused at {where}"))
    if snapshot["event"] == "return":
        error = snapshot.get("exception") or {}
        what = {"yield": N_("Paused yielding from {where}"), "await": N_("Paused suspended at an await in {where}"),
                "raise": N_("Paused raising {error} from {where}")}.get(snapshot.get("return_kind"), what)
        text = tr(what, where=where, error=error.get("type") or tr("an exception"))
    else:
        text = tr(what, where=where)
    returned = snapshot.get("returned")
    if returned:  # a step out landed here: say what the function gave back, as VS Code does
        value = summary_line(returned["value"])
        value = value[:RETURNED_CHARS] + ("…" if len(value) > RETURNED_CHARS else "")
        text = tr("{paused} after {function}() returned {value}", paused=text, function=returned["function"],
                  value=value)
    return tr("{paused} — F10 step over, F11 step into, F5 continue", paused=text)


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
        self._grad_mode = ""  # the chip's mode, to colour it again after a change of theme
        follow_palette(self, self._colour_grad_chip)

    def show_run(self, state: str, snapshot: dict[str, Any] | None, ended: m.Ended | None, has_file: bool,
                 step: int | None = None) -> None:
        """Describe the session's state (``idle``, ``running``, ``paused`` or ``ended``); ``step`` is the
        live step's number on the timeline (the lesson's own count when not given)."""
        if not has_file:
            text = tr("Open a lesson to begin")
        elif state == "paused" and snapshot:
            text = pause_text(snapshot)
        elif state == "running":
            text = tr("Running… (F6 pauses, Shift+F5 stops)")
        elif state == "ended" and ended is not None:
            text = tr("{ended} — F5 or F10 steps from the start again, F8 runs to the end", ended=end_text(ended))
        else:
            text = tr("Ready: F5 or F10 starts at the first line, then F10 steps; F8 runs to the end")
        self.state_label.setText(text)
        if snapshot and state == "paused":
            self.show_step(step if step is not None else snapshot["step"])
        else:
            self.step_label.setText("")
        self.show_grad_mode(snapshot if state == "paused" else None)

    def show_step(self, step: int) -> None:
        """The live step's number on the timeline, after a change made from outside the lesson's code."""
        self.step_label.setText(tr("step {step}", step=step))

    def announce(self, text: str, assertive: bool = False) -> None:
        """Have a screen reader say ``text`` (politely: after what it is saying; ``assertive``: at once).

        Kept as :attr:`announcement` and as the bar's accessible description, for assistive
        technologies that read those instead of Qt 6.8's announcement events.
        """
        if not text:
            return
        self.announcement = text
        self.setAccessibleDescription(text)
        event = QAccessibleAnnouncementEvent(self, text)
        event.setPoliteness(QAccessible.AnnouncementPoliteness.Assertive if assertive
                            else QAccessible.AnnouncementPoliteness.Polite)
        QAccessible.updateAccessibility(event)

    def show_notice(self, text: str) -> None:
        """Say what the running lesson is doing that the learner must know (it is inside a long call)."""
        self.state_label.setText(text)

    def show_past(self, snapshot: dict[str, Any], index: int, live: int, ended: bool = False) -> None:
        """Say that a recorded pause is shown, not the live one (or, once the run has ended, not its end).

        The step is counted as the timeline counts it, changes from the Backward panel and the console included.
        """
        back = N_("goes back to the end of the run") if ended else N_("goes back to live")
        self.state_label.setText(tr("Viewing the past: step {step} of {total}, line {line}, values as they were "
                                    "then — Ctrl+Shift+F10 {back}",
                                    step=index + 1, total=live + 1, line=snapshot["line"], back=tr(back)))
        self.show_step(index + 1)
        self.show_grad_mode(snapshot)

    def show_grad_mode(self, snapshot: dict[str, Any] | None) -> None:
        """The grad mode of the pause's line, or nothing when there is no pause."""
        if snapshot is None:
            self.grad_label.setText("")
            self.grad_label.setToolTip("")
            self.grad_label.setStyleSheet("")
            self._grad_mode = ""
            return
        if snapshot.get("inference_mode"):
            mode = "inference_mode"
        else:
            mode = "grad" if snapshot.get("grad_enabled") else "no_grad"
        text, _, tip = GRAD_MODES[mode]
        self.grad_label.setText(f" {tr(text) if mode == 'grad' else text} ")
        self.grad_label.setToolTip(tr(tip))
        self._grad_mode = mode
        self._colour_grad_chip()

    def _colour_grad_chip(self) -> None:
        """White on the mode's colour; in high contrast, the mode's colour (made to read at 7:1) on black."""
        if not self._grad_mode:
            return
        colour = QColor(GRAD_MODES[self._grad_mode][1])
        if high_contrast():
            bright = ensure_contrast(colour, QColor("#000000")).name()
            sheet = f"color: {bright}; background: #000000; border: 1px solid {bright}; border-radius: 3px;"
        else:
            sheet = f"color: white; background: {colour.name()}; border-radius: 3px;"
        self.grad_label.setStyleSheet(sheet)
