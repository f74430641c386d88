"""The engine's reads at a pause are invisible to the lesson: its torch modes, subclasses and Dynamo see none."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import line_of

from app import messages as m

ROOT = Path(__file__).resolve().parent.parent

MODE_LESSON = """
import torch
from {module} import {base}

class Count({base}):
    def __init__(self):
        super().__init__()
        self.n = 0

    def {handler}(self, func, types, args=(), kwargs=None):
        self.n += 1
        return func(*args, **(kwargs or {{}}))

x = torch.ones(3, requires_grad=True)
with Count() as counter:
    y = x * 2
    z = y.sum()              # inside the mode
    w = z + 1
print("ops counted", counter.n)
"""
FUNCTION_MODE = MODE_LESSON.format(module="torch.overrides", base="TorchFunctionMode", handler="__torch_function__")
DISPATCH_MODE = MODE_LESSON.format(module="torch.utils._python_dispatch", base="TorchDispatchMode",
                                   handler="__torch_dispatch__")

SUBCLASS = """
import torch

calls = []

class Logged(torch.Tensor):
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        calls.append(getattr(func, "__name__", str(func)))
        return super().__torch_function__(func, types, args, kwargs or {})

x = torch.ones(3).as_subclass(Logged)
y = x * 2
z = y.sum()
print("ops counted", len(calls))
"""

COMPILED = """
import torch
import torch._dynamo.utils

def f(x):
    y = x * 2
    z = y + 1
    return z.sum()

g = torch.compile(f, backend="eager")
x = torch.ones(3)
out = g(x)
out2 = g(x)
counters = torch._dynamo.utils.counters
print("frames", dict(counters["frames"]), "graphs", counters["stats"].get("unique_graphs"))
"""


#: What each lesson source printed with plain python, by its text: tests stepping the same source share it.
_printed: dict[str, str] = {}


def plain(path: str) -> str:
    """What ``python path`` prints (run once per source text)."""
    source = Path(path).read_text(encoding="utf-8")
    if source not in _printed:
        env = dict(os.environ, PYTHONPATH=str(ROOT))
        _printed[source] = subprocess.run([sys.executable, path], capture_output=True, text=True, check=True,
                                          env=env, timeout=120).stdout
    return _printed[source]


def stepped(session, events, path: str, step) -> str:
    """Run ``path`` pausing at every step ``step(session)`` takes, to the end; what it printed."""
    session.start(path)
    while True:
        message = events.wait((m.Paused, m.Ended), timeout=120)
        if isinstance(message, m.Ended):
            assert message.status == "ok", message.error
            return events.output("stdout")
        step(session)


@pytest.mark.parametrize("source", [FUNCTION_MODE, DISPATCH_MODE, SUBCLASS],
                         ids=["torch-function-mode", "dispatch-mode", "torch-function-subclass"])
def test_stepping_every_line_counts_the_ops_a_plain_run_counts(session, events, lesson, source):
    path = lesson(source)
    expected = plain(path)
    assert expected.startswith("ops counted")
    assert stepped(session, events, path, lambda s: s.step_into()) == expected


@pytest.mark.parametrize("step", ["step_into", "step_over"])
def test_a_compiled_function_stepped_compiles_what_a_plain_run_compiles(session, events, lesson, step):
    path = lesson(COMPILED)
    expected = plain(path)
    assert "'total': 1" in expected
    assert stepped(session, events, path, lambda s: getattr(s, step)()) == expected


def test_a_breakpoint_condition_and_watches_are_not_counted(session, events, lesson):
    path = lesson(FUNCTION_MODE.replace("    w = z + 1", "    w = z + 1\n    v = w * 1"))
    expected = plain(path)
    inside = line_of(path, "inside the mode")
    session.breakpoints[os.path.abspath(path)] = {inside: "x.sum() > 0 and y.mean() > 0"}
    session.start(path, stop_on_entry=False)
    assert events.pause()["line"] == inside
    session.resume(watches=["w * 2", "z.exp()"])  # watch checks at every line until a value changes
    while True:
        message = events.wait((m.Paused, m.Ended))
        if isinstance(message, m.Ended):
            break
        session.resume(watches=["w * 2", "z.exp()"])
    assert events.output("stdout") == expected


def test_console_code_is_the_learners_and_goes_through_the_lesson_mode(session, events, lesson):
    path = lesson(FUNCTION_MODE)
    counted = int(plain(path).split()[-1])
    inside = line_of(path, "inside the mode")
    session.breakpoints[os.path.abspath(path)] = {inside: None}
    session.start(path, stop_on_entry=False)
    events.pause()
    assert events.reply(session.request("evaluate", expression="x * 3"))["ok"]
    assert events.reply(session.request("evaluate", expression="q = x + 1"))["ok"]
    session.resume()
    assert events.end().status == "ok"
    assert events.output("stdout") == f"ops counted {counted + 2}\n"


def test_trace_cli_stepping_a_mode_prints_the_plain_count(lesson):
    path = lesson(DISPATCH_MODE)
    expected = plain(path)
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    out = subprocess.run([sys.executable, str(ROOT / "main.py"), "--trace", path], capture_output=True,
                         text=True, env=env, timeout=300).stdout
    printed = "".join(json.loads(line).get("stdout", "") for line in out.splitlines())
    assert expected.startswith("ops counted") and printed == expected
