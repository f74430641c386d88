"""A prediction is asked before it is told: the notes shown while GradStep asks do not hold the answer.

While GradStep waits for the learner's answer, the run is paused on the prediction's line and
the notes view shows :func:`app.lesson_format.notes_for_line` for that line: the nearest notes
cell above it. That cell, in English and in Chinese, must not state the right answer (the one
``tests/test_exercises.py`` judges right); a lesson tells it in the notes cell after the line,
read once the line has run. A paraphrase ("a node named after the operation") is beyond a
test; a value written out is not.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest
from test_exercises import ANSWERS

from app.lesson_format import LANGUAGES, notes_after, notes_for_line, parse_lesson

LESSONS = Path(__file__).resolve().parent.parent / "lessons"
LESSON_FILES = sorted(LESSONS.glob("[0-9][0-9]_*.py"))

_NUMBER = r"(?:[-+]?(?:\d+\.?\d*|\.\d+)(?:e[-+]?\d+)?|[-+]?inf|nan)"
#: A bracketed run of numbers in text or in an answer: ``[0., 1., 4.]``, ``(3, 5, 3)``, ``[1, 2, 3]``.
_NUMBER_LIST = re.compile(rf"[\[(]\s*((?:{_NUMBER})(?:\s*,\s*(?:{_NUMBER}))*)\s*,?\s*[\])]")
_SCALAR = re.compile(rf"^(?:{_NUMBER})$")


def _numbers(text: str) -> list[float]:
    return [float(n) for n in re.findall(_NUMBER, text)]


def _same(left: list[float], right: list[float]) -> bool:
    return len(left) == len(right) and all(
        (math.isnan(a) and math.isnan(b)) or math.isclose(a, b, rel_tol=1e-3, abs_tol=1e-3)
        for a, b in zip(left, right, strict=True))


def tells(answer: str, notes: str) -> bool:
    """Whether ``notes`` state ``answer``, the way it could be written in a note.

    A tensor, list or shape is stated when the notes hold the same numbers in brackets
    (``[1, 2, 3]`` states ``tensor([1., 2., 3.])``); a number of two characters or more when
    it stands alone (``13``, ``0.5``, ``4 MB`` for ``4.0``); a single digit is too common in
    prose to count. Anything else (a node's name, ``True``, a line of code) is stated when it
    appears as a whole word.
    """
    text = notes.replace("`", "")
    listed = [_numbers(group) for group in _NUMBER_LIST.findall(answer)]
    if listed:
        inner = listed[-1]  # [[0., 0., 0.]] states its innermost row
        return any(_same(inner, _numbers(group)) for group in _NUMBER_LIST.findall(text))
    if _SCALAR.match(answer):
        if len(answer) < 2:
            return False
        value = float(answer)
        return any(_same([value], [float(n)]) for n in re.findall(rf"(?<![\w.]){_NUMBER}(?!\w|\.\d)", text))
    # A keyword argument (``create_graph=True``) is code the note quotes, not a value it states.
    return re.search(rf"(?<![\w.=]){re.escape(answer)}(?!\w)", text) is not None


# ---- the rule on small texts -------------------------------------------------------------------


@pytest.mark.parametrize(("answer", "notes", "told"), [
    ("MulBackward0", "`b.grad_fn` is `MulBackward0`.", True),
    ("MulBackward0", "a node named after the operation", False),
    ("False", "`decision` requires grad: False.", True),
    ("False", "GradStep asks whether `z` is a leaf.", False),
    ("True", "By hand with `create_graph=True` (lesson 8)", False),
    ("tensor([1., 2., 3.])", "so `y.grad` holds the values of `x`, [1, 2, 3].", True),
    ("tensor([1., 2., 3.])", "`x` is [1, 2, 3, 4]", False),
    ("[[0., 0., 0.]]", "it stays [0, 0, 0]", True),
    ("(3, 5, 3)", "the shape is (3, 5, 3)", True),
    ("13", "Step 0 found 13: nine of its own", True),
    ("13", "lesson 13", True),
    ("13", "130 nodes", False),
    ("4.0", "so 4 MB in all", True),
    ("0.5", "`max_norm` 0.5", True),
    ("1", "lesson 1", False),
    ("inf", "an infinite gradient", False),
    ("inf", "its gradient at 0 is inf.", True),
    ("logged", "the first one, `logged`", True),
    ("logged", "`first_nan` names a step", False),
])
def test_what_counts_as_telling_the_answer(answer, notes, told):
    assert tells(answer, notes) is told


# ---- every prediction of every lesson ----------------------------------------------------------


@pytest.mark.parametrize("path", LESSON_FILES, ids=lambda p: p.stem)
def test_the_notes_shown_at_a_prediction_do_not_state_its_answer(path):
    lesson = parse_lesson(path)
    told = []
    for prediction, entry in zip(lesson.predictions, ANSWERS[path.stem], strict=True):
        for lang in LANGUAGES:
            if tells(entry[1], notes_for_line(lesson, prediction.line, lang)):
                told.append(f"line {prediction.line} [{lang}]: {prediction.expression} = {entry[1]}")
    assert told == [], "the note shown while GradStep asks already tells the answer"


#: Per lesson, the n-th prediction (0-based): how its answer is worked out, per language. The
#: notes shown while GradStep asks must not hold it; the note after the line does.
WORKINGS: dict[tuple[str, int], dict[str, list[str]]] = {
    ("07_backward", 0): {lang: ["2 * w * x**2", "2 * h * x", "2 * h"] for lang in LANGUAGES},
    ("07_backward", 2): {lang: ["u @ A", "A[i, j]"] for lang in LANGUAGES},
    ("11_inplace_version", 0): {"en": ["counts the in-place changes", "from 0"],
                                "zh": ["被原地修改的次数", "从 0 开始"]},
}


@pytest.mark.parametrize(("stem", "index"), sorted(WORKINGS), ids=lambda v: str(v))
def test_the_notes_shown_at_a_prediction_do_not_work_out_its_answer(stem, index):
    """Lesson 7 asked for w.grad under "dloss/dw = 2 * w * x**2"; lesson 11 for b._version under "starting from 0"."""
    lesson = parse_lesson(LESSONS / f"{stem}.py")
    line = lesson.predictions[index].line
    for lang, workings in WORKINGS[stem, index].items():
        shown = notes_for_line(lesson, line, lang).replace("`", "")
        after = notes_after(lesson, line).text[lang].replace("`", "")
        assert [w for w in workings if w in shown] == [], (lang, "told while asking")
        assert [w for w in workings if w not in after] == [], (lang, "the note after the line explains it")


# ---- the Variables view at a prediction ---------------------------------------------------------


def _shown_values(summary: dict) -> list[str]:
    """What the Variables view shows of one variable that could read as an answer: a string or a number whole.

    A tensor's row shows a preview and statistics, not an answer to compare: the values a tensor answer
    states are the notes' business (above). True, False and None are too common to count.
    """
    if summary.get("type") == "str" and isinstance(summary.get("value"), str):
        return [summary["value"]]
    value = summary.get("value")
    if isinstance(value, int | float) and not isinstance(value, bool):
        return [repr(value)]
    return []


def shows(answer: str, variables: dict[str, dict]) -> list[str]:
    """The variables whose shown value is ``answer`` (a name, or a number of two characters or more)."""
    found = []
    for name, summary in variables.items():
        for shown in _shown_values(summary):
            if _SCALAR.match(answer) and _SCALAR.match(shown):
                if len(answer) >= 2 and _same([float(answer)], [float(shown)]):
                    found.append(name)
            elif shown == answer and answer not in ("True", "False", "None"):
                found.append(name)
    return found


@pytest.mark.parametrize(("answer", "variables", "found"), [
    ("logged", {"name": {"type": "str", "value": "logged"}}, ["name"]),
    ("logged", {"logged": {"type": "Tensor", "shape": [4]}}, []),  # the row of the value, not the answer
    ("13", {"nodes": {"type": "int", "value": 13}}, ["nodes"]),
    ("1", {"count": {"type": "int", "value": 1}}, []),
    ("-1.0", {"z": {"type": "float", "value": -1.0}}, ["z"]),
    ("None", {"first_nan": {"type": "NoneType", "value": None}}, []),
])
def test_what_counts_as_a_variable_showing_the_answer(answer, variables, found):
    assert shows(answer, variables) == found


@pytest.mark.timeout(600)
def test_the_variables_shown_at_a_prediction_do_not_hold_its_answer(tmp_path):
    """Lesson 1 asked ``first_nan`` on ``first_nan = name`` while Variables showed ``name = 'logged'``."""
    import queue
    import shutil

    from conftest import borrow, give_back

    from app import messages as m

    shutil.copy(LESSONS / "course.py", tmp_path / "course.py")
    shown = []
    for path in LESSON_FILES:
        lesson = parse_lesson(path)
        copy = tmp_path / path.name
        copy.write_text(path.read_text(encoding="utf-8"), encoding="utf-8")
        answers = {p.line: (p.expression, entry[1])
                   for p, entry in zip(lesson.predictions, ANSWERS[path.stem], strict=True)}
        pending = dict.fromkeys(answers)
        events: queue.Queue = queue.Queue()
        session = borrow(events.put)
        try:
            session.breakpoints[str(copy)] = dict(pending)
            session.start(str(copy), stop_on_entry=False)
            while not isinstance(message := events.get(timeout=120), m.Ended):
                if not isinstance(message, m.Paused):
                    continue
                snapshot = message.snapshot
                line = snapshot["line"]
                if snapshot["event"] == "line" and snapshot["file"] == str(copy) and line in pending:
                    del pending[line]  # asked once per run
                    session.set_breakpoints(str(copy), dict(pending))
                    expression, answer = answers[line]
                    names = shows(answer, {**snapshot["globals"], **snapshot["vars"]})
                    if names:
                        shown.append(f"{path.stem} line {line}: {expression} = {answer} is shown as {names}")
                session.resume()
        finally:
            give_back(session)
        assert message.status == "ok", (path.stem, message.error)
    assert shown == [], "the Variables view shows the answer while GradStep asks"
