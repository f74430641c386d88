"""Pauses travel as changes: what did not change since the previous pause is named, not re-sent.

At a pause most of the snapshot is what the previous pause sent: the summaries of tensors
that did not change (the summarizer hands back the very same dict) and, while a line is
stepped one operation at a time, the operations logged so far. Encoding and decoding them
again was most of an op-level pause's cost. The lesson side (:class:`PauseCompressor`)
replaces a variable whose summary is the object it sent last time by ``None`` and sends
only the operations after the ones already sent (``ops_kept`` says how many those are);
the app side (:func:`expand`) puts them back from the previous snapshot, so every listener
of the session still sees whole snapshots. When a section names the same variables in the same
order as before (most steps of a recording), only its changed ones travel, and ``names_kept``
lists such sections. Both sides see every pause in order (record-mode pauses included), which
is what keeps them in step.

Graph nodes travel the same way: a node the graph tracker updates (its saved tensors freed by
a backward, renamed, a leaf's new summary) goes as a patch, its ``id`` and the keys whose values
are not the objects sent for it before (:class:`GraphCompressor`); the app side
(:class:`GraphMirror`) keeps the nodes it received and hands on whole ones. A diff's ``roots`` and
``leaves`` (the variables that name nodes) are left out when they are the ones sent last, which
is most pauses of a recording; the mirror puts back the very dicts it handed on before, and the
empty lists and ``changed: false`` of a diff that changes nothing. Pauses and the replies to
requests carry graph changes, in the order they were made.

Nodes share parts: the origin of the nodes one line made, the entry ``_saved_alpha: 1`` of every
addition, a weight every step of a loop saved. A part a diff sends again (the same object) travels
as a number, its place in the list of parts sent so far, counted the same way on both sides: the
origin and then each saved entry of each added node and updated node, in order. Both sides start
the list again once it holds :data:`PARTS_LIMIT` parts. The app thus gets one object per part, as
the lesson made them, and :class:`app.history.History` stores each once by identity.
"""

from __future__ import annotations

from typing import Any

#: The snapshot sections whose summaries are sent as changes.
SECTIONS = ("vars", "globals")
#: What a variable holds on the wire when its summary is the one the previous pause sent.
SAME = None
#: The key that says how many of the previous pause's operations lead this pause's.
OPS_KEPT = "ops_kept"
#: The key that lists the sections whose names (and their order) are the previous pause's.
NAMES_KEPT = "names_kept"
#: A graph's naming maps, left out of a diff that names nodes as the graph before it did.
NAMES = ("roots", "leaves")
#: A graph diff's lists, left out when empty.
DIFF_LISTS = ("added", "updated", "removed", "edges_added")
#: The keys of a graph diff left out when empty or false.
_QUIET_KEYS = frozenset({*DIFF_LISTS, "changed"})
#: Node parts both sides number before they start afresh (see the module's notes).
PARTS_LIMIT = 4096


class PauseCompressor:
    """The lesson side: remembers what the last pause sent and leaves it out of the next one."""

    def __init__(self) -> None:
        self._sent: dict[str, dict[str, Any]] = {section: {} for section in SECTIONS}
        self._names: dict[str, tuple[str, ...]] = {section: () for section in SECTIONS}
        self._ops: list[Any] = []
        self.graph = GraphCompressor()

    def compress(self, snapshot: dict[str, Any]) -> dict[str, Any]:
        """The snapshot as it goes on the wire (a new dict; ``snapshot`` is left as it is)."""
        wire = dict(snapshot)
        same_names = []
        for section in SECTIONS:
            values = snapshot.get(section)
            if values is None:
                continue
            before = self._sent[section]
            names = tuple(values)
            if names == self._names[section]:
                wire[section] = {name: summary for name, summary in values.items() if before[name] is not summary}
                same_names.append(section)
            else:
                wire[section] = {name: SAME if isinstance(summary, dict) and before.get(name) is summary
                                 else summary for name, summary in values.items()}
                self._names[section] = names
            self._sent[section] = values
        if same_names:
            wire[NAMES_KEPT] = same_names
        ops = snapshot.get("ops")
        if ops:
            kept = 0
            for old, new in zip(self._ops, ops, strict=False):
                if old is not new:
                    break
                kept += 1
            if kept:
                wire["ops"], wire[OPS_KEPT] = ops[kept:], kept
        self._ops = list(ops or ())
        graph = snapshot.get("graph")
        if graph is not None:
            wire["graph"] = self.graph.compress(graph)
        return wire


def expand(previous: dict[str, Any] | None, wire: dict[str, Any]) -> dict[str, Any]:
    """Fill ``wire`` (a pause as sent) in place from ``previous`` (the whole snapshot before it); returns it.

    A name or operation the previous snapshot lacks (which only a lesson process that does
    not follow the protocol can cause) becomes a summary that says so, never an error.
    """
    previous = previous or {}
    same_names = wire.pop(NAMES_KEPT, None)
    same_names = same_names if isinstance(same_names, list) else ()
    for section in SECTIONS:
        values = wire.get(section)
        if not isinstance(values, dict):
            continue
        before = previous.get(section) or {}
        if section in same_names:
            wire[section] = {**before, **values}
        elif SAME in values.values():
            wire[section] = {name: summary if summary is not SAME else before.get(name) or _missing(name)
                             for name, summary in values.items()}
    kept = wire.pop(OPS_KEPT, 0)
    if isinstance(kept, int) and kept > 0:
        earlier = list(previous.get("ops") or ())[:kept]
        wire["ops"] = earlier + list(wire.get("ops") or ())
    return wire


class GraphCompressor:
    """The lesson side of graph changes: updated nodes as patches against the node dicts sent before,
    and the parts of nodes sent before as their numbers."""

    def __init__(self) -> None:
        self._sent: dict[int, dict[str, Any]] = {}  # node id -> the node dict the app has for it
        self._names: tuple[Any, Any] | None = None  # the roots and leaves the app has
        self._numbers: dict[int, int] = {}  # id() of a part sent -> its number
        self._held: list[Any] = []  # the parts sent, by number

    def compress(self, graph: dict[str, Any]) -> dict[str, Any]:
        """A graph diff (or whole graph, ``"nodes"``) as it goes on the wire (``graph`` is left as it is)."""
        sent = self._sent
        names = (graph.get("roots"), graph.get("leaves"))
        if "nodes" in graph:
            self._sent = {node["id"]: node for node in graph["nodes"]}
            self._names = names
            return graph
        same_names, self._names = names == self._names, names
        graph = {key: value for key, value in graph.items()
                 if not (key in _QUIET_KEYS and not value) and not (same_names and key in NAMES)}
        for nid in graph.get("removed", ()):
            sent.pop(nid, None)
        added = graph.get("added")
        if added:
            for node in added:
                sent[node["id"]] = node
        updated = graph.get("updated")
        if not (added or updated):
            return graph
        if len(self._held) >= PARTS_LIMIT:
            self._numbers.clear()
            self._held.clear()
        if added:
            graph["added"] = list(map(self._numbered, added))
        if updated:
            patches = []
            for node in updated:
                nid = node["id"]
                before = sent.get(nid)
                sent[nid] = node
                if before is not None:  # the tracker replaces a node by a copy with new values where it changed
                    node = {"id": nid, **{key: value for key, value in node.items()
                                          if before.get(key, _ABSENT) is not value}}
                patches.append(self._numbered(node))
            graph["updated"] = patches
        return graph

    def _numbered(self, node: dict[str, Any]) -> dict[str, Any]:
        """``node`` with its origin and saved entries sent before as their numbers (a copy when any is)."""
        numbers, held = self._numbers, self._held  # held keeps the parts alive: an id() in numbers stays theirs
        origin, saved = node.get("origin"), node.get("saved")
        ref = numbers.get(id(origin))
        if ref is None and type(origin) is dict:
            numbers[id(origin)] = len(held)
            held.append(origin)
        items = None
        for at, entry in enumerate(saved or ()):
            number = numbers.get(id(entry))
            if number is not None:
                if items is None:
                    items = list(saved)
                items[at] = number
            elif type(entry) is dict:
                numbers[id(entry)] = len(held)
                held.append(entry)
        if ref is None and items is None:
            return node
        node = dict(node)
        if ref is not None:
            node["origin"] = ref
        if items is not None:
            node["saved"] = items
        return node


class GraphMirror:
    """The app side of graph changes: the nodes and parts received, to make whole nodes of the patches."""

    def __init__(self) -> None:
        self._nodes: dict[int, dict[str, Any]] = {}
        self._names: dict[str, Any] = {"roots": {}, "leaves": {}}
        self._parts: list[Any] = []

    def expand(self, graph: dict[str, Any]) -> dict[str, Any]:
        """Fill in a graph diff (or whole graph) as received, in place; returns it.

        A whole node takes the place of its patch; the keys a patch leaves out are the very
        objects of the node before it, so a listener can tell what changed by identity. So are
        the ``roots`` and ``leaves`` a diff leaves out, and a node's parts sent as numbers.
        """
        names = self._names
        for key in NAMES:
            if key in graph:
                names[key] = graph[key]
        nodes = self._nodes
        if isinstance(graph.get("nodes"), list):
            self._nodes = {node["id"]: node for node in graph["nodes"] if isinstance(node, dict)}
            for key in NAMES:
                graph.setdefault(key, names[key])
            return graph
        received = dict(graph)  # in the tracker's order again, with what was left out put back
        graph.clear()
        graph["changed"] = received.pop("changed", False)
        for key in DIFF_LISTS:
            graph[key] = received.pop(key, [])
        for key in NAMES:
            graph[key] = received.pop(key, names[key])
        graph.update(received)
        for nid in graph.get("removed") or ():
            nodes.pop(nid, None)
        added, updated = graph.get("added"), graph.get("updated")
        if (added or updated) and len(self._parts) >= PARTS_LIMIT:
            self._parts.clear()
        if added:
            graph["added"] = added = [self._whole_parts(node) for node in added if isinstance(node, dict)]
            for node in added:
                nodes[node.get("id")] = node
        if updated:
            whole = []
            for patch in updated:
                if not isinstance(patch, dict):
                    continue
                patch = self._whole_parts(patch)
                nid = patch.get("id")
                before = nodes.get(nid)
                if before is None and "name" not in patch:
                    continue  # a patch of a node never received: nothing to bring up to date
                node = patch if before is None else {**before, **patch}
                nodes[nid] = node
                whole.append(node)
            graph["updated"] = whole
        return graph

    def _whole_parts(self, node: dict[str, Any]) -> dict[str, Any]:
        """``node`` (modified in place) with the parts it names by number put back, and its new parts numbered."""
        if "origin" in node:
            node["origin"] = self._part(node["origin"], None)
        saved = node.get("saved")
        if isinstance(saved, list):
            node["saved"] = [self._part(entry, _MISSING_ENTRY) for entry in saved]
        return node

    def _part(self, value: Any, missing: Any) -> Any:
        if isinstance(value, dict):
            self._parts.append(value)
            return value
        if type(value) is int and 0 <= value < len(self._parts):
            return self._parts[value]
        return missing


_ABSENT = object()


#: A saved entry named by a number the lesson process never gave (only one that breaks the protocol can do that).
_MISSING_ENTRY = {"name": "?", "value": None, "freed": False,
                  "error": "the lesson process referred to a saved value it never sent"}


def _missing(name: str) -> dict[str, Any]:
    return {"type": "missing", "repr": f"<{name}: the lesson process referred to a value it never sent>"}
