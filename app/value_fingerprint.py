"""When two summaries of a value are the same value: what a watch compares at each pause, in both processes.

The lesson process compares a watched expression's summaries to stop a run where it changes
(``app.lesson.runner``); the app compares the results it shows to highlight a change
(:mod:`widgets.watch_view`). Both use :func:`value_fingerprint`, so a value that stops a run
is the value the watch list shows as changed.
"""

from __future__ import annotations

from typing import Any


def value_fingerprint(summary: dict[str, Any] | None) -> Any:
    """What makes two summaries the same value: the data and autograd state, not the object identity.

    Every field counts, at any depth (a module's parameters, a list's items, a tensor's
    ``.grad``), except ``id`` and ``_version``: an equal new tensor, or one changed in place
    and back, is the same value. Arrays compare by dtype, shape and bytes, so NaNs in the
    same places are equal.
    """
    def plain(item: Any) -> Any:
        if isinstance(item, dict):
            return tuple((k, plain(v)) for k, v in item.items() if k not in ("id", "version"))
        if isinstance(item, list):
            return tuple(plain(v) for v in item)
        if hasattr(item, "tobytes"):
            return (str(getattr(item, "dtype", "")), getattr(item, "shape", ()), item.tobytes())
        return item

    return plain(summary)


def result_fingerprint(result: dict[str, Any]) -> Any:
    """What must differ between two evaluation results (``{"ok", "value" | "error"}``) for a watch to change."""
    if not result.get("ok"):
        error = result.get("error") or {}
        return ("error", error.get("type"), error.get("message"))
    return value_fingerprint(result.get("value"))
