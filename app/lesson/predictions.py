"""Judging the learner's predictions and the lesson's exercise checks, next to the lesson's values.

A prediction is text the learner typed or picked ("True", "MulBackward0", "[2., 4.]",
"None"); the value is what the lesson's expression evaluates to once the line has run.
Numbers and tensors are compared with ``allclose``, names and strings exactly.

An exercise check is judged part by part: ``a and b and c`` is false at its first false
part, and that part's text is what the learner is told is still missing.
"""

from __future__ import annotations

import ast
import importlib
import re
import sys
import warnings
from typing import Any

import numpy as np

_TENSOR_TEXT = re.compile(r"^tensor\((.*?)(?:,\s*\w+=.*)?\)$", re.DOTALL)


def _literal(text: str) -> tuple[bool, Any]:
    """``text`` as a Python literal (``tensor([1., 2.])`` as its list), if it is one."""
    text = text.strip()
    match = _TENSOR_TEXT.match(text)
    if match:
        text = match.group(1)
    try:
        return True, ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return False, None


def _numbers(value: Any) -> Any:
    """``value`` as a float64 numpy array if it is numeric (a tensor, a number, nested lists), else None."""
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(value, torch.Tensor):
        if value.is_complex() or value.layout != torch.strided or value.device.type == "meta":
            return None
        return value.detach().to("cpu", torch.float64).numpy()
    if isinstance(value, bool | int | float):
        return np.asarray(float(value))
    if isinstance(value, list | tuple):
        try:
            array = np.asarray(value, dtype=np.float64)
        except (ValueError, TypeError):
            return None
        return array
    return None


def _names(value: Any) -> set[str]:
    """The names a learner may give ``value`` by: its class (``MulBackward0``), its str (``torch.float32``)."""
    names = {type(value).__name__, str(value)}
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(value, torch.dtype):
        names.add(str(value).removeprefix("torch."))
    if torch is not None and isinstance(value, torch.Size):
        names.update((str(list(value)), str(tuple(value))))
    return names


def judge(value: Any, answer: str) -> bool:
    """Whether the learner's ``answer`` says what ``value`` is."""
    answer = answer.strip()
    is_literal, literal = _literal(answer)
    if is_literal:
        if literal is None or isinstance(literal, bool):
            if isinstance(value, bool) or value is None:
                return value is literal
            torch = sys.modules.get("torch")
            boolean = torch is not None and isinstance(value, torch.Tensor) and value.dtype == torch.bool
            return literal is not None and boolean and value.numel() == 1 and bool(value) == literal
        if isinstance(literal, str):
            return isinstance(value, str) and value == literal or literal in _names(value)
        expected, actual = _numbers(literal), _numbers(value)
        if expected is not None and actual is not None:
            if actual.shape != expected.shape and not (actual.size == expected.size == 1):
                return False
            return bool(np.allclose(actual.reshape(expected.shape), expected, rtol=1e-4, atol=1e-6, equal_nan=True))
    elif answer.lower() == "nan":
        actual = _numbers(value)
        return actual is not None and actual.size > 0 and bool(np.isnan(actual).all())
    if isinstance(value, str):
        return value == answer
    return answer in _names(value)


def shown(value: Any, limit: int = 80) -> str:
    """How a verdict shows ``value``: a node by its class, a small tensor by its values, anything else by repr."""
    torch = sys.modules.get("torch")
    if hasattr(value, "next_functions") and hasattr(value, "register_hook"):  # an autograd node
        return type(value).__name__
    if torch is not None and isinstance(value, torch.Tensor):
        numbers = _numbers(value)
        if numbers is not None and numbers.size <= 12:
            text = np.array2string(numbers, separator=", ", precision=4, suppress_small=True)
            return f"tensor({text})" if numbers.ndim else str(numbers.item())
        return f"a tensor of shape {list(value.shape)}"
    if torch is not None and isinstance(value, torch.Size):
        return str(list(value))
    try:
        text = repr(value)
    except Exception as exc:  # a lesson's own __repr__ may raise
        text = f"<{type(value).__name__}: repr raised {type(exc).__name__}>"
    return text if len(text) <= limit else text[: limit - 1] + "…"


def passed(value: Any) -> bool:
    """Whether an exercise check's value counts as true (a tensor: all of it)."""
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(value, torch.Tensor):
        return bool(value.all())
    return bool(value)


def check(expression: str, namespace: dict[str, Any]) -> dict[str, Any]:
    """Evaluate an exercise check in the lesson's module ``namespace`` once the run is over.

    Returns ``{"expression", "passed", "error", "missing"}``: ``missing`` is the text of the
    first part of a top-level ``and`` that is false (the whole expression if it has one
    part), ``error`` what the check raised (then ``passed`` is None). The check may use
    ``course``, the lessons' helper module beside the lesson (its ``before``, ``after``,
    ``returned`` and ``calls`` run the lesson again), without the lesson importing it.
    """
    scope = dict(namespace)
    if "course" not in scope:
        try:
            scope["course"] = importlib.import_module("course")
        except ImportError:  # a lesson outside the course: its checks do without
            pass
    result: dict[str, Any] = {"expression": expression, "passed": True, "error": None, "missing": None}
    text = expression.strip()
    try:
        body = ast.parse(text, mode="eval").body
        parts = body.values if isinstance(body, ast.BoolOp) and isinstance(body.op, ast.And) else [body]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # a check reading a non-leaf's .grad says nothing to the lesson
            for part in parts:
                value = eval(compile(ast.Expression(part), "<check>", "eval"), scope)  # noqa: S307 - the lesson's own check
                if not passed(value):
                    result.update(passed=False, missing=ast.get_source_segment(text, part))
                    break
    except Exception as exc:
        result.update(passed=None, error=f"{type(exc).__name__}: {exc}")
    return result
