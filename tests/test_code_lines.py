"""Which lines can pause, found by compiling the lesson (nothing of it runs)."""

from __future__ import annotations

from app.code_lines import breakpoint_line, code_lines, prints_only

SOURCE = '''"""A lesson."""
import torch

# a comment

def f(x):
    """Its docstring."""
    return x * 2
'''


def test_lines_with_code_include_nested_functions_and_leave_out_comments_and_docstrings():
    lines = code_lines(SOURCE)
    assert {1, 2, 6, 8} <= lines
    assert not lines & {3, 4, 5, 7}


def test_a_breakpoint_line_is_the_line_or_the_next_with_code():
    assert breakpoint_line(SOURCE, 2) == 2
    assert breakpoint_line(SOURCE, 3) == 6
    assert breakpoint_line(SOURCE, 7) == 8
    assert breakpoint_line(SOURCE + "# the end\n", 9) is None


def test_a_source_that_does_not_compile_takes_the_line_as_it_is_and_runs_nothing(tmp_path):
    marker = tmp_path / "ran"
    source = f"open({str(marker)!r}, 'w')\ndef broken(:\n"
    assert code_lines(source) is None
    assert breakpoint_line(source, 1) == 1
    assert not marker.exists()


def test_prints_only_is_true_for_nothing_or_prints_between_and_false_for_any_other_statement():
    source = "x = 1  # predict: x\nprint(x)\nprint('y', x)\n\ny = x\nfor i in range(2):\n    print(i)\n"
    assert prints_only(source, 1, 4) and prints_only(source, 4, 5)
    assert not prints_only(source, 1, 6)  # y = x
    assert not prints_only(source, 5, 8)  # a loop of prints is a loop: it may run for long
    assert not prints_only("x = (\n", 0, 9)  # mid-edit: no early note
