"""The autograd graph behind a paused frame's tensors, as plain data and as a diff between pauses.

Runs inside the lesson process. Autograd nodes cannot be weakly referenced, and holding them
would keep the learner's graph and its saved tensors alive, so nothing here keeps a node
between calls: each node carries its GradStep id in ``node.metadata`` and the tracker keeps
only ids, edges and the plain-data node descriptions it already sent.
"""

from __future__ import annotations

import itertools
import sys
from collections.abc import Callable, Iterator
from typing import Any

from app.gc_pause import gc_paused
from app.graph_format import names_by_node, reachable
from app.lesson.autograd_nodes import (
    METADATA_KEY,
    NO_SEQUENCE,
    SavedReader,
    freed_entry,
    held_tensors,
    node_id,
    node_kind,
    node_origin,
    output_shape,
    released,
    still_saved,
)
from app.lesson.object_reads import MODULE_LIMIT, container_base, first_items, module_tensors
from app.lesson.summaries import DEPTH_LIMIT, TensorSummarizer, bounded_repr, node_name

#: Items of one list, tuple or dict searched for tensors.
CONTAINER_LIMIT = 1_000
#: How far below a root node the unchanged-pause check looks for saved tensors freed by a backward.
PROBE_DEPTH = 4

#: Settled probes a tracker remembers (see :meth:`_Frame.probes`) before it starts afresh.
SETTLED_LIMIT = 10_000



def find_tensors(variables: dict[str, Any]) -> list[tuple[str, Any]]:
    """Every tensor reachable from a frame's variables, named as the learner would write it.

    Looks inside lists and tuples (``xs[0]``), dict values (``d['k']``), module parameters and
    buffers (``model.linear.weight``) and ``PackedSequence.data``, ``DEPTH_LIMIT`` levels deep
    and ``CONTAINER_LIMIT`` items wide. Names of the frame itself come before nested ones, so a
    tensor found twice is first listed under its plainest name. Dunder names are skipped.

    Parameters
    ----------
    variables : dict
        Name to value, as in ``frame.f_locals``.

    Returns
    -------
    list of (str, torch.Tensor)
    """
    return [(label(path), tensor) for path, tensor in tensor_paths(variables)]


#: Where a tensor was found: a variable's name, or ``(container's path, index)`` for an item
#: of a list or tuple, or ``(container's path, key, True)`` for a value of a dict.
TensorPath = str | tuple


def label(path: TensorPath) -> str:
    """The name a learner would write for a tensor found at ``path``."""
    if isinstance(path, str):
        return path
    if len(path) == 2:
        return f"{label(path[0])}[{path[1]}]"
    return f"{label(path[0])}[{bounded_repr(path[1], 60)}]"


def tensor_paths(variables: dict[str, Any]) -> list[tuple[TensorPath, Any]]:
    """:func:`find_tensors` with each name left as a :data:`TensorPath`, spelled by :func:`label` when needed.

    An unchanged pause only needs the names of the tensors autograd records, so the names of
    a list's thousands of other tensors are never spelled out there.
    """
    torch = sys.modules.get("torch")
    if torch is None:
        return []
    tensor, nested = torch.Tensor, (list, tuple, dict, torch.nn.Module)
    found: list[tuple[TensorPath, Any]] = []
    pending: list[tuple[TensorPath, Any, int]] = []
    for name, value in variables.items():
        if name.startswith("__"):
            continue
        # By the real type: ``isinstance`` would ask a mock's spec, or a lesson's ``__getattribute__``.
        if issubclass(type(value), tensor):
            found.append((name, value))
        elif issubclass(type(value), nested):
            pending.append((name, value, 1))
    for path, value, depth in pending:  # grows while read: breadth first
        try:
            children = _children_of(torch, path, value)
        except Exception:  # a half-built module (before super().__init__()) has nothing to show yet
            continue
        deeper = depth < DEPTH_LIMIT
        for child_path, child in children:  # inlined: a list holds thousands of items
            if issubclass(type(child), tensor):
                found.append((child_path, child))
            elif deeper and issubclass(type(child), nested):
                pending.append((child_path, child, depth + 1))
    return found


def _children_of(torch: Any, path: TensorPath, value: Any) -> Iterator[tuple[TensorPath, Any]]:
    """The items of a container or a module's tensors, read without running the lesson's methods
    (a subclass's ``__iter__``, an overridden ``named_parameters()``: see :mod:`app.lesson.object_reads`)."""
    if issubclass(type(value), torch.nn.utils.rnn.PackedSequence):
        return iter([(f"{label(path)}.data", tuple.__getitem__(value, 0))])
    if issubclass(type(value), torch.nn.Module):
        name = label(path)
        named = [*module_tensors(value, "_parameters", MODULE_LIMIT)[0],
                 *module_tensors(value, "_buffers", MODULE_LIMIT)[0]]
        return iter([(f"{name}.{key}", tensor) for key, tensor in named])
    base = container_base(value)
    if base is dict:
        return (((path, key, True), item) for key, item in first_items(value, dict, CONTAINER_LIMIT))
    return zip(zip(itertools.repeat(path), range(CONTAINER_LIMIT)), first_items(value, base, CONTAINER_LIMIT),
               strict=False)


def reachable_nodes(roots: list[Any]) -> list[Any]:
    """All autograd nodes reachable from ``roots`` through ``next_functions``, each once, roots first."""
    return reachable(roots, lambda node: (child for child, _ in node.next_functions if child is not None))


class _Frame:
    """The tensors of one pause: the root node of each variable, and named leaves.

    Only tensors that require grad can have a node or be a leaf, so only theirs are named
    at once; :attr:`names`, which a walk of new nodes needs for saved tensors, is spelled out
    on first use. ``summaries`` are the pause's summaries of the variables by name, when the
    caller has them: a leaf that is a variable of the frame is not summarised again.
    """

    def __init__(self, variables: dict[str, Any], summaries: dict[str, Any] | None = None) -> None:
        self._paths = tensor_paths(variables)
        self._names: dict[int, str] | None = None
        self._summaries = {} if summaries is None else summaries
        self.tracked: dict[int, str] = {}  # id() -> first name, of the tensors that require grad
        self.root_nodes: dict[str, Any] = {}
        self.leaves: dict[int, Any] = {}
        for path, tensor in self._paths:
            if not tensor.requires_grad:  # no grad_fn either: reading it costs more than this test
                continue
            name = label(path)
            self.tracked.setdefault(id(tensor), name)
            grad_fn = tensor.grad_fn
            if grad_fn is not None:
                self.root_nodes[name] = grad_fn
            else:
                self.leaves[id(tensor)] = tensor
        self.roots = {name: node_id(node) for name, node in self.root_nodes.items()}

    @property
    def names(self) -> dict[int, str]:
        """``id()`` to first name of every tensor found."""
        if self._names is None:
            self._names = {}
            for path, tensor in self._paths:
                if id(tensor) not in self._names:
                    self._names[id(tensor)] = label(path)
        return self._names

    def leaf_state(self, summarizer: TensorSummarizer) -> tuple:
        """What a backward, ``zero_grad`` or optimiser step changes on the named leaves.

        The summary's identity stands for values written without a version bump (through ``.data``).
        """
        state = []
        for tid, tensor in self.leaves.items():
            grad = tensor.grad
            grad_version = None if grad is None else grad._version
            state.append((self.tracked[tid], tid, tensor._version, id(grad), grad_version,
                          id(self.summary_of(tensor, self.tracked[tid], summarizer))))
        return tuple(state)

    def summary_of(self, tensor: Any, name: str | None, summarizer: TensorSummarizer) -> dict[str, Any]:
        """The summary of a tensor found under ``name``: the pause's own when it is a variable, kept."""
        summary = self._summaries.get(name)  # only a variable's name is a key: "xs[0]" is none
        if summary is None:
            summary = summarizer.summarize(tensor)
            if name is not None:
                self._summaries[name] = summary
        return summary

    def probes(self, settled: dict[int, bool | None]) -> dict[int, bool | None]:
        """Whether saved tensors near each top-level root are still there, by root node id: flips after a backward.

        ``settled`` holds the probes that can no longer change, by root node id: True (a backward
        freed them, and freed tensors never come back) and None (the nodes probed save no tensor;
        ``next_functions`` never change). Only the False ones are probed again; a freed probe
        costs a raised RuntimeError, and the same roots are probed at every step of a recording.
        """
        return _probes(self.roots, self.root_nodes.__getitem__, settled)


def _probes(roots: dict[str, int], node_of: Callable[[str], Any],
            settled: dict[int, bool | None]) -> dict[int, bool | None]:
    """:meth:`_Frame.probes` over ``roots`` (variable → node id), ``node_of(name)`` giving each root's node."""
    out: dict[int, bool | None] = {}
    for name, nid in roots.items():
        if nid in out or not name.isidentifier():
            continue
        state = settled.get(nid, False)
        if state is False:
            state = _probe(node_of(name))
            if state is not False:
                if len(settled) >= SETTLED_LIMIT:
                    settled.clear()
                settled[nid] = state
        out[nid] = state
    return out


def _freed_since(before: dict[int, bool | None], after: dict[int, bool | None]) -> bool:
    """Whether probes tell of a backward between two looks: a root's probe that changed, or a new root already freed.

    A root that came or went with its saved tensors in place says nothing of a backward (a
    recording's every new ``h`` or ``loss``): its new nodes are described as they are.
    """
    return any(state is True if nid not in before else before[nid] != state for nid, state in after.items())


def _probe(node: Any) -> bool | None:
    for _ in range(PROBE_DEPTH):
        state = released(node)
        if state is not None:
            return state
        children = [child for child, _ in node.next_functions if child is not None]
        if not children:
            return None
        node = children[0]
    return None


#: Summary types of values that hold no tensor (builtin scalars, summarised by value).
_SCALAR_SUMMARIES = frozenset({"int", "float", "bool", "str", "NoneType", "complex", "bytes"})


class GraphBasis:
    """What the graph tracker looked at in the last pause: the frame and its variables' summaries.

    A recording pauses at every line, and at most of them no tensor changed. When the frame
    is the one of the last look and every summary that can stand for a tensor in a graph is
    the very object it was then (tensor summaries are cached by identity, version, ``grad_fn``
    and ``.grad``; a tensor that needs no grad and has none is in no graph), the tracker need
    not walk the variables again (``same_tensors`` of :meth:`GraphTracker.update`). The frame
    is held until the next pause, as the runner's call stack is.
    """

    def __init__(self) -> None:
        self._frame: Any = None
        self._summaries: dict[str, Any] = {}

    def seen(self, frame: Any, summaries: dict[str, Any]) -> None:
        """The tracker looked at ``frame`` whose visible variables have these summaries."""
        self._frame, self._summaries = frame, summaries

    def forget(self) -> None:
        """The tracker looked elsewhere (a request, an operation's outputs): the next look is a whole one."""
        self._frame, self._summaries = None, {}

    def unchanged(self, frame: Any, summaries: dict[str, Any]) -> bool:
        """Whether ``frame`` is the frame of the last look, with the same names, and no value that can
        hold a tensor changed."""
        before = self._summaries
        if frame is not self._frame or frame is None or summaries.keys() != before.keys():
            return False
        for name, summary in summaries.items():
            old = before[name]
            if old is not summary and not (_outside_graphs(summary) and _outside_graphs(old)):
                return False  # a number for a number is no change to the graph; h = None is
        return True


def _outside_graphs(summary: dict[str, Any]) -> bool:
    """Whether the summarised value can be no part of a graph: a number, or a tensor that needs no grad and has none."""
    kind = summary.get("type")
    return kind in _SCALAR_SUMMARIES or (kind == "Tensor" and summary.get("requires_grad") is False
                                         and summary.get("grad") is None)


class GraphTracker:
    """Follows the autograd graph of a frame's tensors from pause to pause.

    Parameters
    ----------
    summarizer : TensorSummarizer
        Summarises the leaf tensors of ``AccumulateGrad`` nodes (cached by identity and version).
    origins : callable, optional
        ``origins(seq)`` is the ``"origin"`` of the node with that ``_sequence_nr()`` (see
        :class:`app.lesson.origins.OriginBook`); an ``AccumulateGrad`` node gets that of the earliest
        made node that uses it. Without it, ``"origin"`` is None.

    Notes
    -----
    A node's description is built once, when it first becomes reachable; later changes come
    as ``updated`` entries that replace it whole: its saved tensors freed by a backward, the
    variables that name it, a leaf's summary after its ``.grad`` or values changed.
    """

    def __init__(self, summarizer: TensorSummarizer,
                 origins: Callable[[int | None], dict[str, Any]] | None = None) -> None:
        self._summarizer = summarizer
        self._origins = origins
        self._children: dict[int, list[tuple[int, int]]] = {}
        self._nodes: dict[int, dict[str, Any]] = {}
        self._leaf_tensor: dict[int, int] = {}  # AccumulateGrad id -> id() of its leaf (the node keeps it)
        self._live_saved: dict[int, str] = {}  # node id -> an attribute that held a tensor when first seen
        self._roots: dict[str, int] = {}
        self._leaves: dict[int, str] = {}
        self._named: tuple[dict, dict, dict, dict] | None = None  # _roots and _leaves, and the copies handed out
        self._by_sequence: dict[int, int] = {}  # _sequence_nr() -> node id, for the op recorder's nodes
        self._fingerprint: tuple | None = None
        self._settled: dict[int, bool | None] = {}  # root node id -> a probe that cannot change any more
        self._constant_entries: dict[tuple, dict[str, Any]] = {}  # see SavedReader
        self._lasting_entries: dict[tuple, tuple[Any, tuple, dict[str, Any]]] = {}

    def update(self, variables: dict[str, Any], same_tensors: bool = False,
               summaries: dict[str, Any] | None = None) -> dict[str, Any]:
        """The change of the graph since the previous call.

        Parameters
        ----------
        variables : dict
            The live name to value mapping of the paused frame.
        same_tensors : bool
            The caller knows that ``variables`` is the namespace of the previous call and that
            every value in it that can hold a tensor is the same object, unchanged (its summary
            is the one of the previous call): then only a backward that freed saved tensors can
            have changed the graph, and only that is looked at (a recording's common pause).
        summaries : dict, optional
            The summaries of ``variables`` made at this pause by the tracker's summarizer, by name
            (the snapshot's ``vars``): leaves among them are not summarised again.

        Returns
        -------
        dict
            ``{"changed", "added", "updated", "removed", "edges_added", "roots", "leaves"}``:
            ``added`` and ``updated`` hold node dicts (``updated`` ones replace the dict sent
            earlier under the same id), ``removed`` node ids, ``edges_added``
            ``[from_id, to_id, input_nr]`` lists, ``roots`` ``{variable: node_id}`` and
            ``leaves`` ``{node_id: variable}`` as they are now.
        """
        previous = self._fingerprint
        if same_tensors and previous is not None:
            try:
                probes = _probes(previous[0], lambda name: variables[name].grad_fn, self._settled)
            except (KeyError, AttributeError):  # not the namespace it was said to be: look at it all
                probes = None
            if probes == previous[2]:
                return self._diff(False, [], [], [], [])
        frame = _Frame(variables, None if summaries is None else dict(summaries))
        fingerprint = (frame.roots, frame.leaf_state(self._summarizer), frame.probes(self._settled))
        if fingerprint == previous:
            return self._diff(False, [], [], [], [])
        backward_suspected = previous is not None and (previous[1] != fingerprint[1]
                                                       or _freed_since(previous[2], fingerprint[2]))
        with gc_paused():
            diff = self._apply(frame, backward_suspected)
        self._fingerprint = fingerprint
        return diff

    def _apply(self, frame: _Frame, backward_suspected: bool) -> dict[str, Any]:
        """Bring the tables up to ``frame`` and describe what changed."""
        added, edges, boundary = self._walk_new(frame)
        removed = self._prune(self._roots, frame.roots, boundary)
        updated: set[int] = set()
        if backward_suspected:  # leaves' grads or saved tensors near a root changed
            updated |= self._refresh_freed(frame)
        previous_roots, self._roots = self._roots, frame.roots
        previous_leaves, self._leaves = self._leaves, self._named_leaves(frame)
        updated |= self._rename(previous_roots, previous_leaves)
        updated |= self._refresh_leaves(frame)
        new_ids = {node["id"] for node in added}
        changes = sorted(i for i in updated if i in self._nodes and i not in new_ids)
        renamed = (previous_roots, previous_leaves) != (self._roots, self._leaves)
        changed = bool(added or removed or changes or renamed)
        return self._diff(changed, added, [self._nodes[i] for i in changes], removed, edges)

    def ids_of(self, sequences: list[int]) -> list[int]:
        """The ids of the known nodes with these ``_sequence_nr()`` values (unknown ones left out)."""
        by_sequence = self._by_sequence
        return [by_sequence[seq] for seq in sequences if seq in by_sequence]

    def full(self) -> dict[str, Any]:
        """The whole graph as of the last ``update``.

        Returns
        -------
        dict
            ``{"nodes", "edges", "roots", "leaves"}``: node dicts in discovery order, edges
            ``[from_id, to_id, input_nr]`` from a node to each node in its ``next_functions``.
        """
        edges = [[nid, child, nr] for nid, nexts in self._children.items() for child, nr in nexts]
        nodes = list(self._nodes.values())
        return {"nodes": nodes, "edges": edges, "roots": dict(self._roots), "leaves": dict(self._leaves)}

    def _diff(self, changed: bool, added: list, updated: list, removed: list, edges: list) -> dict[str, Any]:
        named = self._named  # while the tables stay (most pauses), diffs share one copy of each: the
        if named is None or named[0] is not self._roots or named[1] is not self._leaves:  # wire sends it once
            named = self._named = (self._roots, self._leaves, dict(self._roots), dict(self._leaves))
        return {
            "changed": changed,
            "added": added,
            "updated": updated,
            "removed": removed,
            "edges_added": edges,
            "roots": named[2],
            "leaves": named[3],
        }

    def _walk_new(self, frame: _Frame) -> tuple[list[dict], list[list[int]], set[int]]:
        """Describe the nodes not seen before; stop at known ones (their next_functions never change)."""
        names_of = names_by_node(frame.roots)
        reader = SavedReader(frame.names, self._constant_entries, self._lasting_entries)
        added, edges, boundary = [], [], set()
        first_use: dict[int, int] = {}  # node id -> the lowest sequence number of a new node using it
        stack = [node for name, node in frame.root_nodes.items() if frame.roots[name] not in self._children]
        while stack:
            node = stack.pop()
            nid = node_id(node)
            if nid in self._children:
                continue
            nexts, unseen = [], []
            for child, input_nr in node.next_functions:
                if child is None:
                    continue
                cid = node_id(child)
                nexts.append((cid, input_nr))
                edges.append([nid, cid, input_nr])
                if cid in self._children:
                    boundary.add(cid)
                else:
                    unseen.append(child)
            stack.extend(reversed(unseen))  # first input described first
            self._children[nid] = nexts
            described = self._describe(node, nid, nexts, frame, names_of, reader)
            seq = described["seq"]
            if seq is not None:
                for cid, _ in nexts:
                    first_use[cid] = min(first_use.get(cid, seq), seq)
            added.append(described)
        if self._origins is not None:
            for described in added:
                seq = described["seq"]
                origin = self._origins(first_use.get(described["id"]) if seq is None else seq)
                own = described["origin"]
                # origins are shared between nodes: the operation of this node's own goes on a copy
                described["origin"] = origin if own is None else {
                    **origin, "span": own["span"], "op": own["op"], "text": own["text"]}
        return added, edges, boundary

    def _describe(
        self, node: Any, nid: int, nexts: list, frame: _Frame, names_of: dict, reader: SavedReader
    ) -> dict[str, Any]:
        kind = node_kind(node)
        seq = node._sequence_nr()
        leaf = node.variable if kind == "leaf" else None
        saved, live = reader.entries(node)
        shape = output_shape(node)
        if live is not None:
            self._live_saved[nid] = live
        variable = None
        if leaf is not None:
            self._leaf_tensor[nid] = id(leaf)
            variable = frame.names.get(id(leaf))
        described = {
            "id": nid,
            "name": node_name(node),
            "kind": kind,
            "seq": None if seq == NO_SEQUENCE else seq,
            "variables": names_of.get(nid, []),
            "variable": variable,
            "leaf": frame.summary_of(leaf, variable, self._summarizer) if leaf is not None else None,
            "shape": None if shape is None else reader.shape(shape),
            "saved": saved,
            "next": [list(pair) for pair in nexts],
            "origin": node_origin(node),
        }
        self._nodes[nid] = described
        if seq != NO_SEQUENCE:
            self._by_sequence[seq] = nid
        return described

    def _prune(self, previous_roots: dict[str, int], roots: dict[str, int], boundary: set[int]) -> list[int]:
        """Forget the nodes no longer reachable; returns their ids."""
        current = set(roots.values())
        if all(r in current or r in boundary for r in previous_roots.values()):
            return []  # every old root is still reachable, so everything below it is
        kept = set(reachable(current, lambda nid: (child for child, _ in self._children[nid])))
        removed = [nid for nid in self._children if nid not in kept]
        for nid in removed:
            self._by_sequence.pop(self._nodes[nid]["seq"], None)
            del self._children[nid], self._nodes[nid]
            self._leaf_tensor.pop(nid, None)
            self._live_saved.pop(nid, None)
        return removed

    def _refresh_freed(self, frame: _Frame) -> set[int]:
        """After a backward: mark the saved tensors it released as freed."""
        if not self._live_saved:
            return set()
        freed = set()
        for node in reachable_nodes(list(frame.root_nodes.values())):
            nid = node.metadata.get(METADATA_KEY)
            attr = self._live_saved.get(nid)
            if attr is not None and not still_saved(node, attr):
                del self._live_saved[nid]
                saved = self._nodes[nid]["saved"]
                saved = [freed_entry(e["name"]) if held_tensors(e) else e for e in saved]
                self._nodes[nid] = {**self._nodes[nid], "saved": saved}
                freed.add(nid)
        return freed

    def _named_leaves(self, frame: _Frame) -> dict[int, str]:
        return {nid: frame.tracked[tid] for nid, tid in self._leaf_tensor.items() if tid in frame.leaves}

    def _rename(self, previous_roots: dict[str, int], previous_leaves: dict[int, str]) -> set[int]:
        """Rewrite ``variables`` and ``variable`` of known nodes whose names changed."""
        renamed = set()
        before, after = names_by_node(previous_roots), names_by_node(self._roots)
        for nid in before.keys() | after.keys():
            names = after.get(nid, [])
            if nid in self._nodes and self._nodes[nid]["variables"] != names:
                self._nodes[nid] = {**self._nodes[nid], "variables": names}
                renamed.add(nid)
        for nid in previous_leaves.keys() | self._leaves.keys():
            name = self._leaves.get(nid)
            if nid in self._nodes and self._nodes[nid]["variable"] != name:
                self._nodes[nid] = {**self._nodes[nid], "variable": name}
                renamed.add(nid)
        return renamed

    def _refresh_leaves(self, frame: _Frame) -> set[int]:
        """New summaries for named leaves whose values or ``.grad`` changed."""
        refreshed = set()
        for nid in self._leaves:
            tid = self._leaf_tensor[nid]
            summary = frame.summary_of(frame.leaves[tid], frame.tracked[tid], self._summarizer)
            if summary is not self._nodes[nid]["leaf"]:
                self._nodes[nid] = {**self._nodes[nid], "leaf": summary}
                refreshed.add(nid)
        return refreshed
