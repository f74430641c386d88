"""Pauses travel as changes: what did not change since the previous pause is named, not re-sent.

At a pause most of the snapshot is what the previous pause sent: the summaries of tensors
that did not change (the summarizer hands back the very same dict) and, while a line is
stepped one operation at a time, the operations logged so far. Encoding and decoding them
again was most of an op-level pause's cost. The lesson side (:class:`PauseCompressor`)
replaces a variable whose summary is the object it sent last time by ``None`` and sends
only the operations after the ones already sent (``ops_kept`` says how many those are);
the app side (:func:`expand`) puts them back from the previous snapshot, so every listener
of the session still sees whole snapshots. Both sides see every pause in order (record-mode
pauses included), which is what keeps them in step.

Graph nodes travel the same way: a node the graph tracker updates (its saved tensors freed by
a backward, renamed, a leaf's new summary) goes as a patch, its ``id`` and the keys whose values
are not the objects sent for it before (:class:`GraphCompressor`); the app side
(:class:`GraphMirror`) keeps the nodes it received and hands on whole ones. A diff's ``roots`` and
``leaves`` (the variables that name nodes) are left out when they are the ones sent last, which
is most pauses of a recording; the mirror puts back the very dicts it handed on before. Pauses
and the replies to requests carry graph changes, in the order they were made.
"""

from __future__ import annotations

from typing import Any

#: The snapshot sections whose summaries are sent as changes.
SECTIONS = ("vars", "globals")
#: What a variable holds on the wire when its summary is the one the previous pause sent.
SAME = None
#: The key that says how many of the previous pause's operations lead this pause's.
OPS_KEPT = "ops_kept"
#: A graph's naming maps, left out of a diff that names nodes as the graph before it did.
NAMES = ("roots", "leaves")


class PauseCompressor:
    """The lesson side: remembers what the last pause sent and leaves it out of the next one."""

    def __init__(self) -> None:
        self._sent: dict[str, dict[str, Any]] = {section: {} for section in SECTIONS}
        self._ops: list[Any] = []
        self.graph = GraphCompressor()

    def compress(self, snapshot: dict[str, Any]) -> dict[str, Any]:
        """The snapshot as it goes on the wire (a new dict; ``snapshot`` is left as it is)."""
        wire = dict(snapshot)
        for section in SECTIONS:
            values = snapshot.get(section)
            if values is None:
                continue
            before = self._sent[section]
            wire[section] = {name: SAME if isinstance(summary, dict) and before.get(name) is summary else summary
                             for name, summary in values.items()}
            self._sent[section] = dict(values)
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
    for section in SECTIONS:
        values = wire.get(section)
        if not isinstance(values, dict) or SAME not in values.values():
            continue
        before = previous.get(section) or {}
        wire[section] = {name: summary if summary is not SAME else before.get(name) or _missing(name)
                         for name, summary in values.items()}
    kept = wire.pop(OPS_KEPT, 0)
    if isinstance(kept, int) and kept > 0:
        earlier = list(previous.get("ops") or ())[:kept]
        wire["ops"] = earlier + list(wire.get("ops") or ())
    return wire


class GraphCompressor:
    """The lesson side of graph changes: updated nodes as patches against the node dicts sent before."""

    def __init__(self) -> None:
        self._sent: dict[int, dict[str, Any]] = {}  # node id -> the node dict the app has for it
        self._names: tuple[Any, Any] | None = None  # the roots and leaves the app has

    def compress(self, graph: dict[str, Any]) -> dict[str, Any]:
        """A graph diff (or whole graph, ``"nodes"``) as it goes on the wire (``graph`` is left as it is)."""
        sent = self._sent
        names = (graph.get("roots"), graph.get("leaves"))
        if "nodes" in graph:
            self._sent = {node["id"]: node for node in graph["nodes"]}
            self._names = names
            return graph
        if names == self._names:
            graph = {key: value for key, value in graph.items() if key not in NAMES}
        else:
            self._names = names
        for nid in graph.get("removed", ()):
            sent.pop(nid, None)
        for node in graph.get("added", ()):
            sent[node["id"]] = node
        updated = graph.get("updated")
        if not updated:
            return graph
        patches = []
        for node in updated:
            nid = node["id"]
            before = sent.get(nid)
            sent[nid] = node
            if before is None:
                patches.append(node)
            else:  # the graph tracker replaces a node by a copy with new values for the keys that changed
                patches.append({"id": nid, **{key: value for key, value in node.items()
                                              if before.get(key, _ABSENT) is not value}})
        return {**graph, "updated": patches}


class GraphMirror:
    """The app side of graph changes: the nodes received, to make whole nodes of the patches."""

    def __init__(self) -> None:
        self._nodes: dict[int, dict[str, Any]] = {}
        self._names: dict[str, Any] = {"roots": {}, "leaves": {}}

    def expand(self, graph: dict[str, Any]) -> dict[str, Any]:
        """Fill in a graph diff (or whole graph) as received, in place; returns it.

        A whole node takes the place of its patch; the keys a patch leaves out are the very
        objects of the node before it, so a listener can tell what changed by identity. So are
        the ``roots`` and ``leaves`` a diff leaves out.
        """
        names = self._names
        for key in NAMES:
            if key in graph:
                names[key] = graph[key]
            else:
                graph[key] = names[key]
        nodes = self._nodes
        if isinstance(graph.get("nodes"), list):
            self._nodes = {node["id"]: node for node in graph["nodes"] if isinstance(node, dict)}
            return graph
        for nid in graph.get("removed") or ():
            nodes.pop(nid, None)
        for node in graph.get("added") or ():
            if isinstance(node, dict):
                nodes[node.get("id")] = node
        updated = graph.get("updated")
        if updated:
            whole = []
            for patch in updated:
                if not isinstance(patch, dict):
                    continue
                nid = patch.get("id")
                before = nodes.get(nid)
                if before is None and "name" not in patch:
                    continue  # a patch of a node never received: nothing to bring up to date
                node = patch if before is None else {**before, **patch}
                nodes[nid] = node
                whole.append(node)
            graph["updated"] = whole
        return graph


_ABSENT = object()


def _missing(name: str) -> dict[str, Any]:
    return {"type": "missing", "repr": f"<{name}: the lesson process referred to a value it never sent>"}
