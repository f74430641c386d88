"""A deep recursion: a pause reads the innermost frames only, and stepping through it stays right."""

from __future__ import annotations

from conftest import line_of

from app.lesson.tracer import STACK_LIMIT
from widgets.call_stack_view import CallStackView

DEPTH = 3000

RECURSION = f"""
import sys

sys.setrecursionlimit({DEPTH} + 1000)


def down(n):
    if n == 0:
        return 0  # bottom
    below = down(n - 1)
    return below + 1


print(down({DEPTH}))
"""


def test_a_pause_at_the_bottom_of_a_deep_recursion_shows_its_innermost_frames_and_says_the_rest_are_cut(
        session, events, lesson):
    path = lesson(RECURSION)
    session.breakpoints[path] = {line_of(path, "# bottom"): None}
    session.start(path, stop_on_entry=False)
    bottom = events.pause(timeout=60)
    assert len(bottom["stack"]) == STACK_LIMIT and bottom["stack_cut"] is True
    assert {frame["function"] for frame in bottom["stack"]} == {"down"}
    assert bottom["vars"]["n"]["repr"] == "0"
    # step out frame by frame: each lands on the line after the call in the caller, with its own n
    for n in (1, 2, 3):
        session.step_out()
        caller = events.pause(timeout=30)
        assert (caller["line"], caller["vars"]["n"]["repr"]) == (line_of(path, "return below + 1"), str(n))
    session.resume()
    assert events.end(timeout=60).status == "ok"
    assert events.output("stdout") == f"{DEPTH}\n"


def test_a_shallow_stack_is_shown_whole(session, events, lesson):
    path = lesson(RECURSION.replace(f"down({DEPTH}))", "down(3))"))
    session.breakpoints[path] = {line_of(path, "# bottom"): None}
    session.start(path, stop_on_entry=False)
    bottom = events.pause(timeout=60)
    assert [frame["function"] for frame in bottom["stack"]] == ["down"] * 4 + ["<module>"]
    assert "stack_cut" not in bottom


def test_the_call_stack_says_when_outer_frames_are_not_shown(qtbot):
    view = CallStackView()
    qtbot.addWidget(view)
    frames = [{"function": "down", "file": "/l/lesson.py", "line": 9}] * 3
    view.set_stack(frames, 0, cut=True)
    rows = [view.list.item(row) for row in range(view.list.count())]
    assert [row.text() for row in rows[-1:]] == ["… outer frames not shown"]
    assert len(rows) == 4 and not rows[-1].flags() & rows[-1].flags().ItemIsSelectable
    view.set_stack(frames, 0)
    assert view.list.count() == 3
