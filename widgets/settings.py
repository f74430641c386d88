"""The app's settings in one place: defaults, typed reads, and where they are stored.

Tests point the store at a temporary file with :func:`use_file`.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QByteArray, QSettings

DEFAULTS: dict[str, Any] = {
    "language": "en",
    "recent_files": [],
    "last_file": "",
    "window/geometry": QByteArray(),
    "window/state": QByteArray(),
    "window/lessons_in_strip": False,
    "variables/header": QByteArray(),
    "watch/expressions": [],
    "console/max_lines": 5000,
    "history/budget_mb": 512,
    "course/ask_predictions": True,
    "view/text_size": 100,
    "view/high_contrast": False,
}

_file: str | None = None


def use_file(path: str | None) -> None:
    """Store settings in ``path`` (an INI file) instead of the platform's place; None restores it."""
    global _file
    _file = path


def store() -> QSettings:
    """The settings store in use."""
    if _file is not None:
        return QSettings(_file, QSettings.Format.IniFormat)
    return QSettings("GradStep", "GradStep")


def get(key: str) -> Any:
    """The value of ``key``, converted to the type of its default."""
    default = DEFAULTS[key]
    value = store().value(key, default)
    if isinstance(default, list):
        if value in (None, ""):
            return []
        return list(value) if isinstance(value, (list, tuple)) else [value]
    if isinstance(default, bool):
        return value in (True, "true", "1", 1)
    if isinstance(default, int):
        try:
            return int(value)
        except (TypeError, ValueError):
            return default
    if isinstance(default, QByteArray):
        return value if isinstance(value, QByteArray) else QByteArray()
    return value if value is not None else default


def put(key: str, value: Any) -> None:
    """Save ``value`` under ``key`` (a key of :data:`DEFAULTS`)."""
    if key not in DEFAULTS:
        raise KeyError(key)
    settings = store()
    settings.setValue(key, value)
    settings.sync()


def add_recent_file(path: str, limit: int = 10) -> list[str]:
    """Put ``path`` first in the recent files; returns the new list."""
    recent = [p for p in get("recent_files") if p != path]
    recent.insert(0, path)
    del recent[limit:]
    put("recent_files", recent)
    return recent
