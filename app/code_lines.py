"""Which lines of a lesson can pause: the lines that have bytecode once the source is compiled.

Used on both sides: the lesson process asks it of the code it is about to run (an empty
lesson has none), the app of the text in the editor (where a breakpoint can go). Compiling
runs nothing of the lesson; a source that does not compile (the learner is mid-edit) has no
known lines, and callers then take a line as it is.
"""

from __future__ import annotations

import ast
import warnings
from types import CodeType


def executable_lines(code: CodeType) -> set[int]:
    """The lines that have bytecode anywhere in a compiled module, nested code included."""
    lines = {line for _, _, line in code.co_lines() if line is not None}
    for const in code.co_consts:
        if isinstance(const, CodeType):
            lines |= executable_lines(const)
    return lines


def code_lines(source: str) -> set[int] | None:
    """The 1-based lines of ``source`` with code, nested functions and classes included; None if it does not compile."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # a SyntaxWarning is the lesson's to show, when it runs
            code = compile(source, "<lesson>", "exec", dont_inherit=True)
    except (SyntaxError, ValueError):
        return None
    return {line for line in executable_lines(code) if line > 0}  # line 0: the module's own start


def breakpoint_line(source: str, line: int) -> int | None:
    """Where a breakpoint asked for on ``line`` can pause: that line or the next one with code.

    None when no line from ``line`` on has code (a comment at the end of the file); ``line``
    itself when the source does not compile.
    """
    lines = code_lines(source)
    if lines is None:
        return line
    return min((n for n in lines if n >= line), default=None)


def prints_only(source: str, after: int, before: int) -> bool:
    """Whether every statement that starts between lines ``after`` and ``before`` (both excluded) is a ``print()``.

    True when none starts there; False when ``source`` does not parse.
    """
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return False
    return all(isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)
               and isinstance(node.value.func, ast.Name) and node.value.func.id == "print"
               for node in ast.walk(tree) if isinstance(node, ast.stmt) and after < node.lineno < before)
