"""Stepping through ``sys.monitoring`` (Python 3.12+) pauses where stepping through ``sys.settrace`` pauses.

Each script runs in a fresh lesson process under each backend (``GRADSTEP_TRACER=settrace`` for the
line tracer) and is walked to its end by step into, by step over, and by four steps into then a
step out; the pauses (function, line, event, exception) must be the same, one for one.
"""

from __future__ import annotations

import sys

import pytest
from conftest import EventLog, line_of, use_tracer

from app import messages as m
from app.session import Session

pytestmark = pytest.mark.skipif(not hasattr(sys, "monitoring"), reason="sys.monitoring is Python 3.12+")

#: How long a test waits for a message before it counts the run as hung (seconds).
BOUND = 60.0
#: A walk longer than this is a stepping loop that never ends.
MOST_PAUSES = 3000

SCRIPTS = {
    "flow": """
    def classify(n):
        if n % 3 == 0:
            return "fizz"
        elif n % 5 == 0:
            return "buzz"
        return str(n)

    out = []
    i = 0
    while i < 7:
        i += 1
        if i == 2:
            continue
        if i == 6:
            break
        out.append(classify(i))
    else:
        out.append("never")
    for j in range(3): out.append(j)  # a one-line loop
    total = sum(x for x in range(4))
    squares = [k * k for k in range(3)]
    pairs = {k: v for k, v in zip("ab", (1, 2))}
    match out:
        case [first, *rest]:
            head = first
        case _:
            head = None
    inc = lambda z: z + 1
    bumped = inc(len(out))
    """,
    "exceptions": """
    class Oops(Exception):
        pass

    def inner(x):
        if x > 1:
            raise Oops(x)
        return x

    def middle(x):
        try:
            return inner(x)
        except Oops:
            return -1
        finally:
            done = True

    def deep(n):
        return n if n == 0 else deep(n - 1)

    values = [middle(1), middle(2)]
    try:
        inner(5)
    except Oops:
        caught = True
    with open(__file__, encoding="utf-8") as handle:
        first = handle.readline()
    d = deep(3)
    try:
        {}["missing"]
    except KeyError:
        pass
    """,
    "generators": """
    import functools

    def count(n):
        try:
            for i in range(n):
                got = yield i
                if got:
                    yield got * 10
        finally:
            closed = True

    def relay():
        result = yield from count(2)
        return result

    g = count(3)
    a = next(g)
    b = g.send(4)
    c = next(g)
    g.close()
    h = count(5)
    next(h)
    try:
        h.throw(ValueError("stop"))
    except ValueError:
        thrown = True
    r = list(relay())

    def shout(function):
        @functools.wraps(function)
        def wrapper(*args):
            return function(*args)
        return wrapper

    class Box:
        size = 2

        @shout
        def grow(self):
            self.size += 1
            return self

    box = Box().grow().grow()
    """,
    "coroutines": """
    import asyncio

    async def tick(n):
        await asyncio.sleep(0)
        return n + 1

    async def main():
        a = await tick(1)
        b = await asyncio.gather(tick(2), tick(3))
        return a, b

    result = asyncio.run(main())
    """,
    # On 3.12 a line whose branches meet again (a conditional expression) has its line event again
    # after a Python function it called returns, and sys.settrace reports it (lesson 22's pack hook).
    "rejoined-line": """
    import textwrap

    def store(tensor):
        return tensor

    def make(pack):
        kept = []

        def noting(tensor):
            stored = tensor if pack is None else pack(tensor)
            if tensor not in kept:
                kept.append(tensor)
            return stored
        return noting

    a = make(store)(1)
    b = make(None)(2)
    c = make(abs)(-3)
    d = make(textwrap.dedent)(" x")
    """,
}

WALKS = {"into": ("step_into",), "over": ("step_over",), "out": ("step_into",) * 4 + ("step_out",)}


def _walk(path: str, backend: str, walk: tuple[str, ...], monkeypatch) -> tuple[list[tuple], str]:
    """The pauses of ``path`` walked to its end by repeating ``walk`` (``("record",)``: one recording
    from the first pause), and how the run ended."""
    use_tracer(monkeypatch, backend)
    events = EventLog()
    session = Session(events, warm_spare=False, forked=False)  # a fresh interpreter reads the variable
    try:
        session.start(path)
        where: list[tuple] = []
        while isinstance(message := events.wait((m.Paused, m.Ended), timeout=BOUND), m.Paused):
            snapshot = message.snapshot
            exception = snapshot["exception"]["type"] if snapshot.get("exception") else None
            where.append((snapshot["function"], snapshot["line"], snapshot["event"], exception))
            assert len(where) < MOST_PAUSES, where[-20:]
            if walk == ("record",):
                if len(where) == 1:
                    session.record()
            else:
                getattr(session, walk[(len(where) - 1) % len(walk)])()
        return where, message.status
    finally:
        session.close()


@pytest.mark.parametrize("walk", sorted(WALKS))
@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_stepping_pauses_where_the_line_tracer_pauses(lesson, monkeypatch, name, walk):
    path = lesson(SCRIPTS[name])
    monitored = _walk(path, "monitoring", WALKS[walk], monkeypatch)
    traced = _walk(path, "settrace", WALKS[walk], monkeypatch)
    assert monitored == traced
    pauses, status = monitored
    assert status == "ok" and len(pauses) >= 3


@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_a_recording_pauses_where_stepping_into_with_the_line_tracer_pauses(lesson, monkeypatch, name):
    """A recording resumes each step from the frame it paused in without arming anything anew: the same pauses."""
    path = lesson(SCRIPTS[name])
    recorded = _walk(path, "monitoring", ("record",), monkeypatch)
    assert recorded == _walk(path, "settrace", ("step_into",), monkeypatch)
    assert recorded[1] == "ok" and len(recorded[0]) >= 3


def test_the_lessons_own_monitoring_tool_counts_what_it_counts_under_plain_python(lesson, monkeypatch):
    """A lesson's own ``sys.monitoring`` tool (with ``DISABLE`` after the first event) sees what it sees plainly."""
    path = lesson("""
    import sys

    mon = sys.monitoring
    seen = []

    def started(code, offset):
        seen.append(code.co_name)
        return mon.DISABLE

    def work(n):
        return n + 1

    mon.use_tool_id(mon.PROFILER_ID, "lesson")
    mon.register_callback(mon.PROFILER_ID, mon.events.PY_START, started)
    mon.set_events(mon.PROFILER_ID, mon.events.PY_START)
    for k in range(3):
        work(k)
    mon.set_events(mon.PROFILER_ID, 0)
    print(seen.count("work"), "work" in seen)
    """)
    events = EventLog()
    use_tracer(monkeypatch, "monitoring")
    session = Session(events, warm_spare=False, forked=False)
    try:
        session.start(path)
        while isinstance(events.wait((m.Paused, m.Ended), timeout=BOUND), m.Paused):
            session.step_into()
        assert events.output("stdout") == "1 True\n"
    finally:
        session.close()


def test_a_pause_that_lands_while_the_lesson_prints_pauses_on_a_lesson_line(lesson):
    """The pause signal's handler runs inside the engine's output writer, under the breakpoints' events;
    switching to stepping there once reported the handler's own line as the lesson's (the run crashed)."""
    path = lesson("""
    n = 0
    while True:
        n += 1
        print(n, flush=True)
        if n > 10**9:
            break  # never reached: a breakpoint here keeps the monitor on
    """)
    loop = {line_of(path, "while True"), line_of(path, "n += 1"), line_of(path, "print(n"), line_of(path, "if n >")}
    for _ in range(5):
        events = EventLog()
        session = Session(events, warm_spare=False)
        try:
            session.breakpoints[path] = {line_of(path, "break  # never"): None}
            session.start(path, stop_on_entry=False)
            events.wait(m.Output, timeout=BOUND)
            session.pause()
            lines = [events.pause(timeout=BOUND)["line"]]
            for _ in range(3):
                session.step_over()
                lines.append(events.pause(timeout=BOUND)["line"])
            assert set(lines) <= loop
        finally:
            session.close()
