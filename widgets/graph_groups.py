"""The boxes that tie graph nodes to the code that made them: one per execution of a line, one per module.

A node's ``origin`` (sent by the engine) says which file and line ran between the two pauses
that saw it appear, which pass of that line it was, and the ``nn.Module`` whose ``forward``
made it. :class:`OriginGroups` keeps, for every (file, line, pass) and every dotted module
prefix (``model`` and ``model.rnn``), an :class:`~widgets.graph_items.OriginBox` framing its
members. Boxes only grow when they get members, so nothing moves as the graph grows. It also
indexes the nodes made while stepping by their operation's source span, for the code view's
hover and the details' "which also made".
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

from PySide6.QtCore import QRectF
from PySide6.QtGui import QFont
from PySide6.QtWidgets import QGraphicsItem, QGraphicsScene

from app.i18n import tr
from widgets.graph_details import unknown_origin, unknown_origin_text
from widgets.graph_items import BOX_HEADER, OriginBox

#: Padding between a box and its members; each level of boxes nested inside adds one more step.
BOX_PAD = 8.0
NEST_STEP_X = 10.0
NEST_STEP_TOP = BOX_HEADER + 6.0


def same_file(origin_file: str | None, path: str | None) -> bool:
    """Whether an origin's file (as the engine names it) is ``path``: the same absolute path, or the same name."""
    if not origin_file or not path:
        return False
    same_path = os.path.abspath(origin_file) == os.path.abspath(path)
    return same_path or os.path.basename(origin_file) == os.path.basename(path)


def origin_keys(origin: Mapping[str, Any] | None) -> list[tuple]:
    """The groups a node with ``origin`` belongs to: its line execution, then its modules outermost first."""
    if not origin:
        return []
    keys: list[tuple] = [("line", origin.get("file"), origin.get("line"), origin.get("pass"), unknown_origin(origin))]
    parts = (origin.get("module") or "").split(".") if origin.get("module") else []
    keys += [("module", *parts[:depth]) for depth in range(1, len(parts) + 1)]
    return keys


def box_label(key: tuple) -> str:
    """What a box says: ``line 72 · pass 2``, ``model.rnn``, or where the exact line is unknown who made the
    nodes (``made by the console at line 12``) or between which pauses (``ran between lines 3 and 9``)."""
    if key[0] == "module":
        return ".".join(key[1:])
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
        self._boxes: dict[tuple, OriginBox] = {}
        self._unknown: dict[tuple, None] = {}  # the keys of boxes whose line is unknown ("ran while continuing")
        self._of: dict[int, list[OriginBox]] = {}
        self._united: dict[tuple, QRectF] = {}  # members' union, before padding
        self._depth: dict[tuple, int] = {}  # levels of boxes nested inside a box
        self._marked: list[OriginBox] = []
        self._modules: dict[tuple, None] = {}  # the module keys, in order
        self._dirty: dict[tuple, OriginBox] = {}  # grown since the last refresh
        self._spans: dict[tuple, set[int]] = {}  # (file, line, col, end_line, end_col) -> nodes, every pass
        self._span_of: dict[int, tuple] = {}

    def relabel(self) -> None:
        """Label every box again, in the current language."""
        for key, box in self._boxes.items():
            box.label = box_label(key)
            box.place_caption()

    def __iter__(self) -> Iterator[OriginBox]:
        return iter(self._boxes.values())

    def module_boxes(self) -> list[OriginBox]:
        """The boxes of modules (few, and the only ones reaching far beyond their members)."""
        return [self._boxes[key] for key in self._modules]

    def add(self, node_id: int, origin: Mapping[str, Any] | None) -> None:
        """Put a drawn node in the boxes its origin names; :meth:`refresh` then grows them around it."""
        if origin and origin.get("span"):
            span_key = (origin.get("file"), *origin["span"])
            self._spans.setdefault(span_key, set()).add(node_id)
            self._span_of[node_id] = span_key
        keys = origin_keys(origin)
        if not keys:
            return
        rect = self._rect_of(node_id)
        deepest = len(keys) - 1
        boxes = []
        for key in keys:
            box = self._boxes.get(key)
            if box is None:
                box = self._boxes[key] = OriginBox(key, key[0], box_label(key), self._font, self._caption_parent)
                if key[0] == "line" and key[2] is None:
                    self._unknown[key] = None
                box.setData(1, key)
                self._scene.addItem(box)
                self._united[key] = QRectF(rect)
                self._depth[key] = 0
                if key[0] == "module":
                    self._modules[key] = None
            else:
                self._united[key] |= rect
            box.members.add(node_id)
            if key[0] == "module":
                self._depth[key] = max(self._depth[key], deepest - (len(key) - 1) + 1)
            self._dirty[key] = box
            boxes.append(box)
        self._of[node_id] = boxes

    def refresh(self) -> None:
        """Frame the boxes that got members since the last call (once each, however many they got)."""
        for box in self._dirty.values():
            if box.key in self._boxes:
                self._frame(box)
        self._dirty.clear()

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
                touched[box.key] = box
        for key, box in touched.items():
            if not box.members:
                self._scene.removeItem(box)
                self._scene.removeItem(box.caption)
                self._unknown.pop(key, None)
                del self._boxes[key], self._united[key], self._depth[key]
                self._modules.pop(key, None)
                self._marked = [b for b in self._marked if b is not box]
                continue
            united = QRectF()
            for member in box.members:
                united |= self._rect_of(member)
            self._united[key] = united
            self._frame(box)

    def boxes_of(self, node_id: int) -> list[OriginBox]:
        """The boxes a node is in, its line execution's first."""
        return self._of.get(node_id, [])

    def collapsed_box(self, node_id: int) -> OriginBox | None:
        """The outermost collapsed box hiding the node, or None when it is shown."""
        boxes = [box for box in self._of.get(node_id, ()) if box.collapsed]
        return max(boxes, key=lambda box: box.rect().width() * box.rect().height(), default=None)

    def set_collapsed(self, box: OriginBox, collapsed: bool) -> set[int]:
        """Collapse or expand a box; returns its members, whose drawing the caller updates."""
        box.collapsed = collapsed
        box.place_caption()
        box.update()
        return set(box.members)

    def line_nodes(self, line: int, file: str | None = None) -> set[int]:
        """The nodes that executions of ``line`` (in ``file``, or any file when None) made."""
        return {member for key, box in self._boxes.items()
                if key[0] == "line" and key[2] == line and (file is None or same_file(key[1], file))
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
        self._marked = [box for key, box in self._boxes.items() if line and key[0] == "line" and key[2] == line
                        and (file is None or same_file(key[1], file))]
        for box in self._marked:
            box.marked = True
            box.update()

    def _frame(self, box: OriginBox) -> None:
        level = self._depth[box.key]
        dx = BOX_PAD + NEST_STEP_X * level
        box.setRect(self._united[box.key].adjusted(-dx, -(BOX_PAD + BOX_HEADER + NEST_STEP_TOP * level), dx, dx))
        box.place_caption()
        # Two boxes around nearly the same nodes (a line's pass, and the leaves that came while continuing)
        # share a header: the later caption goes after the earlier one instead of over it.
        # Only a box whose line is unknown frames the same nodes as another (a graph has a box per pass of
        # a line, and few of those), so each box is compared with those few, and they with every box.
        others = self._boxes.values() if box.key in self._unknown else (self._boxes[k] for k in self._unknown)
        for other in others:
            if other is not box and other.caption.sceneBoundingRect().intersects(box.caption.sceneBoundingRect()):
                taken = other.caption.sceneBoundingRect()
                box.shift_caption(taken.right() + 6 - box.caption.sceneBoundingRect().left())
                break
