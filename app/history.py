"""The recorded past of a lesson run: every pause, the output before it and its autograd graph, within a memory budget.

A :class:`History` lives in the app process and is fed the session's messages in arrival order.
It keeps what is needed to show any earlier pause as it was then, at a cost that grows with what
*changed*, not with what was visible:

- Values are hash-consed: a summary equal to one already kept (a tensor with the same id, version,
  ``grad_fn``, ``.grad``… and the same values) is the object already kept, stored and counted once.
  Tensors over ``value_limit`` elements keep a sample of their values only.
- A pause's variables are stored as the names that changed since a recent pause with the same
  names (the previous line of a loop, the previous call of a function), and in full every
  ``DELTA_DEPTH`` links, so rebuilding them replays a short chain.
- The autograd graph is stored as the pauses' diffs plus a full keyframe whenever more nodes
  changed since the last one than the graph holds, so a jump replays about one graph's worth of
  changes. Nodes are kept without the variable names pointing at them (derived again from the
  diff's ``roots`` and ``leaves``), so a node that was only renamed costs nothing new.
- Everything is kept in tuples of atoms, which the garbage collector stops tracking, so a long
  recording leaves few objects for each of the app's collections to visit.
- Bytes are counted with ``sys.getsizeof`` on what is stored, numpy data included. Over the
  budget the oldest pauses are dropped (:attr:`History.dropped_before`); console text goes the
  same way once it alone fills a quarter of the budget (:attr:`History.dropped_output`).

Feed and read a history from one thread.
"""

from __future__ import annotations

import bisect
import sys
from array import array
from typing import Any

from app.gc_pause import gc_paused
from app.graph_format import names_by_node
from app.history_store import ATOMS, DICT, ValueStore, only_in_values

#: Default memory budget of a history, in bytes.
BUDGET_BYTES = 512 * 2**20
#: Tensors with more elements than this keep a sample of this many values, flagged ``"history_values": "sample"``.
VALUE_LIMIT = 4096
#: A pause's variables may be stored as a change to a pause at most this many pauses older…
BASE_WINDOW = 256
#: …through a chain of at most this many changes; otherwise they are stored in full.
DELTA_DEPTH = 32
#: A graph keyframe is stored once more node changes than this (or than the graph has nodes) piled up…
GRAPH_KEY_CHANGES = 64
#: …or this many pauses passed, so that a jump never walks a long run of unchanged pauses.
GRAPH_KEY_PAUSES = 4096
#: Bytes of a history's tables and containers beyond twice what it counts as stored, at most (see
#: :meth:`History._near_budget`): the exact count is taken once the two together near the budget.
NBYTES_SLACK = 4 * 2**20
#: A history over its budget drops old pauses until it is under this share of it.
EVICT_TO = 0.9
#: Console text may use at most this share of the budget.
OUTPUT_SHARE = 0.25
#: Snapshot keys stored once per distinct combination rather than once per pause.
_WHERE_KEYS = ("event", "file", "function", "depth", "grad_enabled", "inference_mode", "in_backward", "frame_index",
               "post_mortem", "recording")
_OWN_KEYS = frozenset(("step", "line", "vars", "globals", "graph", *_WHERE_KEYS))

# ---- pauses ----------------------------------------------------------------------------------
#
# A pause is a tuple ``(where, rest, vars, globals, graph)`` of tuples and atoms only:
# - ``where`` is shared: ``(snapshot keys, flags, event, function, (key, value, …))``;
# - ``rest`` is the stored dict of the snapshot's other keys (stack, return value, exception…);
# - a namespace (vars, globals) is None when empty, an int ``back`` when it equals the one ``back``
#   pauses earlier, ``(back, name, value, …)`` for the names that changed since then, or
#   ``(None, name, value, …)`` in full;
# - the graph entry is None (no change), the pause's diff, or a tuple of the diffs of replies since
#   the previous pause followed by the pause's own (or None). A diff is a tuple
#   ``(changed, added count, removed ids, roots, leaves, *added nodes, *updated nodes)``.

_WHERE, _REST, _GRAPH = 0, 1, 4
_SLOTS = {"vars": 2, "globals": 3}


def _own_diff(graph: Any) -> tuple | None:
    return graph[-1] if graph is not None and type(graph[0]) is tuple else graph


def _diffs(graph: Any) -> Any:
    if graph is None:
        return ()
    return [diff for diff in graph if diff is not None] if type(graph[0]) is tuple else (graph,)


def _back(entry: Any) -> int | None:
    """How many pauses back a namespace entry's base is; None when it stands alone."""
    if type(entry) is int:
        return entry
    return entry[0] if entry is not None else None


def _unpairs(pairs: tuple) -> dict:
    return dict(zip(pairs[1::2], pairs[2::2], strict=True))


#: The keys of a graph node whose values the session hands on as shared objects (:mod:`app.pause_delta`).
_PARTS = ("saved", "origin")


def _node_value(store: ValueStore, key: str, value: Any) -> Any:
    """The stored form of a graph node's value; the objects in its ``saved`` and ``origin`` worked out once each."""
    if key in _PARTS:
        if type(value) is dict:
            return store.shared(value)
        if key == "saved" and value and type(value) is list:
            return store.stored_list([store.shared(entry) if type(entry) is dict else store.intern(entry)
                                      for entry in value])
    return value if type(value) in ATOMS else store.intern(value)


def _edges(nodes: list[dict[str, Any]]) -> list[list[int]]:
    """``[from_id, to_id, input_nr]`` for each node's ``next``, in node order (as the graph tracker lists them)."""
    return [[node["id"], child, nr] for node in nodes for child, nr in node["next"]]


class History:
    """Every pause of a run, as it was, within a memory budget.

    Parameters
    ----------
    budget_bytes : int
        Most bytes the history holds; over it, the oldest pauses are dropped.
    value_limit : int
        Tensors with more elements keep only a sample of this many values.

    Notes
    -----
    Pauses are numbered from 0 in arrival order. ``len(history)`` counts them all, dropped ones
    included, so the live pause is ``len(history) - 1`` and the oldest kept is :attr:`dropped_before`.
    """

    def __init__(self, budget_bytes: int = BUDGET_BYTES, value_limit: int = VALUE_LIMIT) -> None:
        self.budget_bytes = budget_bytes
        self._store = ValueStore(value_limit)
        self._only_in_values = only_in_values()
        self._first = 0
        self._steps, self._lines, self._offsets = array("q"), array("q"), array("q")
        self._pauses: list[tuple] = []
        self._bytes = 0  # pauses, keyframes and per-run tables; the store and containers are added in nbytes
        self._where_memo: dict[tuple, tuple] = {}
        self._names: dict[str, str] = {}
        self._recent: dict[tuple, list] = {}  # (slot, names) -> [index, chain length, stored values]
        self._recent_pruned = 0  # the index of the pause that last dropped the bases out of the window
        # slot -> (the last pause's summaries as received, their stored forms): the session hands on
        # the very summary objects of values that did not change (app.pause_delta), stored once.
        self._last_seen: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {}
        self._nodes: dict[int, tuple] = {}  # the live graph
        # node id -> the node dict last received: an update that is a copy of it with a few new
        # values (app.pause_delta.GraphMirror) has only those stored again
        self._received: dict[int, dict[str, Any]] = {}
        self._roots = self._leaves = self._store.pairs(())
        self._names_received: tuple[Any, Any] = (None, None)  # the last diff's roots and leaves dicts
        self._pending: list[tuple] = []
        self._graph_changes = 0
        self._graph_keys: dict[int, tuple] = {}
        self._graph_key_list: list[int] = []
        self._id_at: dict[tuple, int] = {}
        self._output: list[tuple[str, str]] = []
        self._output_first = 0
        self._output_bytes = 0

    # ---- feeding -----------------------------------------------------------------------------

    def __len__(self) -> int:
        return self._first + len(self._pauses)

    def add_output(self, stream: str, text: str) -> None:
        """Keep text the lesson printed; it belongs to the pause that follows it."""
        chunk = (sys.intern(stream), text)
        self._output.append(chunk)
        self._output_bytes += sys.getsizeof(chunk) + sys.getsizeof(text)
        if self._output_bytes > self.budget_bytes * OUTPUT_SHARE:
            self._trim_output()

    def add_graph_change(self, diff: dict[str, Any]) -> None:
        """Fold in the graph diff of a reply (a frame selected, a backward run) that came between pauses.

        The lesson's graph tracker diffs the next pause against the graph as the reply left it.
        """
        stored = self._graph_diff(diff)
        self._advance(stored)
        self._pending.append(stored)
        self._names_received = (diff.get("roots"), diff.get("leaves"))

    def add_pause(self, snapshot: dict[str, Any], kind: str | None = None) -> int:
        """Record a pause and return its index.

        Parameters
        ----------
        snapshot : dict
            The snapshot of a :class:`~app.messages.Paused` message.
        kind : str, optional
            Why the lesson paused, shown as a flag on the timeline (e.g. ``"breakpoint"``).
        """
        index = len(self)
        self._pauses.append((self._where(snapshot, kind),
                             self._store.intern({k: v for k, v in snapshot.items() if k not in _OWN_KEYS}),
                             self._namespace_entry("vars", index, snapshot.get("vars")),
                             self._namespace_entry("globals", index, snapshot.get("globals")),
                             self._graph_entry(snapshot.get("graph"))))
        self._steps.append(snapshot["step"])
        self._lines.append(snapshot["line"])
        self._offsets.append(self._output_first + len(self._output))
        self._bytes += self._pause_size(self._pauses[-1])
        self._graph_keyframe(index)
        if self._near_budget() and self.nbytes > self.budget_bytes:
            self._evict()
        return index

    def _near_budget(self) -> bool:
        """Whether :attr:`nbytes` (a sum over a few hundred objects) is worth computing after a pause.

        The bytes counted as they are stored are most of it; the lists and tables that hold them
        add less than as much again (a pointer and a hash per value of at least 50 bytes), so far
        below the budget the exact count cannot exceed it. The recent namespaces are counted as
        :attr:`nbytes` counts them.
        """
        stored = self._store.bytes + self._bytes + self._output_bytes
        return 2 * stored + self._recent_bytes() + NBYTES_SLACK > self.budget_bytes

    def _recent_bytes(self) -> int:
        return sum(sys.getsizeof(key) + sys.getsizeof(r[2]) for key, r in self._recent.items())

    # ---- reading -----------------------------------------------------------------------------

    @property
    def nbytes(self) -> int:
        """Bytes the history holds, measured with ``sys.getsizeof`` on what it stores."""
        containers = (self._steps, self._lines, self._offsets, self._pauses, self._where_memo, self._names,
                      self._recent, self._nodes, self._received, self._graph_keys, self._graph_key_list,
                      self._id_at, self._output)
        return (self._store.nbytes + self._bytes + self._output_bytes + self._recent_bytes()
                + sum(map(sys.getsizeof, containers)))

    @property
    def dropped_before(self) -> int:
        """Index of the oldest pause kept: the ones before it were dropped to stay within the budget."""
        return self._first

    @property
    def dropped_output(self) -> int:
        """How many of the oldest pieces of console text were dropped to stay within the budget."""
        return self._output_first

    def entries(self) -> list[tuple[int, int, int, str, str, tuple[str, ...]]]:
        """The kept pauses, oldest first, for a timeline.

        Returns
        -------
        list of (index, step, line, event, function, flags)
            ``flags`` holds the ``kind`` given to :meth:`add_pause`, ``"exception"`` at an
            exception event and ``"post_mortem"`` after an uncaught exception.
        """
        return [(index, step, line, pause[_WHERE][2], pause[_WHERE][3], pause[_WHERE][1])
                for index, step, line, pause in zip(range(self._first, len(self)), self._steps, self._lines,
                                                     self._pauses, strict=True)]

    def snapshot(self, index: int) -> dict[str, Any]:
        """A pause as it was.

        Returns
        -------
        dict
            The snapshot as it arrived (tensors over ``value_limit`` elements with a sample of their
            values and ``"history_values": "sample"``), plus ``"graph_full"``, the whole graph then
            (``{"nodes", "edges", "roots", "leaves"}``), and ``"output"``, the ``(stream, text)``
            pieces printed before it (less the :attr:`dropped_output` oldest ones).

        Raises
        ------
        IndexError
            For a pause never recorded, or dropped to stay within the budget.
        """
        with gc_paused():  # rebuilding allocates thousands of small containers, none of them cyclic
            return self._snapshot(index)

    def _snapshot(self, index: int) -> dict[str, Any]:
        offset = self._offset(index)
        plain = self._store.plain
        memo: dict[int, Any] = {}
        pause = self._pauses[offset]
        order, where = pause[_WHERE][0], pause[_WHERE][4]
        nodes, roots, leaves = self._graph_at(index)
        roots, leaves = _unpairs(roots), _unpairs(leaves)
        parts = {"step": self._steps[offset], "line": self._lines[offset],
                 **dict(zip(where[::2], where[1::2], strict=True)), **plain(pause[_REST], memo),
                 "vars": self._plain_namespace("vars", index, memo),
                 "globals": self._plain_namespace("globals", index, memo),
                 "graph": self._plain_diff(_own_diff(pause[_GRAPH]), roots, leaves, memo)}
        out = {key: parts[key] for key in order}
        node_list = self._plain_nodes(nodes.values(), roots, leaves, memo)
        out["graph_full"] = {"nodes": node_list, "edges": _edges(node_list), "roots": roots, "leaves": leaves}
        out["output"] = self._output[:max(0, self._offsets[offset] - self._output_first)]
        return out

    def output(self) -> list[tuple[str, str]]:
        """Everything printed so far, as ``(stream, text)`` pieces (less the :attr:`dropped_output` oldest)."""
        return list(self._output)

    def diff(self, a: int, b: int) -> dict[str, Any]:
        """What changed from pause ``a`` to pause ``b``.

        Returns
        -------
        dict
            ``"vars"`` and ``"globals"``: ``{"added", "removed", "changed"}`` lists of names;
            ``"tensors"``: one ``{"scope", "name", "values_changed", "grad_fn": [before, after],
            "grad_changed"}`` per name bound to a tensor at both pauses whose values, ``grad_fn`` or
            ``.grad`` differ; ``"graph"``: ``{"added", "removed"}`` lists of nodes as ``{"id", "name"}``.
        """
        self._offset(a)
        self._offset(b)
        memo: dict[int, Any] = {}  # one for both pauses: a value kept once comes back as one object
        out: dict[str, Any] = {"tensors": []}
        for slot in _SLOTS:
            before, after = self._namespace(slot, a), self._namespace(slot, b)
            changed = [name for name in after if name in before and after[name] is not before[name]]
            out[slot] = {"added": [name for name in after if name not in before],
                         "removed": [name for name in before if name not in after], "changed": changed}
            for name in changed:
                old, new = self._store.plain(before[name], memo), self._store.plain(after[name], memo)
                if not (isinstance(old, dict) and isinstance(new, dict) and "grad_fn" in old and "grad_fn" in new):
                    continue
                values_changed = old.get("values") is not new.get("values")
                grad_changed = old.get("grad") is not new.get("grad")
                if values_changed or grad_changed or old["grad_fn"] != new["grad_fn"]:
                    out["tensors"].append({"scope": slot, "name": name, "values_changed": values_changed,
                                           "grad_fn": [old["grad_fn"], new["grad_fn"]], "grad_changed": grad_changed})
        nodes_a, nodes_b = self._graph_at(a)[0], self._graph_at(b)[0]
        out["graph"] = {"added": [self._label(n) for i, n in nodes_b.items() if i not in nodes_a],
                        "removed": [self._label(n) for i, n in nodes_a.items() if i not in nodes_b]}
        return out

    def _offset(self, index: int) -> int:
        if not 0 <= index < len(self):
            raise IndexError(f"no pause {index}: {len(self)} pauses were recorded")
        if index < self._first:
            raise IndexError(f"pause {index} was dropped to stay within the memory budget "
                             f"(pauses before {self._first} are gone)")
        return index - self._first

    @staticmethod
    def _label(node: tuple) -> dict[str, Any]:
        keys = node[1]
        return {"id": node[3 + keys.index("id")], "name": node[3 + keys.index("name")]}

    # ---- pauses ------------------------------------------------------------------------------

    def _where(self, snapshot: dict[str, Any], kind: str | None) -> tuple:
        """``(snapshot keys, flags, event, function, (key, value, …))``, one tuple per distinct combination."""
        flags = tuple(flag for flag, on in ((kind, kind is not None),
                                            ("exception", snapshot.get("event") == "exception"),
                                            ("post_mortem", bool(snapshot.get("post_mortem")))) if on)
        where = {key: snapshot[key] for key in _WHERE_KEYS if key in snapshot}
        key = (tuple(snapshot), flags, tuple(where.items()))
        shared = self._where_memo.get(key)
        if shared is None:
            text = self._store.text
            items = tuple(text(x) if type(x) is str else x for item in where.items() for x in item)
            shared = (tuple(map(text, snapshot)), flags, where.get("event"), where.get("function"), items)
            self._where_memo[key] = shared
            self._bytes += sum(map(sys.getsizeof, (key, *key, *key[2], shared, shared[0], shared[4])))
        return shared

    def _pause_size(self, pause: tuple) -> int:
        size = sys.getsizeof(pause)
        for position in _SLOTS.values():
            if type(pause[position]) is tuple:
                size += sys.getsizeof(pause[position])
        graph = pause[_GRAPH]
        if graph is not None and type(graph[0]) is tuple:
            size += sys.getsizeof(graph)
        return size + sum(map(self._diff_size, _diffs(graph)))

    def _diff_size(self, diff: tuple) -> int:
        removed = sys.getsizeof(diff[2]) + sum(map(self._store.part, diff[2])) if diff[2] else 0  # () is shared
        return sys.getsizeof(diff) + removed

    # ---- namespaces --------------------------------------------------------------------------

    def _namespace_entry(self, slot: str, index: int, namespace: dict[str, Any] | None) -> Any:
        """Store a namespace: None when empty, else as a change to a recent one with the same names, or whole."""
        if not namespace:
            return None
        seen, stored = self._last_seen.get(slot, ({}, {}))
        intern = self._store.intern
        values = {name: stored[name] if seen.get(name) is value else intern(value) for name, value in namespace.items()}
        self._last_seen[slot] = (dict(namespace), values)
        names = tuple(values)
        recent = self._recent.get((slot, names))
        if recent is not None and index - recent[0] <= BASE_WINDOW and recent[1] < DELTA_DEPTH:
            base_index, depth, base = recent
            changes = [item for name, value in values.items() if value is not base[name]
                       for item in (self._name(name), value)]
            recent[:] = index, depth + 1, values
            return (index - base_index, *changes) if changes else index - base_index
        self._recent[(slot, names)] = [index, 0, values]
        if len(self._recent) > BASE_WINDOW or index - self._recent_pruned >= BASE_WINDOW:  # bases out of the window
            self._recent_pruned = index
            self._recent = {key: r for key, r in self._recent.items() if r[0] >= index - BASE_WINDOW}
        return self._whole(values)

    def _whole(self, values: dict[str, Any]) -> tuple:
        return (None, *(item for name, value in values.items() for item in (self._name(name), value)))

    def _name(self, name: str) -> str:
        """One string per variable name, counted once."""
        shared = self._names.get(name)
        if shared is None:
            shared = self._names[name] = sys.intern(name)
            self._bytes += sys.getsizeof(shared)
        return shared

    def _namespace(self, slot: str, index: int) -> dict[str, Any]:
        """The stored values of a pause's namespace, rebuilt along its chain of changes."""
        position, chain = _SLOTS[slot], []
        while (back := _back(entry := self._pauses[index - self._first][position])) is not None:
            if type(entry) is tuple:
                chain.append(entry)
            index -= back
        values = {} if entry is None else dict(zip(entry[1::2], entry[2::2], strict=True))
        for delta in reversed(chain):
            values.update(zip(delta[1::2], delta[2::2], strict=True))
        return values

    def _plain_namespace(self, slot: str, index: int, memo: dict[int, Any]) -> dict[str, Any]:
        plain = self._store.plain
        return {name: plain(value, memo) for name, value in self._namespace(slot, index).items()}

    # ---- the graph ---------------------------------------------------------------------------

    def _graph_diff(self, diff: dict[str, Any]) -> tuple:
        """Store a graph diff: its nodes without the names derived from roots and leaves, ids shared."""
        store, live = self._store, self._nodes
        added, updated = diff.get("added", ()), diff.get("updated", ())
        roots, leaves = diff.get("roots", {}), diff.get("leaves", {})
        fresh = {node["id"]: node["id"] for node in added}
        names = names_by_node(roots)

        def shared_id(nid: int) -> int:  # one int object per node id: the one its stored node holds
            node = live.get(nid)
            return fresh.get(nid, nid) if node is None else self._id_of(node)

        def named(described: dict[str, Any]) -> bool:
            """Whether the node's names are the ones its roots and leaves give (then stored as None)."""
            nid = described["id"]
            return described["variables"] == names.get(nid, []) and described["variable"] == leaves.get(nid)

        def kept(nid: int, built: tuple) -> tuple:
            # Nodes are new at each diff (or only renamed), so they stay out of the store's table:
            # counted here, uncounted in _uncount once nothing kept refers to them.
            if built == live.get(nid):
                return live[nid]
            self._bytes += store.size(built)
            return built

        def stored(described: dict[str, Any]) -> tuple:
            nid = described["id"]
            node = {**described, "id": shared_id(nid), "next": [[shared_id(c), nr] for c, nr in described["next"]]}
            if named(described):
                node["variables"] = node["variable"] = None  # named again from roots and leaves when read
            return kept(nid, store.build(node, {k: _node_value(store, k, node[k]) for k in _PARTS if k in node}))

        def restored(described: dict[str, Any]) -> tuple:
            """An updated node: its stored form with only the values that are new objects stored again."""
            nid = described["id"]
            before, old = received.get(nid), live.get(nid)
            if before is None or old is None or store.keys.get(tuple(described)) is not old[1]:
                return stored(described)
            items, keys = list(old[3:]), old[1]
            for at, (key, value) in enumerate(described.items()):
                if value is not before[key] and key != "id":
                    if key == "next":
                        return stored(described)
                    items[at] = _node_value(store, key, value)
            variables, variable, by_name = described["variables"], described["variable"], named(described)
            items[keys.index("variables")] = None if by_name else store.intern(variables)
            items[keys.index("variable")] = None if by_name or variable is None else store.text(variable)
            return kept(nid, (DICT, keys, store._types(items), *items))

        received = self._received
        diff_removed = diff.get("removed", ())
        entry = (bool(diff.get("changed")), len(added), tuple(map(shared_id, diff_removed)),
                 store.pairs(x for name, nid in roots.items() for x in (store.text(name), shared_id(nid))),
                 store.pairs(x for nid, name in leaves.items() for x in (shared_id(nid), store.text(name))),
                 *map(stored, added), *map(restored, updated))
        for nid in diff_removed:
            received.pop(nid, None)
        for node in (*added, *updated):
            received[node["id"]] = node
        return entry

    def _graph_entry(self, diff: dict[str, Any] | None) -> Any:
        """The pause's graph entry; a diff that changes nothing is not kept."""
        pending, self._pending = self._pending, []
        own = None
        if diff is not None and not self._same_names(diff):  # most pauses of a recording store nothing
            own = self._graph_diff(diff)
            if len(own) == 5 and not own[0] and not own[2] and own[3] is self._roots and own[4] is self._leaves:
                own = None
            else:
                self._advance(own)
        return (*pending, own) if pending else own

    def _same_names(self, diff: dict[str, Any]) -> bool:
        """Whether ``diff`` changes nothing and names nodes with the very dicts of the diff before it
        (the session hands those on again when the lesson left them out, :mod:`app.pause_delta`)."""
        names = (diff.get("roots"), diff.get("leaves"))
        same = (names[0] is self._names_received[0] and names[1] is self._names_received[1]
                and not (diff.get("changed") or diff.get("added") or diff.get("updated") or diff.get("removed")))
        self._names_received = names
        return same

    def _id_of(self, node: tuple) -> int:
        keys = node[1]
        at = self._id_at.get(keys)
        if at is None:
            at = self._id_at[keys] = 3 + keys.index("id")
        return node[at]

    def _advance(self, diff: tuple) -> None:
        """Apply a diff to the live graph."""
        self._apply(self._nodes, diff)
        self._roots, self._leaves = diff[3], diff[4]
        self._graph_changes += len(diff) - 4 + len(diff[2])

    def _apply(self, nodes: dict[int, tuple], diff: tuple) -> None:
        for node in diff[5:]:  # an updated node takes the old one's place
            nodes[self._id_of(node)] = node
        for nid in diff[2]:
            nodes.pop(nid, None)

    def _graph_keyframe(self, index: int) -> None:
        keys = self._graph_key_list
        if (not keys or self._graph_changes > max(GRAPH_KEY_CHANGES, len(self._nodes))
                or index - keys[-1] >= GRAPH_KEY_PAUSES):
            self._set_keyframe(index, (dict(self._nodes), self._roots, self._leaves))
            self._graph_changes = 0

    def _set_keyframe(self, index: int, keyframe: tuple) -> None:
        self._graph_keys[index] = keyframe
        bisect.insort(self._graph_key_list, index)
        self._bytes += sys.getsizeof(keyframe) + sys.getsizeof(keyframe[0])

    def _drop_keyframe(self, index: int) -> None:
        keyframe = self._graph_keys.pop(index)
        self._graph_key_list.remove(index)
        self._bytes -= sys.getsizeof(keyframe) + sys.getsizeof(keyframe[0])

    def _graph_at(self, index: int) -> tuple[dict[int, tuple], tuple, tuple]:
        """The graph after pause ``index``: the keyframe at or before it, then the diffs since."""
        key = self._graph_key_list[bisect.bisect_right(self._graph_key_list, index) - 1]
        nodes, roots, leaves = self._graph_keys[key]
        nodes = dict(nodes)
        for pause in self._pauses[key + 1 - self._first:index + 1 - self._first]:
            for diff in _diffs(pause[_GRAPH]):
                self._apply(nodes, diff)
                roots, leaves = diff[3], diff[4]
        return nodes, roots, leaves

    def _plain_nodes(self, nodes: Any, roots: dict, leaves: dict, memo: dict[int, Any]) -> list[dict[str, Any]]:
        names = names_by_node(roots)
        out = []
        for stored in nodes:
            node = self._store.plain(stored, memo)
            if node["variables"] is None:
                nid = node["id"]
                node = {**node, "variables": list(names.get(nid, ())), "variable": leaves.get(nid)}
            out.append(node)
        return out

    def _plain_diff(self, diff: tuple | None, roots: dict, leaves: dict, memo: dict[int, Any]) -> dict[str, Any]:
        """A pause's own graph diff as it arrived (``edges_added`` rebuilt from the added nodes)."""
        if diff is None:
            return {"changed": False, "added": [], "updated": [], "removed": [], "edges_added": [],
                    "roots": roots, "leaves": leaves}
        roots, leaves = _unpairs(diff[3]), _unpairs(diff[4])
        split = 5 + diff[1]
        added = self._plain_nodes(diff[5:split], roots, leaves, memo)
        return {"changed": diff[0], "added": added, "updated": self._plain_nodes(diff[split:], roots, leaves, memo),
                "removed": list(diff[2]), "edges_added": _edges(added), "roots": roots, "leaves": leaves}

    # ---- the budget --------------------------------------------------------------------------

    def _evict(self) -> None:
        """Drop the oldest pauses until the history is under ``EVICT_TO`` of its budget (keeping the live one)."""
        target = self.budget_bytes * EVICT_TO
        self._store.forget_shared()
        while self.nbytes > target and len(self._pauses) > 1:
            self._drop_oldest(max(1, min(len(self._pauses) - 1, len(self._pauses) // 16)))

    def _drop_oldest(self, count: int) -> None:
        cut = self._first + count
        self._stand_alone_from(cut)
        old_keys = [k for k in self._graph_key_list if k < cut]
        nodes = self._nodes_of(self._pauses[:count], old_keys)
        self._bytes -= sum(map(self._pause_size, self._pauses[:count]))
        for column in (self._steps, self._lines, self._offsets, self._pauses):
            del column[:count]
        self._first = cut
        for index in old_keys:
            self._drop_keyframe(index)
        self._recent = {key: r for key, r in self._recent.items() if r[0] >= cut}
        self._uncount(nodes)
        self._store.sweep()

    def _stand_alone_from(self, cut: int) -> None:
        """Make the pauses from ``cut`` on independent of the ones before it, which are about to go.

        A namespace stored as a change to a pause before the cut is stored whole (a base is at most
        ``BASE_WINDOW`` pauses back), and the graph gets a keyframe at the cut.
        """
        for index in range(cut, min(cut + BASE_WINDOW, len(self))):
            for slot, position in _SLOTS.items():
                pause = self._pauses[index - self._first]
                back = _back(pause[position])
                if back is not None and index - back < cut:
                    whole = (*pause[:position], self._whole(self._namespace(slot, index)), *pause[position + 1:])
                    self._pauses[index - self._first] = whole
                    self._bytes += self._pause_size(whole) - self._pause_size(pause)
        if cut not in self._graph_keys:
            self._set_keyframe(cut, self._graph_at(cut))

    def _nodes_of(self, pauses: list[tuple], keyframes: list[int]) -> dict[int, tuple]:
        """The graph nodes the given pauses' diffs and keyframes refer to, each once."""
        nodes = {id(node): node for pause in pauses for diff in _diffs(pause[_GRAPH]) for node in diff[5:]}
        nodes.update((id(node), node) for index in keyframes for node in self._graph_keys[index][0].values())
        return nodes

    def _uncount(self, nodes: dict[int, tuple]) -> None:
        """Uncount the graph nodes that only ``nodes`` still refers to (their pauses and keyframes are gone)."""
        for node in nodes.values():
            if sys.getrefcount(node) <= self._only_in_values:
                self._bytes -= self._store.size(node)

    def _trim_output(self) -> None:
        """Drop the oldest console text until it is under ``EVICT_TO`` of its share of the budget."""
        target = self.budget_bytes * OUTPUT_SHARE * EVICT_TO
        count = 0
        while self._output_bytes > target and count < len(self._output) - 1:
            chunk = self._output[count]
            self._output_bytes -= sys.getsizeof(chunk) + sys.getsizeof(chunk[1])
            count += 1
        del self._output[:count]
        self._output_first += count
