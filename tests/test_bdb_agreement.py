"""Step into pauses where CPython's ``bdb`` stops in step mode, but where GradStep differs on purpose."""

from __future__ import annotations

from pathlib import Path

import pytest
from bdb_steps import bdb_pauses, gradstep_pauses, on_purpose

LESSONS = Path(__file__).resolve().parent.parent / "lessons"
#: Scripts where a pause of GradStep once differed from bdb's (plain Python only: each runs twice).
SCRIPTS = {
    "decorators": """
    import functools

    def shout(function):
        @functools.wraps(function)
        def wrapper(*args):
            result = function(*args)
            return result
        return wrapper

    @shout
    def double(x):
        return 2 * x

    class Box:
        @staticmethod
        def make():
            return 1

    y = double(3)
    b = Box.make()
    """,
    "generator-close": """
    def numbers():
        try:
            yield 1
            yield 2
        finally:
            done = True

    gen = numbers()
    first = next(gen)
    gen.close()
    after = 1
    """,
    "exit-in-finally": """
    import sys
    try:
        x = 1
    finally:
        sys.exit(0)
    """,
    "exit": """
    import sys
    x = 1
    sys.exit(3)
    """,
    "comprehensions": """
    def norms(rows):
        lengths = [len(row) for row in rows]
        pairs = {k: v for k, v in zip(rows, lengths)}
        return sum(n for n in lengths)

    result = norms(["ab", "c", "def"])
    grid = [[i * j for j in range(2)] for i in range(2)]  # inlined at module level since Python 3.12 (PEP 709)
    evens = {n for n in range(4) if n % 2 == 0}
    """,
}

#: How many of bdb's pauses in each script GradStep leaves out on purpose (so the exception is not vacuous).
LEFT_OUT = {"decorators": 3, "exit-in-finally": 1, "exit": 1}


@pytest.mark.parametrize("name", SCRIPTS)
def test_step_into_pauses_where_bdb_stops(lesson, name):
    path = lesson(SCRIPTS[name])
    theirs = bdb_pauses(path)
    assert gradstep_pauses(path) == on_purpose(theirs, path)
    assert len(theirs) - len(on_purpose(theirs, path)) == LEFT_OUT.get(name, 0)


def test_closing_a_generator_pauses_where_generator_exit_is_raised(lesson):
    path = lesson(SCRIPTS["generator-close"])
    ours = gradstep_pauses(path)
    assert (3, "exception", "GeneratorExit") in ours  # at the yield it was suspended at: why the finally runs


@pytest.mark.parametrize("name", ["01_dynamic_graphs.py", "12_custom_function.py"])
def test_step_into_pauses_where_bdb_stops_in_the_lessons_that_once_differed(name):
    """Lesson 1 differed by the frames anomaly mode names (GradStep's own, once); lesson 12 by its
    @staticmethod forward and backward, which gradcheck calls again and again."""
    path = str(LESSONS / name)
    assert gradstep_pauses(path) == on_purpose(bdb_pauses(path), path)
