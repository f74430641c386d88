"""The boxes that tie graph nodes to the code that made them: one per execution of a line, one per module in it.

A node's ``origin`` (sent by the engine) says which file and line ran between the two pauses
that saw it appear, which pass of that line it was, and the ``nn.Module`` whose ``forward``
made it. :func:`origin_keys` turns that into the node's group path: its line execution
(``line 72 · pass 2``), then each dotted module prefix (``model``, ``model.rnn``) *within that
execution*, so a module box nests inside the box of the line that called it and a box of one
pass never reaches into another's. The layout (:class:`app.graph_layout.LayeredLayout`) gives
every run of nodes of one path ranks of their own and names each node's boxes;
:class:`OriginGroups` draws an :class:`~widgets.graph_items.OriginBox` around each, a nested box
framed inside its parent. So a box holds exactly its own nodes, and it only intersects the boxes
it is nested in or that are nested in it. Boxes only grow when they get members, so nothing moves
as the graph grows. It also indexes the nodes made while stepping by their operation's source
span, for the code view's hover and the details' "which also made".
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping
from typing import Any

from PySide6.QtCore import QRectF
from PySide6.QtGui import QFont
from PySide6.QtWidgets import QGraphicsItem, QGraphicsScene

from app.i18n import tr
from widgets.graph_details import unknown_origin, unknown_origin_text
from widgets.graph_items import BOX_HEADER, OriginBox

#: Padding between a box and what it holds (its members and the boxes nested in it); the header adds to the top.
BOX_PAD = 8.0
#: Room kept between the boxes of two blocks, one above the other.
BOX_GAP = 4.0


def same_file(origin_file: str | None, path: str | None) -> bool:
    """Whether an origin's file (as the engine names it) is ``path``: the same absolute path, or the same name."""
    if not origin_file or not path:
        return False
    same_path = os.path.abspath(origin_file) == os.path.abspath(path)
    return same_path or os.path.basename(origin_file) == os.path.basename(path)


def origin_keys(origin: Mapping[str, Any] | None) -> tuple[tuple, ...]:
    """The group path of a node with ``origin``: its line execution, then its modules in it, outermost first."""
    if not origin:
        return ()
    line = ("line", origin.get("file"), origin.get("line"), origin.get("pass"), unknown_origin(origin))
    parts = (origin.get("module") or "").split(".") if origin.get("module") else []
    return (line, *(("module", line, *parts[:depth]) for depth in range(1, len(parts) + 1)))


def block_spacing(node_half: float, leaf_half: float, rank_pitch: float) -> Callable[[int, int, bool, bool], int]:
    """The layout's spacing between blocks: enough empty ranks that the boxes closing above and the
    boxes opening below (each a pad, and a header for those opening) do not meet."""

    def spacing(closes: int, opens: int, leaves_above: bool, leaves_below: bool) -> int:
        above = (leaf_half if leaves_above else node_half) + BOX_PAD * closes
        below = (leaf_half if leaves_below else node_half) + (BOX_PAD + BOX_HEADER) * opens
        return max(0, math.ceil((above + below + BOX_GAP) / rank_pitch) - 1)

    return spacing


def box_label(key: tuple) -> str:
    """What a box says: ``line 72 · pass 2``, ``model.rnn``, or where the exact line is unknown who made the
    nodes (``made by the console at line 12``) or between which pauses (``ran between lines 3 and 9``)."""
    if key[0] == "module":
        return ".".join(key[2:])
    _, _, line, run, unknown = key
    if line is None:
        return unknown_origin_text(unknown)
    return tr("line {line}", line=line) if run is None else tr("line {line} · pass {n}", line=line, n=run)


class OriginGroups:
    """The origin boxes of a drawn graph, kept up to date as nodes come and go.

    Parameters
    ----------
    scene : QGraphicsScene
        Where the boxes are drawn.
    font : QFont
        The labels' font.
    rect_of : callable
        A drawn node's scene rectangle, by id.
    caption_parent : QGraphicsItem
        The item the labels go under (the graph's text layer).
    """

    def __init__(self, scene: QGraphicsScene, font: QFont, rect_of: Callable[[int], QRectF],
                 caption_parent: QGraphicsItem) -> None:
        self._scene, self._font, self._rect_of, self._caption_parent = scene, font, rect_of, caption_parent
        self._boxes: dict[tuple, OriginBox] = {}  # (first block, key) -> box
        self._united: dict[tuple, QRectF] = {}  # the union of a box's members' rectangles
        self._level: dict[tuple, int] = {}  # 0 for a line execution's box, one more per module nested in it
        self._parent: dict[tuple, tuple | None] = {}
        self._children: dict[tuple, set[tuple]] = {}
        self._of: dict[int, list[OriginBox]] = {}
        self._marked: list[OriginBox] = []
        self._dirty: dict[tuple, OriginBox] = {}  # grown since the last refresh
        self._outer = QRectF()  # the union of the outermost boxes
        self._collapsed_modules: set[str] = set()  # modules the learner collapsed: their new boxes come collapsed
        self.collapsed_count = 0
        """Boxes collapsed now: while none, edges skip the look-up of hidden ends."""
        self._spans: dict[tuple, set[int]] = {}  # (file, line, col, end_line, end_col) -> nodes, every pass
        self._span_of: dict[int, tuple] = {}

    def relabel(self) -> None:
        """Label every box again, in the current language."""
        for box in self._boxes.values():
            box.label = box_label(box.key)
            box.place_caption()

    def __iter__(self) -> Iterator[OriginBox]:
        return iter(self._boxes.values())

    def outer_rect(self) -> QRectF:
        """The scene rectangle that holds every box."""
        return QRectF(self._outer)

    def add(self, node_id: int, origin: Mapping[str, Any] | None, boxes: list[tuple[int, Hashable]]) -> None:
        """Put a drawn node in its boxes, ``(first block, key)`` outermost first as the layout names them;
        :meth:`refresh` then grows them around it."""
        if origin and origin.get("span"):
            span_key = (origin.get("file"), *origin["span"])
            self._spans.setdefault(span_key, set()).add(node_id)
            self._span_of[node_id] = span_key
        if not boxes:
            return
        rect = self._rect_of(node_id)
        chain, parent = [], None
        for level, box_id in enumerate(boxes):
            box = self._boxes.get(box_id)
            if box is None:
                key = box_id[1]
                box = self._boxes[box_id] = OriginBox(key, key[0], box_label(key), self._font, self._caption_parent)
                box.setData(1, box_id)
                if key[0] == "module" and box.label in self._collapsed_modules:  # the module's next call, as it was
                    box.collapsed = True
                    self.collapsed_count += 1
                self._scene.addItem(box)
                self._united[box_id] = QRectF(rect)
                self._level[box_id], self._parent[box_id], self._children[box_id] = level, parent, set()
                if parent is not None:
                    self._children[parent].add(box_id)
            else:
                self._united[box_id] |= rect
            box.members.add(node_id)
            self._dirty[box_id] = box
            chain.append(box)
            parent = box_id
        self._of[node_id] = chain

    def resized(self, node_id: int) -> None:
        """Grow the node's boxes around it again (a leaf that got its name is wider)."""
        rect = self._rect_of(node_id)
        for box in self._of.get(node_id, ()):
            box_id = box.data(1)
            self._united[box_id] |= rect
            self._dirty[box_id] = box
        self.refresh()

    def refresh(self) -> None:
        """Frame the boxes that got members since the last call (once each, however many they got), nested
        boxes before the boxes they are in."""
        pending, self._dirty = self._dirty, {}
        while pending:
            deepest = max(self._level[box_id] for box_id in pending)
            for box_id in [b for b in pending if self._level[b] == deepest]:
                del pending[box_id]
                if box_id in self._boxes:
                    self._frame(box_id)
                    parent = self._parent[box_id]
                    if parent is not None and parent in self._boxes:
                        pending[parent] = self._boxes[parent]

    def remove(self, ids: Iterable[int]) -> None:
        """Take nodes out of their boxes (call before their items go); empty boxes go too."""
        touched: dict[tuple, OriginBox] = {}
        for node_id in ids:
            span_key = self._span_of.pop(node_id, None)
            if span_key is not None:
                self._spans[span_key].discard(node_id)
                if not self._spans[span_key]:
                    del self._spans[span_key]
            for box in self._of.pop(node_id, ()):
                box.members.discard(node_id)
                touched[box.data(1)] = box
        for box_id, box in touched.items():
            if not box.members:
                self.collapsed_count -= box.collapsed
                self._scene.removeItem(box)
                self._scene.removeItem(box.caption)
                parent = self._parent.pop(box_id)
                if parent is not None and parent in self._children:
                    self._children[parent].discard(box_id)
                del self._boxes[box_id], self._united[box_id], self._level[box_id], self._children[box_id]
                self._marked = [b for b in self._marked if b is not box]
                continue
            united = QRectF()
            for member in box.members:
                united |= self._rect_of(member)
            self._united[box_id] = united
            self._dirty[box_id] = box
        self.refresh()
        self._outer = QRectF()
        for box_id, box in self._boxes.items():
            if self._level[box_id] == 0:
                self._outer |= box.rect()

    def collapsed_box(self, node_id: int) -> OriginBox | None:
        """The outermost collapsed box hiding the node, or None when it is shown."""
        boxes = [box for box in self._of.get(node_id, ()) if box.collapsed]
        return max(boxes, key=lambda box: box.rect().width() * box.rect().height(), default=None)

    def set_collapsed(self, box: OriginBox, collapsed: bool) -> set[int]:
        """Collapse or expand a box; returns its members, whose drawing the caller updates.

        A module's boxes of later calls come collapsed while the learner keeps one of its boxes collapsed.
        """
        if box.collapsed != collapsed:
            self.collapsed_count += 1 if collapsed else -1
        box.collapsed = collapsed
        if box.kind == "module":
            (self._collapsed_modules.add if collapsed else self._collapsed_modules.discard)(box.label)
        box.place_caption()
        box.update()
        return set(box.members)

    def line_nodes(self, line: int, file: str | None = None) -> set[int]:
        """The nodes that executions of ``line`` (in ``file``, or any file when None) made."""
        return {member for box in self._boxes.values()
                if box.key[0] == "line" and box.key[2] == line and (file is None or same_file(box.key[1], file))
                for member in box.members}

    def span_nodes(self, line: int, column: int, file: str | None = None) -> set[int]:
        """The nodes the innermost operation whose span holds ``(line, column)`` made, in every pass.

        ``column`` counts UTF-8 bytes from 0, as spans do; a span's end is exclusive. Empty when
        no operation's span holds the position (or in ``file``, when given).
        """
        around = [key for key in self._spans if (key[1], key[2]) <= (line, column) < (key[3], key[4])
                  and (file is None or same_file(key[0], file))]
        if not around:
            return set()
        innermost = min(around, key=lambda key: (key[3] - key[1], key[4] - key[2] if key[1] == key[3] else key[4]))
        return set(self._spans[innermost])

    def span_members(self, node_id: int) -> set[int]:
        """The nodes with the same operation span as ``node_id`` (itself included, every pass); empty without one."""
        span_key = self._span_of.get(node_id)
        return set(self._spans[span_key]) if span_key is not None else set()

    def mark_line(self, line: int | None, file: str | None = None) -> None:
        """Outline the boxes of ``line``'s executions; None clears the mark."""
        for box in self._marked:
            box.marked = False
            box.update()
        self._marked = [box for box in self._boxes.values() if line and box.key[0] == "line"
                        and box.key[2] == line and (file is None or same_file(box.key[1], file))]
        for box in self._marked:
            box.marked = True
            box.update()

    def _frame(self, box_id: tuple) -> None:
        """Frame a box around its members and the boxes nested in it (framed before it)."""
        box = self._boxes[box_id]
        rect = QRectF(self._united[box_id])
        for child in self._children[box_id]:
            rect |= self._boxes[child].rect()
        box.setRect(rect.adjusted(-BOX_PAD, -(BOX_PAD + BOX_HEADER), BOX_PAD, BOX_PAD))
        box.place_caption()
        if self._level[box_id] == 0:
            self._outer |= box.rect()
