"""Stepping commands of the engine: into, over, out, continue, breakpoints, run to line, pause."""

from __future__ import annotations

import time

import pytest
from conftest import line_of

from app import messages as m

FUNCS = """
import torch
def square(v):
    w = v * v          # in square
    return w

def outer(v):
    a = square(v)      # call square
    b = a + 1          # after square
    return b

x = torch.tensor([1.0, 2.0], requires_grad=True)
y = outer(x)           # call outer
z = y.sum()            # after outer
"""


def positions(events, session, count):
    """(event, function, line) of the next ``count`` pauses, stepping into each time."""
    seen = []
    for _ in range(count):
        snap = events.pause()
        seen.append((snap["event"], snap["function"], snap["line"]))
        session.step_into()
    return seen


def test_step_into_visits_every_event_in_user_frames(session, events, lesson):
    path = lesson(FUNCS)
    session.start(path)
    seen = positions(events, session, 9)
    call_outer = line_of(path, "call outer")
    assert seen[0] == ("line", "<module>", 1)
    assert ("line", "<module>", call_outer) in seen
    assert ("call", "outer", line_of(path, "def outer")) in seen
    assert ("line", "outer", line_of(path, "call square")) in seen
    assert ("call", "square", line_of(path, "def square")) in seen
    assert ("line", "square", line_of(path, "in square")) in seen
    # every pause of the lesson is in the lesson file: torch's own frames never pause
    assert all(isinstance(s.snapshot, dict) and s.snapshot["file"] == path
               for s in events.seen if isinstance(s, m.Paused))


def test_step_over_skips_the_call_and_step_out_returns_to_caller(session, events, lesson):
    path = lesson(FUNCS)
    session.breakpoints[path] = {line_of(path, "call square"): None}
    session.start(path, stop_on_entry=False)
    snap = events.pause()
    assert (snap["function"], snap["line"], snap["depth"]) == ("outer", line_of(path, "call square"), 1)
    session.step_over()
    snap = events.pause()
    assert (snap["function"], snap["line"]) == ("outer", line_of(path, "after square"))
    assert snap["vars"]["a"]["values"].tolist() == [1.0, 4.0]
    assert "returned" not in snap  # a step over does not claim a return
    session.step_out()
    snap = events.pause()
    assert (snap["function"], snap["line"]) == ("<module>", line_of(path, "after outer"))
    assert snap["vars"]["y"]["grad_fn"] == "AddBackward0"
    # where a step out lands, the value the function returned (as VS Code shows it)
    assert snap["returned"]["function"] == "outer"
    assert snap["returned"]["value"]["values"].tolist() == [2.0, 5.0]
    session.step_over()
    assert "returned" not in events.pause()
    session.resume()
    assert events.end().status == "ok"


def test_step_over_from_a_return_lands_in_the_caller(session, events, lesson):
    path = lesson(FUNCS)
    session.breakpoints[path] = {line_of(path, "return w"): None}
    session.start(path, stop_on_entry=False)
    assert events.pause()["function"] == "square"
    session.step_over()
    snap = events.pause()
    assert (snap["event"], snap["function"]) == ("return", "square")
    session.step_over()
    snap = events.pause()
    assert (snap["function"], snap["line"]) == ("outer", line_of(path, "after square"))


def test_stack_lists_user_frames_innermost_first_and_frames_can_be_selected(session, events, lesson):
    path = lesson(FUNCS)
    session.breakpoints[path] = {line_of(path, "in square"): None}
    session.start(path, stop_on_entry=False)
    snap = events.pause()
    assert [f["function"] for f in snap["stack"]] == ["square", "outer", "<module>"]
    assert [f["line"] for f in snap["stack"]] == [line_of(path, "in square"), line_of(path, "call square"),
                                                 line_of(path, "call outer")]
    assert set(snap["vars"]) == {"v"}
    result = events.reply(session.request("frame", index=2))
    assert result["function"] == "<module>"
    assert "x" in result["vars"] and "outer" not in result["vars"]  # functions hidden
    result = events.reply(session.request("frame", index=2, show_hidden=True))
    assert "outer" in result["vars"] and "torch" in result["vars"]


def test_breakpoint_condition_is_evaluated_in_the_frame(session, events, lesson):
    path = lesson("""
    total = 0
    for i in range(10):
        total += i     # loop body
    done = True
    """)
    session.breakpoints[path] = {line_of(path, "loop body"): "i == 7"}
    session.start(path, stop_on_entry=False)
    snap = events.pause()
    assert snap["vars"]["i"]["value"] == 7
    assert snap["vars"]["total"]["value"] == sum(range(7))
    session.resume()
    assert events.end().status == "ok"


def test_broken_condition_pauses_and_says_why(session, events, lesson):
    path = lesson("""
    a = 1
    b = 2
    """)
    session.breakpoints[path] = {2: "undefined_name > 0"}
    session.start(path, stop_on_entry=False)
    snap = events.pause()
    assert snap["line"] == 2
    assert snap["condition_error"]["type"] == "NameError"


def test_run_to_line_and_breakpoint_set_while_paused(session, events, lesson):
    path = lesson("""
    a = 1
    b = 2
    c = 3
    d = 4
    e = 5
    """)
    session.start(path)
    assert events.pause()["line"] == 1
    session.run_to(3)
    assert events.pause()["line"] == 3
    session.set_breakpoints(path, {5: None})
    session.resume()
    snap = events.pause()
    assert snap["line"] == 5 and snap["vars"]["d"]["value"] == 4
    session.resume()
    assert events.end().status == "ok"


def test_continue_without_breakpoints_runs_to_the_end(session, events, lesson):
    path = lesson("""
    s = 0
    for i in range(1000):
        s += i
    print(s)
    """)
    session.start(path)
    events.pause()
    session.resume()
    assert events.end().status == "ok"
    assert events.output("stdout") == "499500\n"


def test_pause_interrupts_an_infinite_loop_at_a_user_line(session, events, lesson):
    path = lesson("""
    n = 0
    while True:
        n += 1
        if n == 1000:
            print("looping", flush=True)
    """)
    session.start(path, stop_on_entry=False)
    events.wait(m.Output)
    session.pause()
    snap = events.pause(timeout=10)
    assert snap["line"] in (2, 3, 4, 5)
    assert snap["vars"]["n"]["value"] >= 1000
    session.stop()


def test_breakpoints_of_two_files_with_the_same_text_are_each_their_own(session, events, lesson):
    """Two helper files of the same text compile to code objects that compare (and hash) equal:
    each file's breakpoints still stop only in that file."""
    helper = "def scale(x):\n    y = x * 2\n    return y\n"
    first, second = lesson(helper, "copy_a.py"), lesson(helper, "copy_b.py")
    path = lesson("""
    import copy_a, copy_b
    b = copy_b.scale(1)
    a = copy_a.scale(2)
    """)
    session.breakpoints[first] = {2: None}
    session.breakpoints[second] = {3: None}
    session.start(path, stop_on_entry=False)
    seen = []
    for _ in range(2):
        snap = events.pause()
        seen.append((snap["file"], snap["line"], snap["vars"]["x"]["value"]))
        session.resume()
    assert seen == [(second, 3, 1), (first, 2, 2)]
    assert events.end().status == "ok"

def test_breakpoint_added_while_running_is_hit(session, events, lesson):
    path = lesson("""
    n = 0
    while True:
        n += 1
        if n > 1_000_000:
            n = 0
    """)
    session.start(path, stop_on_entry=False)
    events.wait(m.Started)
    session.set_breakpoints(path, {5: None})
    snap = events.pause(timeout=30)
    assert snap["line"] == 5


@pytest.mark.parametrize("body", ["while True:\n    pass\n",
                                  "import torch\na = torch.rand(3000, 3000)\nwhile True:\n    a = a @ a\n"])
def test_stop_ends_a_busy_lesson_within_a_second(session, events, lesson, body):
    path = lesson(body)
    session.start(path, stop_on_entry=False)
    events.wait(m.Started)
    process = session._process.process
    started = time.monotonic()
    session.stop()
    elapsed = time.monotonic() - started
    assert events.end().status == "stopped"
    assert process.poll() is not None
    assert elapsed < 1.0


def test_restart_gives_a_fresh_interpreter(session, events, lesson):
    path = lesson("""
    import sys
    first = not hasattr(sys, "gradstep_marker")
    sys.gradstep_marker = True
    print("fresh" if first else "leaked")
    """)
    session.start(path, stop_on_entry=False)
    assert events.end().status == "ok"
    first_pid = session._process.pid
    session.restart()
    assert events.end().status == "ok"
    assert session._process.pid != first_pid
    assert events.output("stdout") == "fresh\nfresh\n"


def test_record_reports_every_step_without_waiting_then_pauses(session, events, lesson):
    path = lesson("""
    total = 0
    for i in range(5):
        total += i
    done = total
    """)
    session.start(path)
    events.pause()
    session.record(limit=6)
    recorded = [events.pause() for _ in range(7)]
    assert [s["recording"] for s in recorded] == [True] * 6 + [False]
    assert [s["line"] for s in recorded] == [2, 3, 2, 3, 2, 3, ][:6] + [2]
    assert recorded[-1]["vars"]["total"]["value"] == 3 and session.state == "paused"


def test_pause_ends_a_recording_of_an_endless_loop(session, events, lesson):
    path = lesson("""
    n = 0
    while True:
        n += 1
    """)
    session.start(path)
    events.pause()
    session.record()
    for _ in range(50):
        assert events.pause()["recording"]
    session.pause()
    while events.pause()["recording"]:
        pass
    assert session.state == "paused"
    session.step_into()
    assert not events.pause()["recording"]


def test_continue_with_a_watch_stops_where_its_value_changes(session, events, lesson):
    path = lesson("""
    import torch
    w = torch.ones(2, requires_grad=True)
    for i in range(3):
        loss = (w * i).sum()
    loss.backward()        # grad appears
    copy = w.grad.clone()
    w.grad.zero_()         # grad zeroed
    done = True
    """)
    session.start(path)
    events.pause()
    session.resume(watches=["w.grad"])
    # w.grad could not be evaluated when the run continued; getting its first value (None, once w
    # exists) is not a change: the first change is backward() filling it
    snap = events.pause()
    assert snap["watch_changed"] == ["w.grad"] and snap["line"] == line_of(path, "copy =")
    assert snap["vars"]["w"]["grad"]["values"].tolist() == [2.0, 2.0]
    session.resume(watches=["w.grad", "undefined_name"])
    snap = events.pause()
    assert snap["watch_changed"] == ["w.grad"] and snap["line"] == line_of(path, "done =")
    session.resume(watches=["w.grad"])
    assert events.end().status == "ok"


def test_imports_run_untraced_and_pausing_still_works_after_them(session, events, lesson):
    # the engine's own trace function, past the sys.gettrace() the lesson sees (its own: None)
    lesson("""
    import sys
    TRACE_DURING_IMPORT = sys.gettrace.__wrapped__()
    """, "probe.py")
    path = lesson("""
    import sys
    import probe
    untraced_during_import = probe.TRACE_DURING_IMPORT is None
    monitored = hasattr(sys, "monitoring") and any(sys.monitoring.get_events(tool) for tool in (3, 4))
    traced_after_import = sys.gettrace.__wrapped__() is not None or monitored
    after = 1
    """)
    session.breakpoints[path] = {line_of(path, "after = 1"): None}
    session.start(path, stop_on_entry=False)
    snap = events.pause()
    assert snap["vars"]["untraced_during_import"]["value"] is True
    assert snap["vars"]["traced_after_import"]["value"] is True


def all_pauses(session, events) -> list[dict]:
    """Every pause of a run stepped into to its end."""
    pauses = []
    while True:
        message = events.wait((m.Paused, m.Ended))
        if isinstance(message, m.Ended):
            return pauses
        pauses.append(message.snapshot)
        session.step_into()


def test_exception_pauses_are_the_raised_exception_never_the_one_being_handled(session, events, lesson):
    """The tracer read sys.exc_info(), the exception being *handled*: every finished ``yield from``
    paused as an "exception" (the interpreter's own StopIteration), and an exception raised inside
    ``except StopIteration:`` was hidden."""
    path = lesson("""
        def inner():
            yield 1

        def outer():
            yield from inner()
            return "done"

        values = list(outer())
        try:
            next(iter([]))                      # a StopIteration the lesson raises itself
        except StopIteration:
            try:
                raise ValueError("bad value")   # raised while handling
            except ValueError:
                pass
    """)
    session.start(path)
    pauses = all_pauses(session, events)
    raised = [(p["line"], p["exception"]) for p in pauses if p["event"] == "exception"]
    assert raised == [(line_of(path, "raises itself"), {"type": "StopIteration", "message": ""}),
                      (line_of(path, "raised while handling"), {"type": "ValueError", "message": "bad value"})]
    assert all(p["exception"] is None for p in pauses if p["event"] != "exception")


def test_step_into_a_decorated_function_pauses_in_its_body_not_on_the_decorator(session, events, lesson):
    path = lesson("""
        import functools

        class Shapes:
            @staticmethod
            def area(w, h):
                return w * h          # the body

        def logged(fn):
            @functools.wraps(fn)
            def inner(*args):
                return fn(*args)      # the wrapper's body
            return inner

        @logged
        def double(x):
            return 2 * x              # double's body

        a = Shapes.area(2, 3)
        b = double(a)
    """)
    session.start(path)
    pauses = all_pauses(session, events)
    lines = [(p["event"], p["function"], p["line"]) for p in pauses]
    assert ("line", "area", line_of(path, "the body")) in lines
    assert ("line", "double", line_of(path, "double's body")) in lines
    decorators = {n for n, text in enumerate(open(path, encoding="utf-8").read().splitlines(), 1)
                  if text.lstrip().startswith("@")}
    # applying a decorator is a line of the class or function body that does it; entering one is not
    assert not [entry for entry in lines if entry[2] in decorators and entry[0] == "call"]


def test_a_return_event_says_whether_the_frame_returns_yields_awaits_or_raises(session, events, lesson):
    """A yield, an await and a frame unwinding with an exception were all shown as "returned"."""
    path = lesson("""
        import asyncio

        def numbers():
            yield 1                 # yields

        async def main():
            await asyncio.sleep(0)  # awaits
            return 3                # returns

        def fails():
            raise KeyError("k")     # raises

        values = list(numbers())
        result = asyncio.run(main())
        try:
            fails()
        except KeyError:
            pass
    """)
    session.start(path)
    kinds = [(p["function"], p["line"], p["return_kind"], p["exception"])
             for p in all_pauses(session, events) if p["event"] == "return"]
    yields = line_of(path, "# yields")
    # the generator yields, then returns at the end of its body (the same line)
    assert [k for k in kinds if k[0] == "numbers"] == [("numbers", yields, "yield", None),
                                                        ("numbers", yields, "return", None)]
    assert ("main", line_of(path, "# awaits"), "await", None) in kinds
    assert ("main", line_of(path, "# returns"), "return", None) in kinds
    assert ("fails", line_of(path, "# raises"), "raise", {"type": "KeyError", "message": "'k'"}) in kinds


def test_step_over_an_await_goes_to_the_coroutines_next_line(session, events, lesson):
    """Stepping over an await paused at the suspension as "returning from main(), value None"."""
    path = lesson("""
        import asyncio

        async def main():
            await asyncio.sleep(0)  # the await
            done = True             # after it
            return done

        asyncio.run(main())
    """)
    session.breakpoints[path] = {line_of(path, "the await"): None}
    session.start(path, stop_on_entry=False)
    assert events.pause()["line"] == line_of(path, "the await")
    session.step_over()
    snap = events.pause()
    assert (snap["event"], snap["function"], snap["line"]) == ("line", "main", line_of(path, "after it"))
