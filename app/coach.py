"""Predict, then step: which of a lesson's predictions to ask at a pause, the answer waiting for its line, the verdicts.

One :class:`Coach` follows one run of a lesson. At a pause on a line that ends with
``# predict: EXPR`` it hands out the question once per run; the learner's answer waits until
the line has run, then the lesson process judges it (request ``predict``) and the coach
turns the reply into a verdict and the learner's progress. At the end of the run it turns
the exercise checks' results into progress too. Plain Python: the window shows what it says.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from app.lesson_format import Check, Lesson, Prediction
from app.progress import Progress


@dataclass(frozen=True)
class Verdict:
    """What the learner is told once a predicted line has run."""

    prediction: Prediction
    answer: str
    right: bool | None
    """None when the expression could not be evaluated (then ``value`` says why)."""
    value: str


@dataclass(frozen=True)
class CheckResult:
    """One exercise check at the end of a run."""

    check: Check
    passed: bool | None
    """None when the check itself raised (``error`` says what)."""
    error: str | None = None
    done_before: bool = False
    """Whether an earlier run passed it: a pass stays a pass, so a false check is not "not yet"."""
    missing: str | None = None
    """When it is false: the part of the check that is still false, what the exercise still lacks."""


class Coach:
    """The predictions and checks of one run of ``lesson`` (file stem ``stem``), recorded in ``progress``."""

    def __init__(self, lesson: Lesson, stem: str, progress: Progress, asking: bool = True) -> None:
        self.lesson = lesson
        self.stem = stem
        self.progress = progress
        self.asking = asking
        self.asked: set[int] = set()
        """Lines whose prediction was asked in this run (a loop asks once)."""
        self.waiting: tuple[Prediction, str] | None = None
        """An answer given, waiting for its line to run."""
        self._asked_depth = 0  # the stack depth of the pause that asked the last question
        self.passed: list[Prediction] = []
        """Predictions a recording ran past without asking, not yet reported."""

    def question_at(self, snapshot: dict[str, Any], lesson_file: str) -> Prediction | None:
        """The prediction to ask at this pause, if any (each once per run); asking it counts it as asked.

        A recording asks nothing: a prediction it runs past counts as asked and joins :attr:`passed`.
        """
        if not self.asking or snapshot.get("post_mortem"):
            return None
        if snapshot.get("event") != "line" or snapshot.get("file") != lesson_file:
            return None
        prediction = self.lesson.prediction_at(snapshot["line"])
        if prediction is None or prediction.line in self.asked:
            return None
        self.asked.add(prediction.line)
        if snapshot.get("recording"):
            self.passed.append(prediction)
            return None
        self._asked_depth = snapshot.get("depth", 0)
        return prediction

    def take_passed(self) -> list[Prediction]:
        """The predictions a recording ran past since the last call, once."""
        passed, self.passed = self.passed, []
        return passed

    def stop_lines(self) -> set[int]:
        """Lines a run should stop at so their predictions are asked: those not asked yet."""
        if not self.asking:
            return set()
        return {p.line for p in self.lesson.predictions} - self.asked

    def answer(self, prediction: Prediction, answer: str) -> None:
        """The learner answered; the verdict comes once the line has run."""
        self.waiting = (prediction, answer.strip())

    def skip(self) -> None:
        """The learner stepped on without answering (or asked to skip)."""
        self.waiting = None

    def take_waiting(self, snapshot: dict[str, Any]) -> tuple[Prediction, str] | None:
        """The answer to judge at this pause, once: when the line it waited for has run.

        A pause in a function the line calls (the learner stepped into it) is not that yet: the
        answer waits until the run is back in the line's frame, or below it.
        """
        if self.waiting is not None and snapshot.get("depth", 0) > self._asked_depth \
                and not snapshot.get("post_mortem"):
            return None
        waiting, self.waiting = self.waiting, None
        return waiting

    def verdict(self, prediction: Prediction, answer: str, reply: dict[str, Any]) -> Verdict:
        """The verdict of the lesson process's reply to ``predict``, recorded in the progress."""
        if not reply.get("ok"):
            error = reply.get("error") or {}
            return Verdict(prediction, answer, None, f"{error.get('type', 'Error')}: {error.get('message', '')}")
        right = bool(reply.get("right"))
        self.progress.record_prediction(self.stem, self.lesson.prediction_key(prediction), right)
        return Verdict(prediction, answer, right, str(reply.get("shown", "")))

    def checks(self) -> list[str]:
        """The expressions the run evaluates at its end."""
        return [check.expression for check in self.lesson.checks]

    def check_results(self, results: list[dict[str, Any]] | None) -> list[CheckResult]:
        """The end of the run's check results, recorded in the progress."""
        if not results or len(results) != len(self.lesson.checks):
            return []
        keys = [self.lesson.check_key(check) for check in self.lesson.checks]
        found = [CheckResult(check, result.get("passed"), result.get("error"),
                             self.progress.check_passed(self.stem, key), result.get("missing"))
                 for check, result, key in zip(self.lesson.checks, results, keys, strict=True)]
        self.progress.record_checks(self.stem, {key: bool(r.passed) for key, r in zip(keys, found, strict=True)})
        return found
