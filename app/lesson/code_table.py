"""A table keyed by code objects that never hashes one.

Hashing a code object hashes its bytecode, names and constants at every lookup (CPython caches
no code hash): 1.3 µs for a 26-line lesson's module code on 3.12, 2.6 µs for a course lesson's,
paid at each line event by a table asked about the running code. Here a code object is found by
``id()``; the table holds each code object it has a value for, so that id stays its own.
"""

from __future__ import annotations

from collections.abc import Iterator
from types import CodeType
from typing import Generic, TypeVar

V = TypeVar("V")


class CodeTable(Generic[V]):
    """A mapping from code objects (by identity, as code objects are used) to values."""

    def __init__(self) -> None:
        self._items: dict[int, tuple[CodeType, V]] = {}

    def get(self, code: CodeType, default: V | None = None) -> V | None:
        """The value of ``code``, or ``default``."""
        item = self._items.get(id(code))
        return default if item is None else item[1]

    def __setitem__(self, code: CodeType, value: V) -> None:
        self._items[id(code)] = (code, value)

    def __contains__(self, code: object) -> bool:
        return id(code) in self._items

    def __iter__(self) -> Iterator[CodeType]:
        return (code for code, _ in self._items.values())

    def __len__(self) -> int:
        return len(self._items)

    def clear(self) -> None:
        """Forget every code object."""
        self._items.clear()
