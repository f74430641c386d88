"""A backward pass replayed node by node: its entries, where the replay is, whether it plays, and each step in words.

Plain Python (the Backward panel's replay bar shows it and runs its timer): :class:`BackwardReplay`
moves through the engine's replay entries, asks the drill's questions before a backward function
fires (:class:`~app.backward_drill.BackwardDrill`), and marks the node it is at in the
:class:`~app.graph_model.GraphModel` (:meth:`~app.graph_model.GraphModel.set_active`), which the
graph view shows. :func:`position_text` says what the step shown did.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from app.backward_drill import MAX_VALUES, BackwardDrill, DrillQuestion, question_for
from app.events import Event
from app.graph_model import GraphModel
from app.i18n import N_, join_words, tr
from app.result_basis import nodes_text
from app.value_text import value_text

DRILL_TOO_BIG = N_("(the drill does not ask it: more than {n} values in a gradient or saved tensor to work out "
                   "by hand)")


class BackwardReplay:
    """The replay of the backward pass on screen.

    Parameters
    ----------
    graph : GraphModel
        The graph of the step in view: names where gradients go, and shows the node the replay is at.
    drill : BackwardDrill
        The drill asked before each backward function fires, when it is on.

    Events
    ------
    loaded()
        Another pass (or none) is loaded: :attr:`entries`, :attr:`kind`, :attr:`failed`; at the start.
    moved()
        :attr:`position` changed (or was set again).
    playing_changed()
        :attr:`playing` changed.
    asked(question)
        The drill asks a :class:`~app.backward_drill.DrillQuestion` before its node fires.
    question_closed()
        The open question was closed unanswered (the replay moved elsewhere).
    """

    def __init__(self, graph: GraphModel, drill: BackwardDrill) -> None:
        self.graph = graph
        self.drill = drill
        self.entries: list[dict[str, Any]] = []
        self.before: dict[int, dict[str, Any]] = {}
        """The graph's nodes as the pass found them (see :meth:`load`)."""
        """The engine's replay entries, from the root toward the leaves."""
        self.kind = ""
        """The request that made the pass: ``preview``, ``backward``, ``grad`` (empty: none)."""
        self.failed = False
        """The pass stopped at an error after :attr:`entries`."""
        self.position = -1
        """The entry shown: -1 before the first, ``len(entries)`` once finished."""
        self.playing = False
        self._resume = False  # it was playing when the drill asked: it plays on after the answer
        self.loaded = Event()
        self.moved = Event()
        self.playing_changed = Event()
        self.asked = Event()
        self.question_closed = Event()

    def load(self, kind: str, entries: Sequence[dict[str, Any]], failed: bool = False, root: str | None = None,
             before: Mapping[int, dict[str, Any]] | None = None) -> None:
        """Replay another pass from before its first node.

        ``root`` is what it started from (for the drill); ``before`` the graph's nodes as the pass
        found them (its steps name and the drill asks about those, not what the pass left).
        """
        self.before = dict(before or {})
        self.set_playing(False)
        self._resume = False
        self.drill.load(self._questions(entries, root if kind != "grad" else "autograd.grad"))
        self.entries, self.kind, self.failed = list(entries), kind, failed
        self.position = -1
        self.graph.set_active(None)
        self.loaded.emit()

    def step_forward(self) -> None:
        """Show the next node (or the end); with the drill on, a backward function is asked first."""
        if self.drill.asking is not None:  # the step waits for the answer (or a skip)
            self._resume = self._resume or self.playing
            self.set_playing(False)
            return
        question = self.drill.question_at(self.position + 1)
        if question is not None:
            self._resume = self.playing
            self.set_playing(False)
            self.graph.set_active(question.node_id)  # the graph shows which node is asked
            self.asked.emit(question)
            return
        if self.position < len(self.entries):
            self.go_to(self.position + 1)
        if self.position >= len(self.entries):
            self.set_playing(False)

    def node(self, node_id: int) -> dict[str, Any] | None:
        """A node of the pass as the graph had it when the pass began (the live graph's when that is not known)."""
        return self.before.get(node_id) or self.graph.nodes.get(node_id)

    def step_back(self) -> None:
        """Show the previous node (an open drill question closes, unanswered)."""
        self.set_playing(False)
        self._close_question()
        if self.position > -1:
            self.go_to(self.position - 1)

    def restart(self) -> None:
        """Go back to before the first node; a playing replay plays on from there, and the drill asks again."""
        self._close_question()
        self.drill.rearm()
        self.go_to(-1)

    def play(self) -> None:
        """Play from where it is (from the start when it had finished)."""
        if not self.entries:
            return
        if self.drill.asking is not None:  # it plays on once the question is answered or skipped
            self._resume = True
            return
        if self.position >= len(self.entries):
            self.go_to(-1)
        self.set_playing(True)

    def pause(self) -> None:
        """Stop where it is."""
        self._resume = False
        self.set_playing(False)

    def set_playing(self, playing: bool) -> None:
        """Start or stop advancing (the view's timer calls :meth:`step_forward` while it plays)."""
        if playing != self.playing:
            self.playing = playing
            self.playing_changed.emit()

    def go_to(self, position: int) -> None:
        """Show the entry at ``position`` (clamped to -1 … ``len(entries)``) and mark its node in the graph."""
        self.position = max(-1, min(position, len(self.entries)))
        entry = self.entry()
        self.graph.set_active(None if entry is None else int(entry["id"]))
        self.moved.emit()

    def entry(self) -> dict[str, Any] | None:
        """The entry shown (None before the first and at the end)."""
        return self.entries[self.position] if 0 <= self.position < len(self.entries) else None

    def set_drill(self, on: bool) -> None:
        """Turn the drill on or off; off, an open question goes and the graph marks the step shown again."""
        self.drill.enabled = on
        if not on and self.drill.asking is not None:
            self._close_question()
            self.go_to(self.position)

    def fire(self, position: int) -> None:
        """The question at ``position`` was answered or skipped: its node fires, and a replay that played plays on."""
        self.go_to(position)
        if self._resume and self.position < len(self.entries):
            self.set_playing(True)
        self._resume = False

    def _close_question(self) -> None:
        if self.drill.asking is not None:
            self.drill.cancel()
            self._resume = False
            self.question_closed.emit()

    def _questions(self, entries: Sequence[Mapping[str, Any]], root: str | None) -> list[DrillQuestion]:
        """The pass's questions, with the saved tensors the graph knew before the pass (a backward frees them)."""
        questions = []
        for position, entry in enumerate(entries):
            node = self.node(int(entry["id"]))
            targets = [node_label(self, child) for child, _ in node.get("next", [])] if node else []
            question = question_for(entry, position, node, targets, root)
            if question is not None:
                questions.append(question)
        return questions


def node_label(replay: BackwardReplay, node_id: int) -> str:
    """A node as a step names it: a leaf by its variable, a function by its name and the variables it made."""
    node = replay.node(node_id) or {}
    if node.get("kind") == "leaf":
        return replay.graph.leaves.get(node_id) or node.get("variable") or tr("a leaf")
    names = node.get("variables") or []
    name = node.get("name") or tr("a node")
    return f"{name} ({', '.join(names)})" if names else name


# ---- the step in words ------------------------------------------------------------------------


def position_text(replay: BackwardReplay) -> str:
    """What the replay shows where it is: the pass counted, a step, or how it ended."""
    count = len(replay.entries)
    if replay.position < 0:
        if replay.failed:
            text = N_("{nodes} ran before the error: press play or step forward.")
        elif _handed_back(replay):
            text = N_("{nodes} in this pass, from the root toward the leaves; the AccumulateGrad nodes hand "
                      "their gradients back instead of adding them to .grad: press play or step forward.")
        else:
            text = N_("{nodes} ran in this pass, from the root toward the leaves: press play or step forward.")
        return tr(text, nodes=_counted(replay)) if count else ""
    if replay.position >= count:
        return _ending(replay)
    text = _describe(replay, replay.entries[replay.position])
    question = replay.drill.questions.get(replay.position)
    if replay.drill.enabled and question is not None and question.too_big:
        text += " " + tr(DRILL_TOO_BIG, n=MAX_VALUES)
    return text


def _counted(replay: BackwardReplay) -> str:
    """The pass's nodes, as what they are: ``5 nodes (3 backward functions, 2 AccumulateGrad)``."""
    leaves = sum(1 for e in replay.entries if e.get("kind") == "leaf")
    functions = len(replay.entries) - leaves
    parts = [tr("1 backward function") if functions == 1 else tr("{n} backward functions", n=functions)] \
        if functions else []
    parts += [f"{leaves} AccumulateGrad"] if leaves else []
    return tr("{nodes} ({parts})", nodes=nodes_text(len(replay.entries)), parts=tr(", ").join(parts))


def _handed_back(replay: BackwardReplay) -> bool:
    """Whether the pass returned the leaves' gradients instead of adding them to .grad."""
    return any(e.get("kind") == "leaf" and e.get("stored") is False for e in replay.entries)


def _ending(replay: BackwardReplay) -> str:
    counted = _counted(replay)
    if replay.failed:
        return tr("Stopped after {nodes}: the next node failed (see the error above).", nodes=counted)
    if replay.kind == "backward":
        return tr("Done: {nodes} ran and every reachable leaf's .grad is filled in.", nodes=counted)
    if _handed_back(replay):
        return tr("Done: {nodes}; the gradients were handed back and no .grad was changed.", nodes=counted)
    return tr("Done: {nodes} ran; no .grad was changed.", nodes=counted)


def _describe(replay: BackwardReplay, entry: Mapping[str, Any]) -> str:
    head = f"{replay.position + 1}/{len(replay.entries)} {entry.get('name', '?')}"
    if entry.get("kind") == "leaf":
        return _describe_leaf(replay, entry, head)
    incoming = [value_text(g) for g in entry.get("grads_in", []) if g is not None]
    if replay.position == 0:
        received = tr("starts from the gradient {grads}", grads=join_words(incoming)) if incoming \
            else tr("starts the pass")
    elif len(incoming) > 1:
        received = tr("receives grads {grads} from its outputs", grads=join_words(incoming))
    else:
        received = tr("receives grad {grad} from its output", grad=incoming[0] if incoming else "None")
    return tr("{head}: {received}, {sends}", head=head, received=received, sends=_sends(replay, entry))


def _describe_leaf(replay: BackwardReplay, entry: Mapping[str, Any], head: str) -> str:
    variable = entry.get("variable") or replay.graph.leaves.get(entry["id"]) or tr("the leaf")
    grad = entry.get("grad")
    received = [value_text(g) for g in entry.get("grads_in", []) if g is not None]
    received = join_words(received) if received else tr("no gradient")
    if entry.get("stored") is False:
        return tr("{head}: receives {grads}; backward() would add it to {variable}.grad, this pass hands it "
                  "back and {variable}.grad stays as it was", head=head, grads=received, variable=variable)
    if grad is None:
        return tr("{head}: receives {grads} for {variable}.grad", head=head, grads=received, variable=variable)
    return tr("{head}: {variable}.grad becomes {value}", head=head, variable=variable, value=value_text(grad))


def _sends(replay: BackwardReplay, entry: Mapping[str, Any]) -> str:
    """Where a node's gradients go, named from the graph when it is known."""
    grads = [g for g in entry.get("grads_out", []) if g is not None]
    if not grads:
        return tr("sends nothing on")
    node = replay.node(entry["id"])
    targets = [node_label(replay, child) for child, _ in node.get("next", [])] if node else []
    if len(targets) != len(grads):  # a gradient that is None for a real input: the pairing is lost
        return tr("sends {grads} on toward the leaves", grads=join_words([value_text(g) for g in grads]))
    return tr("sends {grads}", grads=join_words([tr("{grad} to {target}", grad=value_text(g), target=t)
                                                 for g, t in zip(grads, targets, strict=True)]))
