"""The learner's progress through the course: predictions answered right, exercises passed and backward drills
answered, per lesson.

Kept in a JSON file in the user's data folder, so it survives restarts; a lesson's progress
can be reset. A prediction or check is named by the key the lesson gives it
(:meth:`app.lesson_format.Lesson.prediction_key`), so editing a lesson keeps what was done.
Each change reads the file again first, so two windows on one data folder keep each other's records.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class LessonProgress:
    """How far the learner got in one lesson."""

    right: int
    """Predictions answered right (the last answer of each counts)."""
    answered: int
    """Predictions answered at all."""
    passed: int
    """Exercises whose check was true at the end of a run."""
    drills_right: int = 0
    """Backward drill questions answered right (the last answer of each counts)."""
    drills_answered: int = 0
    """Backward drill questions answered at all (a lesson has no fixed number of them: each backward asks its own)."""


class Progress:
    """Progress per lesson (by file stem), read from and written to ``path``.

    A file that cannot be read (missing, not JSON) is an empty progress, never an error.
    """

    def __init__(self, path: str | os.PathLike) -> None:
        self.path = Path(path)
        self._data: dict[str, dict[str, dict[str, Any]]] = self._load()

    def _load(self) -> dict[str, dict[str, dict[str, Any]]]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def _lesson(self, lesson: str) -> dict[str, dict[str, Any]]:
        entry = self._data.setdefault(lesson, {})
        entry.setdefault("predictions", {})
        entry.setdefault("checks", {})
        entry.setdefault("drills", {})
        return entry

    def record_prediction(self, lesson: str, key: str, right: bool) -> None:
        """The learner's answer to prediction ``key`` of ``lesson`` was ``right`` (or not)."""
        self._record(lesson, "predictions", key, right)

    def record_drill(self, lesson: str, key: str, right: bool) -> None:
        """The learner's answer to backward drill question ``key`` of ``lesson`` was ``right`` (or not)."""
        self._record(lesson, "drills", key, right)

    def _record(self, lesson: str, section: str, key: str, right: bool) -> None:
        """The last answer to question ``key`` of a section counts."""
        self._reload()
        self._lesson(lesson)[section][key] = bool(right)
        self._save()

    def record_checks(self, lesson: str, results: dict[str, bool]) -> None:
        """Exercise checks of ``lesson`` evaluated at the end of a run: key → passed. A pass stays a pass."""
        self._reload()
        checks = self._lesson(lesson)["checks"]
        for key, passed in results.items():
            checks[key] = bool(passed) or bool(checks.get(key))
        self._save()

    def of(self, lesson: str) -> LessonProgress:
        entry = self._data.get(lesson, {})
        predictions = entry.get("predictions", {})
        checks = entry.get("checks", {})
        drills = entry.get("drills", {})
        return LessonProgress(right=sum(1 for v in predictions.values() if v), answered=len(predictions),
                              passed=sum(1 for v in checks.values() if v),
                              drills_right=sum(1 for v in drills.values() if v), drills_answered=len(drills))

    def check_passed(self, lesson: str, key: str) -> bool:
        return bool(self._data.get(lesson, {}).get("checks", {}).get(key))

    def reset(self, lesson: str) -> None:
        """Forget everything done in ``lesson``."""
        self._reload()
        if self._data.pop(lesson, None) is not None:
            self._save()

    def _reload(self) -> None:
        """Before a change: the progress as the file has it now, so that what another window recorded
        since this one read it is kept, not overwritten."""
        self._data = self._load()

    def _save(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        temporary = self.path.with_suffix(".tmp")
        temporary.write_text(json.dumps(self._data, ensure_ascii=False, indent=1), encoding="utf-8")
        os.replace(temporary, self.path)
