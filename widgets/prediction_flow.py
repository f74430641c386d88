"""The course's questions during a run: asked before a ``# predict:`` line runs, judged after it, checks at the end.

A :class:`PredictionFlow` holds the run's :class:`~app.coach.Coach` (the lesson's predictions
and exercise checks), asks in the prediction bar when a pause reaches a question's line,
judges the answer once the line has run (the lesson process evaluates the expression), and
says in the run's output what was right, skipped, or passed by Record to End.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from app import messages as m
from app.coach import Coach
from app.i18n import tr
from app.lesson_format import LessonFormatError, Prediction, parse_lesson
from app.progress import Progress
from app.requests import Requests
from app.session import Session
from app.transcript import Transcript
from widgets.code_view import CodeView
from widgets.graph_groups import same_file
from widgets.notes_view import NotesView
from widgets.prediction_bar import PredictionBar, check_text, verdict_text


class PredictionFlow:
    """The predictions and checks of the run on screen.

    Parameters
    ----------
    session, requests
        The engine session (breakpoints at the questions' lines) and the window's questions to it.
    bar, notes_view, code_view
        Where a question is asked, the note that explains its answer, and the code's breakpoints.
    progress
        Where answers are recorded.
    transcript
        The run's output, where verdicts and skips are said.
    asked
        Called when a question is asked (the status bar says to answer it).
    """

    def __init__(self, session: Session, requests: Requests, bar: PredictionBar, notes_view: NotesView,
                 code_view: CodeView, progress: Progress, transcript: Callable[[], Transcript],
                 asked: Callable[[], None]) -> None:
        self.session, self.requests, self.bar = session, requests, bar
        self.notes_view, self.code_view, self.progress = notes_view, code_view, progress
        self._transcript, self._asked = transcript, asked
        self.coach: Coach | None = None
        self.as_it_comes = False  # the run is of a bundled lesson as it comes: its exercises are not tried yet
        self.steps_into = False
        """The learner pressed Step Into while the open question waited: its answer runs the line that way."""
        """The predictions and exercise checks of the current run, when its lesson has any."""

    def coach_for(self, source: str, path: Path, asking: bool) -> Coach | None:
        """A coach for a run of ``source``, if it is a lesson with predictions or checks."""
        try:
            lesson = parse_lesson(source if "\n" in source else source + "\n")
        except LessonFormatError:
            return None
        if not lesson.predictions and not lesson.checks:
            return None
        return Coach(lesson, path.stem, self.progress, asking)

    def breakpoints(self) -> dict[int, str | None]:
        """The code view's breakpoints and the lines whose predictions are still to be asked."""
        breakpoints = dict(self.code_view.breakpoints())
        for line in self.coach.stop_lines() if self.coach else ():
            breakpoints.setdefault(line, None)
        return breakpoints

    def set_asking(self, asking: bool, path: Path | None) -> None:
        """Run > Ask Predictions: whether runs stop to ask before a line with ``# predict:`` runs."""
        if self.coach is None:
            return
        self.coach.asking = asking
        if not asking:
            self.bar.dismiss()
        if path is not None:
            self.session.set_breakpoints(str(path), self.breakpoints())

    def answered(self, answer: str) -> bool:
        """The learner answered the question in the bar; True when the line may now run."""
        if self.coach is None or self.bar.prediction is None:
            return False
        self.coach.answer(self.bar.prediction, answer)
        self.bar.dismiss()  # answered: the step that runs the line is no longer held up
        return True

    def skipped(self, prediction: Prediction) -> str:
        """The learner skipped the question; returns what the status bar says."""
        if self.coach is not None:
            self.coach.skip()
        self._transcript().add_message(lambda: tr("Skipped the prediction on line {line} ({expr}): not judged",
                                                  line=prediction.line, expr=prediction.expression))
        return tr("Skipped the question on line {line}; the line has not run yet — F10 runs it, F11 steps into it",
                  line=prediction.line)

    def say_passed(self) -> None:
        """After Record to End: how many predictions it passed without asking, in the output."""
        passed = self.coach.take_passed() if self.coach else []
        if passed:
            lines = ", ".join(str(p.line) for p in passed)
            self._transcript().add_message(lambda: tr(
                "Record to End skipped {n} prediction(s) without asking, on line(s) {lines}: step through the "
                "lesson (F10) to be asked", n=len(passed), lines=lines))

    def judge(self, snapshot: dict[str, Any], judged: Callable[[str], None]) -> None:
        """At the pause ``snapshot``: if the line a prediction waited for has run, ask the lesson whether the
        answer was right.

        ``judged`` is called with the verdict, in words.
        """
        waiting = self.coach.take_waiting(snapshot) if self.coach else None
        if waiting is None:
            return
        prediction, answer = waiting
        coach = self.coach

        def show(result: dict[str, Any]) -> None:
            verdict = coach.verdict(prediction, answer, result)
            self.bar.show_verdict(verdict)
            self.notes_view.explain(prediction.line, prediction.expression)  # the note after the line may say why
            right = verdict.right
            self._transcript().add_message(lambda: verdict_text(verdict),
                                           "info" if right is None else "success" if right else "error")
            judged(verdict_text(verdict))

        self.requests.ask("predict", show, expression=prediction.expression, answer=answer)

    def ask(self, snapshot: dict[str, Any], path: Path | None) -> None:
        """A pause reached a question's line: ask it (once per run)."""
        if self.coach is None or path is None or not same_file(snapshot.get("file", ""), str(path)):
            return
        prediction = self.coach.question_at(snapshot, snapshot.get("file", ""))
        if prediction is not None:
            self.steps_into = False
            self.bar.ask(prediction)
            self._asked()
            self.session.set_breakpoints(str(path), self.breakpoints())

    def say_checks(self, ended: m.Ended) -> bool:
        """The run's exercise checks, in its output; True when there were any."""
        if self.coach is None or not ended.checks:
            return False
        untried = self.as_it_comes
        for result in self.coach.check_results(ended.checks):
            self._transcript().add_message(lambda r=result: check_text(r, untried),
                                           "success" if result.passed else "info")
        return True
