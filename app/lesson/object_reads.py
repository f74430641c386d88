"""Reads of lesson objects that run none of the lesson's code (runs in the lesson process).

A lesson may subclass ``list`` or ``dict`` with an ``__iter__`` that never ends or a
``__len__`` that lies, override ``nn.Module.named_parameters()`` with a generator that
loops, or hold a ``MagicMock``, on which every attribute exists and every read gives
another mock. Calling the object's own methods to summarise it would run that code, and
also do what a plain ``python`` run of the lesson never does (a generator consumed, a mock
call recorded). So the engine reads such objects the way the interpreter stores them: a
list's items through ``list``'s own C methods, a module's parameters from the
``_parameters`` and ``_modules`` dicts ``nn.Module`` fills, a mock's name from its
``__dict__``, and an object's kind from ``type(value)``, never from ``value.__class__``.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from itertools import islice
from typing import Any

#: The builtin containers whose items the engine reads, in the order a subclass is matched.
CONTAINERS = (list, tuple, dict, set, frozenset)
#: Submodules of one module visited, at most, to list and count its parameters.
MODULE_LIMIT = 10_000


def is_a(value: Any, cls: type | tuple[type, ...]) -> bool:
    """``isinstance`` by the object's real type: an ``isinstance`` reads ``value.__class__``, which a
    mock's spec, or a lesson's ``__getattribute__``, answers with code of their own."""
    return issubclass(type(value), cls)


def container_base(value: Any) -> type | None:
    """The builtin container ``value``'s type derives from (``list`` for a ``list`` subclass), or None."""
    kind = type(value)
    for base in CONTAINERS:
        if issubclass(kind, base):
            return base
    return None


def length(value: Any, base: type) -> int:
    """How many items ``value`` holds, as its builtin ``base`` stores them (a subclass's ``__len__`` may lie)."""
    return base.__len__(value)


def first_items(value: Any, base: type, limit: int) -> list[Any]:
    """Up to ``limit`` items of ``value`` (a dict's ``(key, value)`` pairs), as its builtin ``base`` stores them."""
    if base is list or base is tuple:
        return list(base.__getitem__(value, slice(0, limit)))
    if base is dict:
        return list(islice(dict.items(value), limit))
    return list(islice(base.__iter__(value), limit))


def mock_type() -> type | None:
    """``unittest.mock.NonCallableMock``, the base of every mock, once the lesson imported ``unittest.mock``."""
    mock = sys.modules.get("unittest.mock")
    return None if mock is None else mock.NonCallableMock


def is_mock(value: Any) -> bool:
    """Whether ``value`` is a ``Mock`` or ``MagicMock`` (of any spec): each of its attributes is another mock."""
    base = mock_type()
    return base is not None and issubclass(type(value), base)


def own_dict(value: Any) -> dict[str, Any]:
    """The instance ``__dict__`` of ``value`` as the interpreter keeps it (empty when it has none)."""
    try:
        return object.__getattribute__(value, "__dict__")
    except AttributeError:
        return {}


def mock_repr(value: Any) -> str:
    """``<MagicMock name='model.fc' spec='Linear'>``: a mock described from its ``__dict__``, never called."""
    fields = own_dict(value)
    parts = [type(value).__name__]
    name = fields.get("_mock_name")
    if isinstance(name, str) and name:
        parts.append(f"name={name[:60]!r}")
    spec = fields.get("_spec_class")
    if isinstance(spec, type):
        parts.append(f"spec={spec.__name__!r}")
    return "<" + " ".join(parts) + ">"


def submodules(module: Any, limit: int = MODULE_LIMIT) -> Iterator[tuple[str, Any]]:
    """``(prefix, submodule)`` in the order of ``named_modules()``, each once, read from the ``_modules`` dicts.

    Stops after ``limit`` modules. A module built without ``super().__init__()`` has no
    ``_modules`` and yields only itself.
    """
    module_type = sys.modules["torch"].nn.Module
    seen: set[int] = set()
    stack: list[tuple[str, Any]] = [("", module)]
    while stack and len(seen) < limit:
        prefix, mod = stack.pop()
        if id(mod) in seen:
            continue
        seen.add(id(mod))
        yield prefix, mod
        children = own_dict(mod).get("_modules")
        if type(children) is not dict or not children:
            continue
        dot = prefix + "." if prefix else ""
        pending = [(dot + name, child) for name, child in islice(dict.items(children), limit)
                   if issubclass(type(child), module_type)]
        pending.reverse()
        stack += pending


def module_tensors(module: Any, table: str, limit: int) -> tuple[list[tuple[str, Any]], int, bool]:
    """What ``named_parameters()`` (``table`` ``"_parameters"``) or ``named_buffers()`` (``"_buffers"``) would
    give, read from the modules' tables: the first ``limit`` distinct tensors with their names, how many
    there are in all, and whether that count stopped short (more than :data:`MODULE_LIMIT` submodules)."""
    listed: list[tuple[str, Any]] = []
    seen: set[int] = set()
    visited = 0
    for prefix, mod in submodules(module):
        visited += 1
        tensors = own_dict(mod).get(table)
        if type(tensors) is not dict or not tensors:
            continue
        for name, tensor in islice(dict.items(tensors), MODULE_LIMIT):
            if tensor is None or id(tensor) in seen:
                continue
            seen.add(id(tensor))
            if len(listed) < limit:
                listed.append((f"{prefix}.{name}" if prefix else name, tensor))
    return listed, len(seen), visited >= MODULE_LIMIT
