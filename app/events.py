"""The one way a Qt-free model tells its views what happened: an :class:`Event` per kind of change.

A model owns one ``Event`` per fact (``replaced``, ``changed``, ``selected``…); a view connects
one handler to each it shows and reads the rest from the model. Plain callbacks, called in the
order they were connected, on the thread that changed the model (napari's evented models and
Qt's signals work the same way; this is the part of them a model here needs).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


class Event:
    """Callbacks told of one kind of change."""

    def __init__(self) -> None:
        self._callbacks: list[Callable[..., Any]] = []

    def connect(self, callback: Callable[..., Any]) -> None:
        """Call ``callback`` with the event's arguments each time it is emitted."""
        self._callbacks.append(callback)

    def disconnect(self, callback: Callable[..., Any]) -> None:
        """Stop calling ``callback``; one that is not connected is ignored."""
        if callback in self._callbacks:
            self._callbacks.remove(callback)

    def emit(self, *args: Any) -> None:
        """Tell every connected callback, in the order connected (a callback may disconnect itself)."""
        for callback in list(self._callbacks):
            callback(*args)

    def __len__(self) -> int:
        return len(self._callbacks)
