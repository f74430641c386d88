"""The message ids of the code: every literal passed to ``tr()``, ``N_()`` or a ``TranslatedTexts.set()``."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _literal(node: ast.AST) -> str | None:
    """The string a literal argument spells out (implicit concatenation included), else None."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return None


def msgids_in(path: Path) -> dict[str, list[str]]:
    """Message id → where it is used (``file:line``), for one source file."""
    found: dict[str, list[str]] = {}
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
        argument = None
        if name in ("tr", "N_") and node.args:
            argument = node.args[0]
        elif name == "set" and isinstance(func, ast.Attribute) and isinstance(func.value, ast.Attribute) \
                and func.value.attr == "_texts" and len(node.args) >= 2:
            argument = node.args[1]
        text = _literal(argument) if argument is not None else None
        if text is not None:
            found.setdefault(text, []).append(f"{path.relative_to(ROOT)}:{node.lineno}")
    return found


def code_msgids() -> dict[str, list[str]]:
    """Every message id in ``app/`` and ``widgets/``."""
    found: dict[str, list[str]] = {}
    for path in sorted([*ROOT.glob("app/**/*.py"), *ROOT.glob("widgets/**/*.py")]):
        for text, places in msgids_in(path).items():
            found.setdefault(text, []).extend(places)
    return found
