"""Real scripts run under the engine as they do with plain python: their files, imports, encodings and ends."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from conftest import line_of

from app.session import read_lesson
from app.trace import trace_records

MAIN = str(Path(__file__).resolve().parent.parent / "main.py")


def test_the_lesson_streams_are_real_files_and_keep_the_order_of_writes(session, events, lesson):
    path = lesson("""
    import faulthandler
    import os
    import sys
    sys.stdout.buffer.write(b"bytes\\n")
    print(sys.stdout.fileno(), sys.stderr.fileno(), sys.stdout.isatty())
    sys.stdout.reconfigure(encoding="utf-8")
    faulthandler.enable()
    print("one")
    sys.__stdout__.write("two\\n")
    os.write(1, b"three\\n")
    print("four", end="")
    os.write(1, b"!\\n")
    os.write(2, b"c-level error\\n")
    """)
    session.start(path, stop_on_entry=False)
    assert events.end().status == "ok"
    assert events.output("stdout") == "bytes\n1 2 False\none\ntwo\nthree\nfour!\n"
    assert events.output("stderr") == "c-level error\n"


@pytest.mark.parametrize("name", ["app", "widgets", "main"])
def test_the_learners_own_module_is_what_the_lesson_imports(session, events, lesson, name):
    lesson(f"WHO = 'the learner\\'s {name}'\n", f"{name}.py")
    path = lesson(f"""
    import torch
    import {name}
    print({name}.WHO)
    t = torch.ones(2)
    done = 1
    """)
    session.breakpoints[path] = {line_of(path, "done = 1"): None}
    session.start(path, stop_on_entry=False)
    snap = events.pause()
    assert events.output("stdout") == f"the learner's {name}\n"
    assert snap["vars"]["t"]["shape"] == [2]
    # the engine's own lazy imports (app.lesson.summaries for the values) still find the engine
    values = events.reply(session.request("values", expression="t"))
    assert values["ok"] and values["values"].tolist() == [1.0, 1.0]


def test_gradstep_is_not_on_the_lessons_path(session, events, lesson):
    root = str(Path(MAIN).parent)
    path = lesson(f"""
    import os
    import sys
    print([p for p in sys.path if os.path.realpath(p or os.curdir) == os.path.realpath({root!r})],
          "app" in sys.modules)
    """)
    session.start(path, stop_on_entry=False)
    assert events.end().status == "ok"
    assert events.output("stdout") == "[] False\n"


def test_a_file_with_a_coding_cookie_runs_and_reads_as_written(session, events, tmp_path):
    path = tmp_path / "latin.py"
    path.write_bytes("# -*- coding: latin-1 -*-\ns = 'café'\nprint(s, len(s))\n".encode("latin-1"))
    assert "s = 'café'" in read_lesson(str(path))
    session.start(str(path), stop_on_entry=False)
    assert events.end().status == "ok"
    assert events.output("stdout") == "café 4\n"


def test_a_trace_piped_into_head_ends_quietly(lesson):
    path = lesson("""
    total = 0
    for i in range(300):
        total += i
    """)
    done = subprocess.run(f'"{sys.executable}" "{MAIN}" --trace "{path}" | head -n 2', shell=True,
                          capture_output=True, encoding="utf-8", timeout=120)
    assert len(done.stdout.splitlines()) == 2
    assert done.stderr == ""


def test_an_error_inside_no_grad_shows_the_grad_mode_of_the_raising_line(session, events, lesson):
    path = lesson("""
    import torch
    x = torch.ones(2, requires_grad=True)
    with torch.no_grad():
        y = x * 2
        raise ValueError("inside no_grad")
    """)
    session.start(path, stop_on_entry=False)
    snap = events.pause()
    assert snap["post_mortem"] and snap["line"] == line_of(path, "raise ValueError")
    assert snap["grad_enabled"] is False
    assert snap["vars"]["y"]["requires_grad"] is False


def test_an_error_outside_no_grad_shows_grad_enabled(session, events, lesson):
    path = lesson("""
    import torch
    with torch.no_grad():
        y = torch.ones(2) * 2
    raise ValueError("after no_grad")
    """)
    session.start(path, stop_on_entry=False)
    snap = events.pause()
    assert snap["post_mortem"] and snap["grad_enabled"] is True


@pytest.mark.parametrize("source", ["", "# only a comment\n\n"])
def test_an_empty_file_says_it_has_nothing_to_run(lesson, source):
    path = lesson("x = 1\n")
    Path(path).write_text(source, encoding="utf-8")
    records = trace_records(path, timeout=60)
    assert [r["event"] for r in records] == ["end"] and records[0]["status"] == "empty"


def test_stepping_an_inlined_comprehension_warns_about_nothing(lesson):
    """On Python 3.12 reading a module frame's f_locals here reset ``seq`` to None, with a RuntimeWarning."""
    path = lesson("""
    import torch
    sequences = [[1, 2, 3], [4, 5]]
    lengths = torch.tensor([len(seq) for seq in sequences])
    total = int(lengths.sum())
    """)
    records = trace_records(path, timeout=60)
    assert records[-1]["status"] == "ok"
    assert "".join(r["stderr"] for r in records) == ""
    assert records[-2]["vars"]["total"]["value"] == 5


def test_a_stack_the_lesson_formats_starts_at_its_own_module_code(lesson):
    """torch's anomaly mode and traceback.print_stack() showed GradStep's runner frames below the lesson's."""
    path = lesson("""
    import traceback
    import warnings
    import torch

    def where():
        return traceback.format_stack()

    stack = where()
    print(len(stack), flush=True)
    leaf = torch.tensor([1.0, -1.0], requires_grad=True)
    with warnings.catch_warnings(record=True) as caught, torch.autograd.detect_anomaly():
        root = torch.sqrt(leaf)  # the forward call
        try:
            root.sum().backward()
        except RuntimeError:
            pass
    said = [line.strip() for w in caught for line in str(w.message).splitlines() if "File " in line]
    print(*said, sep="\\n")
    """)
    records = trace_records(path, timeout=60)
    assert records[-1]["status"] == "ok"
    # <module>, then where(); then the one frame of the forward call: as with plain python
    forward = line_of(path, "the forward call")
    assert "".join(r["stdout"] for r in records) == f'2\nFile "{path}", line {forward}, in <module>\n'
