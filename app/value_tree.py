"""The rows a pause's variables lay out as: Locals and Globals, what each value expands to, every row's path.

A row's path (``Locals:xs[0]``) names it stably across pauses: the variables view keeps the
learner's expanded and current rows by it, and compares a row with the step before by it.
"""

from __future__ import annotations

from typing import Any

from app.i18n import N_

LOCALS, GLOBALS = N_("Locals"), N_("Globals")

#: A child row: its name, the expression that evaluates to it (None when there is none), its summary.
Child = tuple[str, str | None, dict[str, Any]]


def attribute_path(expression: str, dotted: str) -> str:
    """``model`` + ``layers.0.weight`` → ``model.layers[0].weight``."""
    for part in dotted.split("."):
        expression += f"[{part}]" if part.isdigit() else f".{part}"
    return expression


def children(summary: dict[str, Any], expression: str | None) -> list[Child]:
    """What a value expands to: a module's parameters, a PackedSequence's tensors, a container's items."""
    base = expression or "?"
    if summary.get("module"):
        out = []
        for param in summary.get("parameters", []):
            child = attribute_path(base, param["name"])
            out.append((child, child if expression else None, param["summary"]))
        return out
    if summary.get("type") == "PackedSequence":
        fields = ("data", "batch_sizes", "sorted_indices", "unsorted_indices")
        return [(f"{base}.{f}", f"{base}.{f}" if expression else None, summary[f])
                for f in fields if summary.get(f) is not None]
    items = summary.get("items")
    if not items:
        return []
    if summary.get("type") in ("set", "frozenset"):
        return [(f"{base} item {i}", None, item) for i, item in enumerate(items)]
    pairs = all(isinstance(item, (list, tuple)) and len(item) == 2 for item in items)
    if pairs:
        return [(f"{base}[{key}]", f"{expression}[{key}]" if expression else None, item)
                for key, item in items]
    return [(f"{base}[{i}]", f"{expression}[{i}]" if expression else None, item) for i, item in enumerate(items)]


def child_path(path: str, name: str, expression: str | None) -> str:
    """The path of a child row (its expression, else its name) under the group of ``path``."""
    return f"{path.split(':', 1)[0]}:{expression or name}"


def groups(variables: dict[str, Any], globals_: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """(group, namespace) pairs: Locals and Globals apart, or one unnamed group in the module frame."""
    return [(LOCALS, variables), (GLOBALS, globals_)] if globals_ else [("", variables)]


def summaries_by_path(variables: dict[str, Any], globals_: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Every row's summary by its path (``Locals:xs[0]``), as the tree would lay the namespaces out."""
    out: dict[str, dict[str, Any]] = {}

    def add(path: str, expression: str | None, summary: dict[str, Any]) -> None:
        out[path] = summary
        for name, child_expression, child_summary in children(summary, expression):
            add(child_path(path, name, child_expression), child_expression, child_summary)

    for group, namespace in groups(variables, globals_):
        for name, summary in namespace.items():
            add(f"{group}:{name}", name, summary)
    return out
