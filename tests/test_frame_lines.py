"""``line_of`` gives what ``frame.f_lineno`` gives, for every frame on the stack at every event."""

from __future__ import annotations

import sys

import pytest

from app.lesson.frame_lines import line_of

SOURCE = '''
def gen(n):
    for i in range(n):
        yield i
    return n

def work(n):
    total = 0
    for v in gen(n):
        if v % 2:
            total += v
        else:
            total -= v
    try:
        raise ValueError(total)
    except ValueError:
        total = [x * 2
                 for x in range(3)]
    while n:
        n -= 1
    return total

result = work(4)
'''


def _run(check) -> list[tuple]:
    seen: list[tuple] = []

    def compare(frame) -> None:
        while frame is not None:
            if frame.f_code.co_filename == "<lines>":
                seen.append((frame.f_code.co_name, line_of(frame), frame.f_lineno))
            frame = frame.f_back

    check(compare)
    return seen


def _settrace(compare) -> None:
    def trace(frame, event, arg):
        compare(frame)
        return trace

    sys.settrace(trace)
    try:
        exec(compile(SOURCE, "<lines>", "exec"), {})
    finally:
        sys.settrace(None)


def _monitoring(compare) -> None:
    monitoring = sys.monitoring
    tool = next(i for i in range(6) if monitoring.get_tool(i) is None)
    monitoring.use_tool_id(tool, "test")
    events = monitoring.events

    def callback(*_args):
        compare(sys._getframe(1))

    for event in (events.LINE, events.PY_START, events.PY_RETURN, events.PY_YIELD, events.JUMP, events.RAISE):
        monitoring.register_callback(tool, event, callback)
    monitoring.set_events(tool, events.LINE | events.PY_START | events.PY_RETURN | events.PY_YIELD | events.JUMP
                          | events.RAISE)
    try:
        exec(compile(SOURCE, "<lines>", "exec"), {})
    finally:
        monitoring.set_events(tool, 0)
        monitoring.free_tool_id(tool)


def test_line_of_is_f_lineno_at_every_settrace_event_for_every_frame_on_the_stack() -> None:
    seen = _run(_settrace)
    assert len(seen) > 100
    assert [(name, mine) for name, mine, _ in seen] == [(name, real) for name, _, real in seen]


def test_line_of_is_f_lineno_for_frames_no_tracer_traces() -> None:
    seen = []

    def compare(frame) -> None:
        while frame is not None:
            seen.append((frame.f_code.co_name, line_of(frame), frame.f_lineno))
            frame = frame.f_back

    def outer():
        compare(sys._getframe())
        values = [inner(i)
                  for i in range(2)]
        return values

    def inner(i):
        if i:
            compare(sys._getframe())
        return (lambda: compare(sys._getframe()))()

    outer()
    assert len(seen) > 10
    assert [(name, mine) for name, mine, _ in seen] == [(name, real) for name, _, real in seen]


@pytest.mark.skipif(sys.version_info < (3, 12), reason="sys.monitoring is Python 3.12+")
def test_line_of_is_f_lineno_at_every_monitoring_event_for_every_frame_on_the_stack() -> None:
    seen = _run(_monitoring)
    assert len(seen) > 100
    assert {line for _, line, _ in seen} >= {4, 5, 11, 13, 15, 18, 19, 21, 23}  # yields, loops, raise, comprehension
    assert [(name, mine) for name, mine, _ in seen] == [(name, real) for name, _, real in seen]
