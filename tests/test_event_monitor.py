"""Breakpoints by ``sys.monitoring`` (Python 3.12+) pause where the ``sys.settrace`` tracer pauses."""

from __future__ import annotations

import sys

import pytest
from conftest import EventLog, line_of, use_tracer

from app import messages as m
from app.lesson.event_monitor import TOOL_IDS, EventMonitor
from app.session import Session

pytestmark = pytest.mark.skipif(not hasattr(sys, "monitoring"), reason="sys.monitoring is Python 3.12+")

#: How long a test waits for a message before it counts the run as hung (seconds).
BOUND = 30.0

HELPER = """
def helper(n):
    doubled = n * 2  # helper breakpoint
    return doubled
"""

SCRIPT = """
import threading
from helper import helper


def gen(n):
    for i in range(n):
        yield i  # in a generator


def work(n):
    total = 0
    for i in range(n): total += i  # one-line loop
    return total


def in_thread():
    return work(2)


worker = threading.Thread(target=in_thread)
worker.start()
worker.join()
values = [v for v in gen(3)]
result = work(3)
for k in range(4):
    if k % 2:
        odd = helper(k)  # conditional
after = 1  # run to here
print(result, values, odd, after)
"""


def _pauses(path: str, helper_path: str, backend: str, monkeypatch) -> tuple[list[tuple[str, int]], str]:
    """Continue from breakpoint to breakpoint to the end (a run-to at the 4th pause): where it paused, and stdout."""
    use_tracer(monkeypatch, backend)
    events = EventLog()
    session = Session(events, warm_spare=False, forked=False)  # a fresh interpreter reads the variable
    try:
        session.breakpoints[path] = {line_of(path, "# in a generator"): None, line_of(path, "# one-line loop"): None,
                                     line_of(path, "# conditional"): "k == 3"}
        session.breakpoints[helper_path] = {line_of(helper_path, "# helper breakpoint"): None}
        session.start(path, stop_on_entry=False)
        where = []
        while isinstance(message := events.wait((m.Paused, m.Ended), timeout=BOUND), m.Paused):
            where.append((message.snapshot["function"], message.snapshot["line"]))
            if len(where) == 4:
                session.run_to(line_of(path, "# run to here"))
            else:
                session.resume()
        assert message.status == "ok", message.error
        return where, events.output("stdout")
    finally:
        session.close()


def test_breakpoints_pause_where_the_line_tracer_pauses(lesson, monkeypatch):
    helper_path = lesson(HELPER, "helper.py")
    path = lesson(SCRIPT)
    monitored = _pauses(path, helper_path, "monitoring", monkeypatch)
    traced = _pauses(path, helper_path, "settrace", monkeypatch)
    assert monitored == traced
    where, output = monitored
    assert output == "3 [0, 1, 2] 6 1\n"
    one_line_loop = ("work", line_of(path, "# one-line loop"))
    # the thread's call of work() is not paused; the main thread's one-line loop pauses at each pass
    assert where.count(one_line_loop) == 4 and where[:3] == [("gen", line_of(path, "# in a generator"))] * 3


def test_a_pause_requested_while_monitored_lands_and_stepping_goes_on(session, events, lesson):
    path = lesson("""
    n = 0
    print("looping", flush=True)
    while True:
        n += 1
        if n > 10**9:
            break  # never reached: a breakpoint here keeps the monitor on
    after = 1
    """)
    session.breakpoints[path] = {line_of(path, "break  # never"): None}
    session.start(path, stop_on_entry=False)
    events.wait(m.Output, timeout=BOUND)  # in the loop, continuing under the monitor
    session.pause()
    paused = events.pause(timeout=BOUND)
    loop = [line_of(path, "while True"), line_of(path, "n += 1"), line_of(path, "if n >")]
    assert paused["line"] in loop
    lines = []
    for _ in range(4):  # stepping goes on from the pause, under sys.settrace
        session.step_over()
        lines.append(events.pause(timeout=BOUND)["line"])
    assert set(lines) <= set(loop) and len(set(lines)) >= 2


def test_the_lessons_own_tool_ids_are_left_free():
    import sys as interpreter

    taken = [tool for tool in range(6) if interpreter.monitoring.get_tool(tool) is not None]
    monitor = EventMonitor.create(lambda code: False, lambda code: frozenset(), lambda frame: None,
                                  lambda frame, event, arg: None)
    try:
        assert monitor is not None and monitor.tool in TOOL_IDS and monitor.tool not in taken
        for tool in (interpreter.monitoring.DEBUGGER_ID, interpreter.monitoring.COVERAGE_ID,
                     interpreter.monitoring.PROFILER_ID, interpreter.monitoring.OPTIMIZER_ID):
            assert interpreter.monitoring.get_tool(tool) is None
    finally:
        monitor.close()
    assert interpreter.monitoring.get_tool(monitor.tool) is None  # given back
