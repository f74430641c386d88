"""Exercise checks judge how a value was made: part by part, and through a fresh run of the lesson (engine, no Qt)."""

from __future__ import annotations

import queue
import shutil
from pathlib import Path

import pytest
from conftest import borrow, give_back

from app import messages as m

LESSONS = Path(__file__).resolve().parent.parent / "lessons"

LESSON = '''import torch
torch.manual_seed(0)
x = torch.tensor([1.0, 2.0], requires_grad=True)
with torch.no_grad():
    made = x * 2
drawn = torch.randn(3)
u = 3


def double(v):
    return v * 2


doubled = double(x)
tripled = (lambda v: v * 3)(x)
made = x.detach() * 2  # typed in after the lesson: a check at the end cannot tell
u = 4
'''


def run_checks(tmp_path: Path, checks: list[str]) -> list[dict]:
    """Run LESSON (with ``course.py`` beside it) to its end through the engine; its check results."""
    shutil.copy(LESSONS / "course.py", tmp_path / "course.py")
    path = tmp_path / "lesson.py"
    path.write_text(LESSON, encoding="utf-8")
    events: queue.Queue = queue.Queue()
    session = borrow(events.put)
    try:
        session.start(str(path), stop_on_entry=False, checks=checks)
        while not isinstance(message := events.get(timeout=60), m.Ended):
            pass
    finally:
        give_back(session)
    assert message.status == "ok", message.error
    return message.checks


@pytest.mark.timeout(120)
def test_a_false_check_names_its_first_false_part(tmp_path):
    first, second, raised = run_checks(tmp_path, ["u == 4 and made.grad_fn is None and x.grad is not None",
                                                  "u == 4", "u == 4 and missing"])
    assert (first["passed"], first["missing"]) == (False, "x.grad is not None")
    assert (second["passed"], second["missing"]) == (True, None)
    assert raised["passed"] is None and raised["error"].startswith("NameError")


@pytest.mark.timeout(120)
def test_a_check_reads_what_a_line_made_in_a_fresh_run_not_what_the_end_of_the_run_holds(tmp_path):
    checks = ["course.after('u = ', 'u') == [3, 4]",  # each time a line starting so ran, in file order
              "course.before('made = ', 'torch.is_grad_enabled()') == [False, True]",  # the grad mode it ran under
              "course.after('made = x * 2', 'made.grad_fn is None') == [True]",
              "course.after('return v * 2', 'v is x') == [True]",  # a line of a function, in its frame
              "course.after('drawn = ', 'torch.equal(drawn, __import__(\"__main__\").drawn)') == [True]",
              "course.after('drawn = ', 'torch.equal(drawn, __import__(\"__main__\").drawn)', hidden=True) == [False]",
              "course.after('nowhere', 'u') == []",
              "[torch.equal(value, x * 2) for value in course.returned('double')] == [True]",  # each call's result
              # the arguments of each call a line made
              "[torch.equal(call['v'], x) for call in course.calls('doubled = ', double)] == [True]",
              "course.after('tripled = ', 'tripled.tolist()') == [[3.0, 6.0]]",  # not again in the lambda's frame
              "course.after('u = ', 'undefined_name')[0].error.__class__.__name__ == 'NameError'"]
    results = run_checks(tmp_path, checks)
    assert [(r["passed"], r["error"]) for r in results] == [(True, None)] * len(checks), results


@pytest.mark.timeout(120)
def test_the_fresh_run_prints_nothing_and_leaves_the_grad_mode_as_it_found_it(tmp_path):
    shutil.copy(LESSONS / "course.py", tmp_path / "course.py")
    path = tmp_path / "lesson.py"
    path.write_text(LESSON.replace("u = 4\n", 'print("ran")\nu = 4\n'), encoding="utf-8")
    events: queue.Queue = queue.Queue()
    session = borrow(events.put)
    output = []
    try:
        session.start(str(path), stop_on_entry=False,
                      checks=["course.after('u = ', 'u') == [3, 4] and torch.is_grad_enabled()"])
        while not isinstance(message := events.get(timeout=60), m.Ended):
            if isinstance(message, m.Output):
                output.append(message.text)
    finally:
        give_back(session)
    assert message.checks[0]["passed"] is True, message.checks
    assert "".join(output).count("ran") == 1


COUNTED = '''import pathlib
import torch
runs = pathlib.Path(__file__).with_suffix(".runs")
runs.write_text((runs.read_text() if runs.exists() else "") + "run\\n")
u = 3
# check: course.after('u = ', 'u') == [3]
# check: course.before('u = ', "'u' in dir()") == [False] and course.returned('nothing') == []
'''


@pytest.mark.timeout(120)
def test_one_fresh_run_answers_every_question_of_the_lesson_s_check_lines(tmp_path):
    shutil.copy(LESSONS / "course.py", tmp_path / "course.py")
    path = tmp_path / "lesson.py"
    path.write_text(COUNTED, encoding="utf-8")
    checks = [line.removeprefix("# check: ") for line in COUNTED.splitlines() if line.startswith("# check: ")]
    events: queue.Queue = queue.Queue()
    session = borrow(events.put)
    try:
        session.start(str(path), stop_on_entry=False, checks=checks)
        while not isinstance(message := events.get(timeout=60), m.Ended):
            pass
    finally:
        give_back(session)
    assert [c["passed"] for c in message.checks] == [True, True], message.checks
    assert (tmp_path / "lesson.runs").read_text().splitlines() == ["run", "run"]  # the lesson's run, and one more
