"""How a :class:`~app.history.History` keeps values: hash-consed tuples of atoms, each distinct value stored once.

A summary equal to one already kept is the object already kept, stored and counted once; short
strings and small lists (shapes, names) are shared the same way. Tuples of atoms are what the
garbage collector stops tracking, so a long recording leaves few objects for the app's
collections to visit. Tensors over the value limit keep a sample of their values only.
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np

from app.pause_delta import PARTS_LIMIT

#: Strings up to this length are shared, up to ``STRINGS`` distinct ones…
SHORT_STR = 40
STRINGS = 65_536
#: …and so are short lists of small ints and strings (shapes, names), up to this many distinct ones.
SMALL_LISTS = 4096
#: Objects :meth:`ValueStore.shared` remembers by identity before it starts afresh: as many as the
#: parts of graph nodes the session keeps (the objects it hands on again).
SHARED_OBJECTS = PARTS_LIMIT

_SMALL_INTS = range(-5, 257)  # CPython caches these: a reference costs nothing more

# A stored value is a tuple whose first item says what it holds. The first four kinds are shared
# through the store's table; short lists are shared when small, rows never.
DICT = 0  # (DICT, keys, item types, *values)
_LIST = 1  # (_LIST, item types, *items); a tuple comes back as a list
_ARRAY = 2  # (_ARRAY, dtype, shape, bytes)
_PAIRS = 3  # (_PAIRS, *flat): a graph's roots (name, id…) or leaves (id, name…)
_SHORT = 4  # (_SHORT, *items): up to four ints or strings
_ROWS = 5  # (_ROWS, width, *flat): up to 16 equal-length short lists, like a node's "next" edges
_TABLED = frozenset((DICT, _LIST, _ARRAY, _PAIRS))
ATOMS = frozenset((int, float, bool, type(None), complex, bytes))  # stored as they are


def _only_in_table() -> int:
    """What ``sys.getrefcount`` says, in :meth:`ValueStore.sweep`'s loop, of a value only the table holds."""
    value = (_LIST, ())
    table, keys = {value: value}, [value]
    del value
    value = keys.pop()
    count = sys.getrefcount(value)
    table.clear()
    return count


def only_in_values() -> int:
    """What ``sys.getrefcount`` says, in :meth:`app.history.History._uncount`'s loop, of a value only a dict holds."""
    count = 0
    for value in {0: (_LIST, ())}.values():
        count = sys.getrefcount(value)
    return count


def _deep_size(value: Any, seen: set[int]) -> int:
    """``sys.getsizeof`` of plain data and of what it holds, each object once per ``seen``."""
    if id(value) in seen:
        return 0
    seen.add(id(value))
    size = sys.getsizeof(value)
    kind = type(value)
    if kind is dict:
        return size + sum(_deep_size(k, seen) + _deep_size(v, seen) for k, v in value.items())
    if kind is list or kind is tuple:
        return size + sum(_deep_size(v, seen) for v in value)
    if kind is np.ndarray and value.base is not None:
        return size + _deep_size(value.base, seen)
    return size


class ValueStore:
    """Plain data, hash-consed: equal values are one stored tuple, counted once.

    A value stays while anything (a pause, a keyframe, a stored parent) refers to it; :meth:`sweep`
    forgets those only the table still holds, once pauses were dropped.
    """

    def __init__(self, value_limit: int) -> None:
        self.value_limit = value_limit
        self.table: dict[tuple, tuple] = {}  # stored value -> itself
        self.keys: dict[tuple, tuple] = {}
        self.types: dict[tuple, tuple] = {}
        self.shorts: dict[tuple, tuple] = {}
        self.strings: dict[str, str] = {}
        self._by_identity: dict[int, tuple[Any, Any]] = {}  # id() -> (a value given to shared(), its stored form)
        self.bytes = 0
        self._unreferenced = _only_in_table()

    @property
    def nbytes(self) -> int:
        held: set[int] = set()
        lent = sum(_deep_size(value, held) for value, _ in self._by_identity.values())
        return self.bytes + lent + sum(map(sys.getsizeof, (self.table, self.keys, self.types, self.shorts,
                                                           self.strings, self._by_identity)))

    def intern(self, value: Any) -> Any:
        """The stored value equal to ``value`` (plain data: dicts, lists, numpy arrays and scalars)."""
        kind = type(value)
        if kind is str:
            return self.text(value)
        if kind is dict:
            return self._share(self.build(value))
        if kind is list or kind is tuple:
            items = [v if type(v) in ATOMS else self.intern(v) for v in value]
            if len(items) <= 4 and all(type(v) is int or type(v) is str for v in items):
                return self.short(items)
            width = len(items[0]) - 1 if items and type(items[0]) is tuple and items[0][0] == _SHORT else 0
            if width and len(items) <= 16 and all(type(v) is tuple and v[0] == _SHORT and len(v) == width + 1
                                                  for v in items):
                return (_ROWS, width, *(x for row in items for x in row[1:]))
            return self._share((_LIST, self._types(items), *items))
        if kind is np.ndarray:
            shape = self.short(list(value.shape)) if value.ndim <= 4 else (_SHORT, *value.shape)
            return self._share((_ARRAY, self.text(value.dtype.str), shape, value.tobytes()))
        return value

    def shared(self, value: Any) -> Any:
        """:meth:`intern` for a value its sender shares by identity and never modifies (a graph node's
        parts, :mod:`app.pause_delta`): worked out once per object.

        The last :data:`SHARED_OBJECTS` such values are kept alive, so that an ``id`` stays theirs;
        :attr:`nbytes` counts them.
        """
        hit = self._by_identity.get(id(value))
        if hit is not None and hit[0] is value:
            return hit[1]
        stored = self.intern(value)
        if len(self._by_identity) >= SHARED_OBJECTS:
            self._by_identity.clear()
        self._by_identity[id(value)] = (value, stored)  # the value kept alive, so its id stays its own
        return stored

    def forget_shared(self) -> None:
        """Let go of the values :meth:`shared` keeps alive (before dropping pauses to free memory)."""
        self._by_identity.clear()

    def build(self, value: dict, ready: dict[str, Any] | None = None) -> tuple:
        """The stored form of a dict, its parts shared but not itself (for values never seen twice).

        ``ready`` holds stored forms of some of its values already worked out, by key.
        """
        if "values" in value:
            value = self._thin(value)
        keys = self.keys.get(names := tuple(value))
        if keys is None:
            keys = self.keys[names] = tuple(self.text(k) if type(k) is str else k for k in names)
            self.bytes += sys.getsizeof(keys)
        if ready:
            items = [ready[k] if k in ready else v if type(v) in ATOMS else self.intern(v) for k, v in value.items()]
        else:
            items = [v if type(v) in ATOMS else self.intern(v) for v in value.values()]
        return (DICT, keys, self._types(items), *items)

    def stored_list(self, items: list) -> tuple:
        """The stored list of these stored values."""
        return self._share((_LIST, self._types(items), *items))

    def pairs(self, items: Any) -> tuple:
        """The stored flat pairs equal to ``items``."""
        return self._share((_PAIRS, *items))

    def short(self, items: list) -> tuple:
        """A short list of ints and strings; one shared tuple per value when they are all small."""
        key = (_SHORT, *items)
        shared = self.shorts.get(key)
        if shared is not None:
            return shared
        if len(self.shorts) < SMALL_LISTS and all(type(v) is str or v in _SMALL_INTS for v in items):
            self.shorts[key] = key
            self.bytes += sys.getsizeof(key)
        return key

    def text(self, value: str) -> str:
        """Short strings shared (and counted) once; longer ones as they are."""
        if len(value) > SHORT_STR:
            return value
        shared = self.strings.get(value)
        if shared is None:
            if len(self.strings) >= STRINGS:
                return value
            shared = self.strings[value] = value
            self.bytes += sys.getsizeof(value)
        return shared

    def sweep(self) -> None:
        """Forget the values nothing refers to but the table; newest first, so a parent goes before its parts."""
        table, keys = self.table, list(self.table)
        while keys:
            value = keys.pop()
            if sys.getrefcount(value) <= self._unreferenced:
                del table[value]
                self.bytes -= self.size(value)

    def size(self, value: tuple) -> int:
        """Bytes of a stored value itself: its shared parts are counted where they are stored."""
        start = 3 if value[0] == DICT else 2 if value[0] == _LIST else 1  # past the shared keys and types
        return sys.getsizeof(value) + sum(map(self.part, value[start:]))

    def part(self, value: Any) -> int:
        """Bytes of a value held inside a stored one and not counted anywhere else."""
        kind = type(value)
        if kind is tuple:  # another stored value, or one of this value's own short lists or rows
            if value[0] in _TABLED or value is self.shorts.get(value):
                return 0
            return sys.getsizeof(value) + sum(map(self.part, value))
        if kind is str:
            return 0 if self.strings.get(value) is value else sys.getsizeof(value)
        if kind is int:
            return 0 if value in _SMALL_INTS else sys.getsizeof(value)
        if kind is float or kind is complex or kind is bytes:
            return sys.getsizeof(value)
        return 0  # None and bools

    def plain(self, value: Any, memo: dict[int, Any]) -> Any:
        """A stored value as the plain data it came from; dicts and arrays are rebuilt once per ``memo``."""
        if type(value) is not tuple:
            return value
        kind = value[0]
        if kind == DICT or kind == _ARRAY:
            out = memo.get(id(value))
            if out is None:
                if kind == DICT:
                    out = dict(zip(value[1], [self.plain(v, memo) for v in value[3:]], strict=True))
                else:  # read-only, over the stored bytes
                    out = np.frombuffer(value[3], dtype=value[1]).reshape(value[2][1:])
                memo[id(value)] = out
            return out
        if kind == _LIST:
            return [self.plain(v, memo) for v in value[2:]]
        if kind == _ROWS:
            width = value[1]
            return [list(value[i:i + width]) for i in range(2, len(value), width)]
        return list(value[1:])  # _SHORT and _PAIRS

    def _share(self, candidate: tuple) -> tuple:
        stored = self.table.get(candidate)
        if stored is None:
            stored = self.table[candidate] = candidate
            self.bytes += self.size(candidate)
        return stored

    def _types(self, items: list) -> tuple:
        types = tuple(map(type, items))  # keeps 1, 1.0 and True apart
        shared = self.types.get(types)
        if shared is None:
            shared = self.types[types] = types
            self.bytes += sys.getsizeof(types)
        return shared

    def _thin(self, summary: dict) -> dict:
        """A tensor summary over ``value_limit`` elements, with a sample of its values only."""
        values = summary["values"]
        if type(values) is not np.ndarray or not summary.get("numel", 0) > self.value_limit:
            return summary
        if values.size > self.value_limit:
            flat = values.reshape(-1)
            values = flat[np.linspace(0, flat.size - 1, num=self.value_limit).astype(np.int64)]
        return {**summary, "values": values, "sampled": True, "history_values": "sample"}
