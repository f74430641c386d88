"""The Run menu's commands: each key the learner presses, turned into the session's command.

A command first leaves a past step for the live one (asking before a finished run's
recording is replaced) and never runs a line whose prediction waits for its answer.
Whether a command is enabled at all is :func:`app.stepping_rules.allowed_actions`' to say.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtWidgets import QMessageBox, QWidget

from app.i18n import N_, tr
from app.run import Run
from app.session import PAUSED, RUNNING, LessonFileError, Session
from app.shown_step import ShownStep
from app.transcript import Transcript
from widgets import settings
from widgets.code_view import CodeView
from widgets.lesson_files import LessonFiles
from widgets.prediction_bar import PredictionBar
from widgets.prediction_flow import PredictionFlow
from widgets.run_status_bar import RunStatusBar
from widgets.watch_view import WatchView

#: What the status bar says while a prediction waits for its answer (a step would pass it unanswered).
QUESTION_WAITS = N_("Predict first: answer the question above (Enter), or skip it (Esc); the line has not run yet")
#: …once the learner pressed Step Into there: the answer runs the line with Step Into.
QUESTION_WAITS_INTO = N_("Predict first: answer the question above (Enter), and the line runs with Step Into, into "
                         "what it calls; or skip it (Esc)")
#: Record to End stops after this many steps, so an endless loop keeps a partial recording.
RECORD_LIMIT = 100_000


class RunCommands:
    """Start, continue, step, run to a line, record, stop, and step back.

    Parameters
    ----------
    window
        The parent of the question asked before a finished run's recording is replaced.
    session, shown, files, predictions
        The engine, the step in view (and its run), the open file, the course's questions.
    views
        The code (source, breakpoints, cursor), the watch expressions (a continue stops where
        one changes), the prediction bar and the status bar.
    asking
        Whether Run > Ask Predictions is on.
    began
        Called with the new :class:`~app.run.Run` once a run has started.
    transcript
        The run's output, where a file that cannot be run is said.
    changed
        Called when the actions' state may have changed.
    """

    def __init__(self, window: QWidget, session: Session, shown: ShownStep, files: LessonFiles,
                 predictions: PredictionFlow, views: tuple[CodeView, WatchView, PredictionBar, RunStatusBar],
                 asking: Callable[[], bool], began: Callable[[Run], None], transcript: Callable[[], Transcript],
                 changed: Callable[[], None]) -> None:
        self.window, self.session, self.shown, self.files, self.predictions = window, session, shown, files, predictions
        self.code_view, self.watch_view, self.prediction_bar, self.status = views
        self._asking, self._began, self._transcript, self._changed = asking, began, transcript, changed
        self._record_on_first_pause = False

    def go_live(self) -> None:
        """Back to the live step of the run, if a past one is in view."""
        if self.shown.run is not None:
            self.shown.run.go_live()

    def pause(self) -> None:
        """F6: pause the running lesson at its next line (or say it is stalled)."""
        self.session.pause()

    def paused(self) -> None:
        """The lesson paused: Record to End from a stopped lesson records from this first pause."""
        if self._record_on_first_pause:
            self._record_on_first_pause = False
            self.session.record(limit=RECORD_LIMIT)
            self.resumed()

    def leave_past(self) -> bool:
        """Back to the live step before a step or a start; False when the learner keeps a finished run's past.

        On a past step of a finished run a step starts a new run, which replaces the recording
        being browsed: the learner is asked first.
        """
        run = self.shown.run
        if run is not None and run.viewing is not None and run.is_over and self.session.state not in (RUNNING, PAUSED):
            answer = QMessageBox.question(
                self.window, tr("Start a new run?"),
                tr("Step {step} of the finished run is in view. A new run replaces this run's recording of "
                   "{total} steps. Start a new run?", step=run.viewing + 1, total=run.live_index + 1),
                QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.Cancel)
            if answer != QMessageBox.StandardButton.Yes:
                return False
        self.go_live()
        return True

    def question_waits(self, into: bool = False) -> bool:
        """Whether a prediction waits for its answer; then the status bar says to answer or skip, and nothing runs.

        A step would run the line and the question would vanish unanswered: a skip is the learner's
        own choice (Skip, Esc), never a side effect of a key. ``into``: the key was Step Into, so the
        answer will run the line with Step Into (another step key sets it back to Step Over).
        """
        if self.prediction_bar.prediction is None or self.session.state != PAUSED:
            return False
        self.predictions.steps_into = into
        self.status.state_label.setText(tr(QUESTION_WAITS_INTO if into else QUESTION_WAITS))
        self.prediction_bar.focus_answer()
        return True

    def step_back(self) -> None:
        """Show the pause before the one in view, as recorded."""
        if self.session.state != RUNNING and self.shown.run is not None:
            self.shown.run.step_back()
            self._changed()

    def record_to_end(self) -> None:
        """Record every step from here (or from the start) to the end or the step limit."""
        if not self.leave_past() or self.question_waits():
            return
        if self.session.state == PAUSED:
            self.session.record(limit=RECORD_LIMIT)
            self.resumed()
        elif self.session.state != RUNNING and self._start(stop_on_entry=True):
            self._record_on_first_pause = True

    def start_or_continue(self) -> None:
        """F5: continue a paused lesson, or start a stopped one paused at its first line (as Thonny's debug)."""
        if not self.leave_past() or self.question_waits():
            return
        if self.session.state == PAUSED:
            self.session.resume(watches=self.watch_view.stop_on_change())
            self.resumed()
        elif self.session.state != RUNNING:
            self._start(stop_on_entry=True)

    def run_to_end(self) -> None:
        """F8: run a stopped lesson without pausing at its first line, to a breakpoint or the end."""
        if self.session.state not in (RUNNING, PAUSED) and self.leave_past():
            self._start(stop_on_entry=False)

    def step_over(self) -> None:
        """F10: run this line, pausing on the next one in this function."""
        self._step(self.session.step_over)

    def step_into(self) -> None:
        """F11: run to the next line, entering the functions it calls."""
        self._step(self.session.step_into, into=True)

    def run_answered_line(self) -> None:
        """The open question was answered: run its line, with Step Into if the learner pressed it meanwhile."""
        into, self.predictions.steps_into = self.predictions.steps_into, False
        (self.step_into if into else self.step_over)()

    def step_expression(self) -> None:
        """Alt+F11: run the paused line one PyTorch operation at a time."""
        self.go_live()
        if self.session.state == PAUSED and not self.question_waits():
            self.session.step_expression()
            self.resumed(stepped=True)

    def step_out(self) -> None:
        """Shift+F11: run until this function returns."""
        self.go_live()
        if self.session.state == PAUSED and not self.question_waits():
            self.session.step_out()
            self.resumed(stepped=True)

    def run_to_cursor(self) -> None:
        """Ctrl+F10: continue (or start) to the line with the cursor."""
        if not self.leave_past() or self.question_waits():
            return
        line = self.code_view.cursor_line()
        if self.session.state == PAUSED:
            self.session.run_to(line)
            self.resumed()
        elif self.session.state != RUNNING:
            self._start(stop_on_entry=False, run_to=line)

    def stop(self) -> None:
        """Shift+F5: end the run now."""
        if self.session.state in (RUNNING, PAUSED):
            self.session.stop()

    def restart(self) -> None:
        """Ctrl+Shift+F5: run the lesson again from the start, as it was last started."""
        if self.session.state in (RUNNING, PAUSED):
            self.session.stop()
        self._start(stop_on_entry=self.session.stop_on_entry if self.session.path else True)

    def _step(self, command: Callable[[], None], into: bool = False) -> None:
        """A step: the paused lesson runs ``command``; a stopped one starts, paused at its first line."""
        if not self.leave_past() or self.question_waits(into):
            return
        if self.session.state == PAUSED:
            command()
            self.resumed(stepped=True)
        elif self.session.state != RUNNING:
            self._start(stop_on_entry=True)

    def _start(self, stop_on_entry: bool, run_to: int | None = None) -> bool:
        """Start a run of the open file (saved first), stopping at its breakpoints and questions."""
        if self.files.path is None:
            return False
        if self.files.modified():
            self.files.save()
        source = self.code_view.source()
        coach = self.predictions.coach_for(source, self.files.path, self._asking())
        breakpoints = dict(self.code_view.breakpoints())
        for line in coach.stop_lines() if coach else ():
            breakpoints.setdefault(line, None)
        if run_to is not None:
            breakpoints.setdefault(run_to, None)
        self.session.breakpoints[str(self.files.path)] = breakpoints
        try:
            # The run before ends inside start() and says so to its own Run; this one's messages come later.
            self.session.start(str(self.files.path), source, stop_on_entry,
                               watches=None if stop_on_entry else self.watch_view.stop_on_change(),
                               checks=coach.checks() if coach else None)
        except LessonFileError as exc:
            self._transcript().add_message(str(exc), "error")
            return False
        finally:
            self.predictions.coach = coach
            self.predictions.as_it_comes = coach is not None and self.files.as_it_comes(source)  # for its checks
            self.session.breakpoints[str(self.files.path)] = self.predictions.breakpoints()
        self._began(Run(str(self.files.path), settings.get("history/budget_mb") * 2**20))
        self.resumed()
        return True

    def resumed(self, stepped: bool = False) -> None:
        """The lesson runs again; ``stepped`` when by a step, after which the line paused at is the one that ran."""
        self.prediction_bar.dismiss()  # answered (the verdict comes at the next pause) or stepped on unanswered
        self.code_view.set_read_only(True)
        self.shown.resumed(stepped)
        self.status.state_label.setText(tr("Running… (F6 pauses, Shift+F5 stops)"))
        self._changed()

