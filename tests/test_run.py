"""The run model without Qt: what one run keeps, what a change from outside the lesson adds, and time travel over it."""

from __future__ import annotations

import queue

import pytest

from app import messages as m
from app.run import Run
from app.session import Session
from app.transcript import Transcript


def pause(step: int, line: int, **values) -> dict:
    variables = {name: {"type": "int", "repr": repr(value)} for name, value in values.items()}
    return {"step": step, "line": line, "event": "line", "file": "lesson.py", "function": "<module>", "depth": 0,
            "stack": [{"function": "<module>", "line": line}], "vars": variables, "globals": {},
            "graph": {"changed": False, "added": [], "updated": [], "removed": [], "edges_added": [],
                      "roots": {}, "leaves": {}}}


def test_a_run_keeps_the_live_pause_the_output_before_it_and_the_end():
    run = Run("lesson.py")
    run.feed(m.Output("stdout", "hello\n"))
    run.feed(m.Paused(pause(1, 1)))
    run.feed(m.Output("stderr", "warn\n"))
    run.feed(m.Paused(pause(2, 2, a=1)))
    run.feed(m.Output("stdout", "bye\n"))
    ended = m.Ended("ok")
    run.feed(ended)
    assert run.live["line"] == 2 and run.ended is ended and run.is_over
    assert run.output_before_pause == [("stderr", "warn\n")] and run.output_since_pause == [("stdout", "bye\n")]
    assert run.transcript.text() == "hello\nwarn\nbye\n"
    assert len(run.history) == 2 and run.history.snapshot(1)["output"] == [("stdout", "hello\n"), ("stderr", "warn\n")]


def test_a_change_from_outside_the_lesson_is_a_step_of_its_own_that_the_diff_with_live_sees():
    """Run backward() from the Backward panel, step back, Diff with live: it said "nothing changed"."""
    run = Run("lesson.py")
    for step in (1, 2, 3):
        run.add_pause(pause(step, step, a=step))
    changed = {"vars": {"a": {"type": "int", "repr": "30"}}, "globals": {}, "graph": {}}
    index = run.add_change("backward", changed)
    assert index == 3 and run.marks[3] == "action" and run.live["changed_by"] == "backward"
    assert run.step_back() and run.viewing == 2
    assert run.diff_with_live()["vars"]["changed"] == ["a"]
    assert run.history.snapshot(3)["vars"]["a"]["repr"] == "30"


def test_a_reply_without_variables_is_no_step():
    run = Run("lesson.py")
    run.add_pause(pause(1, 1))
    assert run.add_change("preview", {"ok": True, "graph": {}}) is None
    assert len(run.history) == 1


def test_viewing_the_past_and_going_live_tell_the_observers_once_each():
    run = Run("lesson.py")
    seen: list[int | None] = []
    run.on_viewed.append(seen.append)
    for step in range(1, 6):
        run.add_pause(pause(step, step))
    run.view(1)
    run.view(1)  # already in view: nothing to tell
    assert run.past(1)[0]["line"] == 2 and run.past(1)[1] == 1
    run.step_back()
    assert not run.step_back()  # the first step has none before it
    run.go_live()
    run.go_live()
    run.view(99)  # past the newest: the live view, already shown
    assert seen == [1, 0, None]


def test_a_new_pause_returns_to_the_live_view_but_a_recorded_one_does_not():
    run = Run("lesson.py")
    recorded: list[tuple[int, bool]] = []
    run.on_recorded.append(lambda index, recording: recorded.append((index, recording)))
    run.add_pause(pause(1, 1))
    run.add_pause(pause(2, 2))
    run.view(0)
    run.add_pause({**pause(3, 3), "recording": True})
    assert run.viewing == 0
    run.add_pause(pause(4, 4))
    assert run.viewing is None
    assert recorded == [(0, False), (1, False), (2, True), (3, False)]


def test_marks_follow_the_pauses_and_leave_with_the_dropped_ones():
    run = Run("lesson.py", budget_bytes=64 * 1024)
    run.add_pause({**pause(1, 1), "breakpoint": True})
    run.add_pause({**pause(2, 2), "event": "exception"})
    assert run.marks == {0: "breakpoint", 1: "exception"}
    for step in range(3, 600):
        run.add_pause(pause(step, step, **{f"v{i}": step * 1000 + i for i in range(20)}))
    assert run.first_index > 1 and all(index >= run.first_index for index in run.marks)


def test_a_run_without_history_keeps_the_live_state_only():
    run = Run("lesson.py", budget_bytes=None)
    assert run.add_pause(pause(1, 1)) == -1
    assert run.live["line"] == 1 and not run.can_step_back() and run.diff_with_live() is None


def test_the_transcript_keeps_every_kind_of_entry_in_order_and_within_its_limit():
    transcript = Transcript(limit=270)  # a result counts 200
    told: list = []
    transcript.listeners.append(told.append)
    transcript.add_message("▶ Running lesson.py")
    transcript.add_output("stdout", "x" * 60)
    transcript.add_echo("a + 1")
    transcript.add_result("a + 1", {"ok": True, "value": {"type": "int", "repr": "2"}})
    assert [entry[0] for entry in transcript.entries] == ["output", "echo", "result"]  # the message went over 270
    assert transcript.dropped == 1 and len(told) == 4
    transcript.clear()
    assert len(transcript) == 0 and told[-1] is None


@pytest.mark.timeout(60)
def test_each_run_of_a_session_has_its_own_generation(tmp_path):
    """The window tells the messages of one run from the next's by the session's generation."""
    lesson = tmp_path / "lesson.py"
    lesson.write_text("print('one')\n", encoding="utf-8")
    events: queue.Queue = queue.Queue()
    session = Session(lambda message: events.put((session.generation, message)), warm_spare=False)
    try:
        session.start(str(lesson), stop_on_entry=False)
        first = session.generation
        while not isinstance((item := events.get(timeout=30))[1], m.Ended):
            assert item[0] == first
        session.start(str(lesson), stop_on_entry=False)
        assert session.generation == first + 1
    finally:
        session.close()


def test_the_step_before_is_the_one_before_in_the_history_whichever_step_was_shown_last():
    """Variables compared a step with whatever it showed before, so going live from the past tinted
    every name that differed from the past step."""
    run = Run("lesson.py")
    for step in range(1, 6):
        run.add_pause(pause(step, step, a=step))
    assert run.before()["step"] == 4  # the live step's
    run.view(1)
    assert run.past(1)[0]["step"] == 2 and run.before(1)["step"] == 1
    assert run.before(3)["step"] == 3 and run.before(0) is None  # the first step has none before it
    run.go_live()
    assert run.before()["step"] == 4
    run.add_change("console", {"vars": {"a": {"type": "int", "repr": "50"}}, "globals": {}, "graph": {}})
    assert run.before()["step"] == 5 and run.before()["vars"]["a"]["repr"] == "5"
    inside = {**pause(6, 9, b=1), "function": "f", "stack": [{"function": "f", "line": 9}] * 2}
    run.add_pause(inside)
    assert run.before() is None and run.before(run.live_index) is None  # another frame: nothing to compare with
    run.end(m.Ended("ok", variables={"a": {"type": "int", "repr": "7"}}))
    assert run.before() is None  # the end shows the module; the last pause was in f
