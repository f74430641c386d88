"""What the autograd graph is drawn with: its geometry, palette and pens, a drawn node's items, edge chunks and
origin boxes."""

from __future__ import annotations

from dataclasses import dataclass, field

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QFont, QFontMetricsF, QPainter, QPainterPath, QPen
from PySide6.QtWidgets import (
    QGraphicsItem,
    QGraphicsPathItem,
    QGraphicsRectItem,
    QGraphicsSimpleTextItem,
    QStyleOptionGraphicsItem,
    QWidget,
)

from app.i18n import tr

#: Scene units between the centres of neighbouring columns and ranks.
COLUMN_PITCH = 210.0
RANK_PITCH = 72.0
#: Box sizes; the widest box leaves a gutter of at least 30 units for lanes.
NODE_HEIGHT = 26.0
LEAF_HEIGHT = 38.0
MIN_NODE_WIDTH = 96.0
MAX_NODE_WIDTH = 180.0
#: Node text is this many scene units tall (so the screen, PNG and SVG agree on text sizes).
FONT_PIXELS = 12
#: Below this zoom factor edge labels are not drawn (level of detail).
EDGE_LABEL_MIN_SCALE = 0.65

#: Fill and outline of each kind of node (``root`` is an operation a variable points to), and the colours of
#: the graph's text (``text``, ``caption``) and of what keeps it readable where lines cross (``backdrop``, ``paper``).
NORMAL_PALETTE = {
    "op": ("#eef0f4", "#6b7280"),
    "root": ("#dcf2d4", "#4d7c3a"),
    "leaf": ("#d6e6fb", "#3b6fb6"),
    "custom": ("#fde3c8", "#c25e00"),
    "edge": "#8a909c",
    "lane": "#6f95c9",
    "edge_label": "#5b6472",
    "tag": ("#fff3c4", "#c9a227"),
    "new": "#ffc94d",  # the variables view's CHANGE_AMBER: changed at this pause
    "highlight": "#7c3aed",
    "selected": "#111827",
    "active": ("#fca5a5", "#dc2626"),
    "removed": "#c0c4cc",
    "freed": ("#eceef1", "#8b93a1"),  # a backward released the node's saved tensors: it cannot run again
    "freed_text": "#6b717c",
    "origin": "#0e7490",  # made by the code line under the mouse
    "text": "#000000",
    "caption": "#334155",
    "backdrop": "#d2ffffff",
    "paper": "#ffffff",
    "line_box": ("#f3f6fb", "#9aa9c2"),
    "module_box": ("#f1f8ee", "#8fb58a"),
}
#: View > High Contrast: black boxes outlined in colours that read at 7:1 or more on black, white text.
HIGH_CONTRAST_PALETTE = {
    "op": ("#000000", "#ffffff"),
    "root": ("#000000", "#00ff00"),
    "leaf": ("#000000", "#00ffff"),
    "custom": ("#000000", "#ffa64d"),
    "edge": "#ffffff",
    "lane": "#80d8ff",
    "edge_label": "#ffffff",
    "tag": ("#000000", "#ffff00"),
    "new": "#ffa64d",
    "highlight": "#ff80ff",
    "selected": "#ffff00",
    "active": ("#4d0000", "#ff6666"),
    "removed": "#808080",
    "freed": ("#000000", "#c8c8c8"),
    "freed_text": "#ffffff",
    "origin": "#00ffff",
    "text": "#ffffff",
    "caption": "#ffffff",
    "backdrop": "#d2000000",
    "paper": "#000000",
    "line_box": ("#000000", "#c8c8c8"),
    "module_box": ("#000000", "#c8c8c8"),
}
#: The palette in use (:func:`use_high_contrast` switches it in place, so every reader sees the theme's).
PALETTE = dict(NORMAL_PALETTE)


def use_high_contrast(on: bool) -> None:
    """Draw the graph in the high-contrast palette, or the normal one."""
    PALETTE.update(HIGH_CONTRAST_PALETTE if on else NORMAL_PALETTE)


def make_pen(color: str, width: float = 1.0, cosmetic: bool = False, style: Qt.PenStyle = Qt.SolidLine) -> QPen:
    """A pen of ``color``; a cosmetic one keeps its width in pixels at any zoom."""
    pen = QPen(QColor(color), width, style)
    pen.setCosmetic(cosmetic)
    return pen


@dataclass(eq=False)
class DrawnNode:
    """The items drawing one node (its data is the graph model's); ``names`` are the variables its tag shows."""

    node_id: int
    box: QGraphicsRectItem | QGraphicsPathItem
    width: float
    height: float
    shape: str
    texts: list[QGraphicsSimpleTextItem] = field(default_factory=list)
    tag: QGraphicsPathItem | None = None
    freed_mark: QGraphicsPathItem | None = None
    names: list[str] = field(default_factory=list)

    def items(self) -> list[QGraphicsItem]:
        """Every item drawing the node: its box, texts, tag and freed mark."""
        return [self.box, *self.texts] + [item for item in (self.tag, self.freed_mark) if item is not None]


class EdgeChunk(QGraphicsRectItem):
    """Edges added together: one path for their lines and arrowheads, plus their shape labels.

    Labels are painted only when the view is zoomed in far enough to read them. The item's
    rectangle is the bounds of lines and labels, so that the scene index reads them in C++:
    it asks every chunk near a query for them, and a Python ``boundingRect`` made that slow.
    """

    def __init__(self, edges: list[tuple[int, int]], pen: QPen) -> None:
        super().__init__()
        self.edges = edges
        self.labels: list[tuple[QPointF, str]] = []
        self.font = QFont()
        self._widths: dict[str, float] = {}
        self._path = QPainterPath()
        self._line_pen = pen
        self.setPen(Qt.NoPen)

    def set_pen(self, pen: QPen) -> None:
        """Draw the lines with ``pen``."""
        self._line_pen = pen
        self.update()

    def path(self) -> QPainterPath:
        """The lines and arrowheads drawn."""
        return self._path

    def set_geometry(self, path: QPainterPath, labels: list[tuple[QPointF, str]], font: QFont) -> None:
        """Replace the drawn path and the ``(position, text)`` labels."""
        self.labels, self.font, self._path = labels, font, path
        bounds = path.boundingRect()
        metrics = QFontMetricsF(font)
        self._widths = {text: metrics.horizontalAdvance(text) for text in {text for _, text in labels}}
        if labels:
            widest = max(self._widths.values())
            xs = [point.x() for point, _ in labels]
            ys = [point.y() for point, _ in labels]
            bounds = bounds.united(QRectF(min(xs), min(ys) - metrics.ascent(),
                                          max(xs) - min(xs) + widest, max(ys) - min(ys) + metrics.height()))
        self.setRect(bounds.adjusted(-4, -4, 4, 4))

    def paint(self, painter: QPainter, option: QStyleOptionGraphicsItem, widget: QWidget | None = None) -> None:
        painter.setPen(self._line_pen)
        painter.setBrush(Qt.NoBrush)
        painter.drawPath(self._path)
        if not self.labels or option.levelOfDetailFromTransform(painter.worldTransform()) < EDGE_LABEL_MIN_SCALE:
            return
        painter.setFont(self.font)
        painter.setPen(QColor(PALETTE["edge_label"]))
        metrics = QFontMetricsF(self.font)
        ascent, height = metrics.ascent(), metrics.height()
        backdrop = QColor(PALETTE["backdrop"])  # keeps a label readable where lines cross it
        for point, text in self.labels:
            painter.fillRect(QRectF(point.x() - 1, point.y() - ascent, self._widths[text] + 2, height), backdrop)
            painter.drawText(point, text)


#: Height of a box's header strip (its label and its collapse toggle), in scene units.
BOX_HEADER = 16.0


class OriginBox(QGraphicsRectItem):
    """A light rounded box around the nodes one execution of a line (or one module) made.

    Its header strip holds a collapse toggle and the label; collapsed, it is filled and says
    how many nodes it hides. The label is a caption item under ``caption_parent`` (the
    graph's text layer, above the edges and hidden with the rest of the text when zoomed out).
    Only ``paint`` is Python: the scene index asks every box for its bounds at each query,
    and a Python ``boundingRect`` made that the slowest part of a repaint.
    """

    def __init__(self, key: tuple, kind: str, label: str, font: QFont, caption_parent: QGraphicsItem) -> None:
        super().__init__()
        self.key, self.kind, self.label = key, kind, label
        self.members: set[int] = set()
        self.collapsed = False
        self.marked = False
        self.setZValue(-1.0 if kind == "line" else -2.0 + 0.01 * len(key))
        self.caption = QGraphicsRectItem(caption_parent)
        self.caption.setPen(Qt.NoPen)
        self._caption_text = QGraphicsSimpleTextItem(label, self.caption)
        self._caption_text.setFont(font)
        self.restyle()

    def restyle(self) -> None:
        """Take the colours of the graph's palette in use (View > High Contrast)."""
        self.setPen(make_pen(PALETTE[f"{self.kind}_box"][1], 2.5, cosmetic=True))  # bounds: room for the marked outline
        self.caption.setBrush(QColor(PALETTE["backdrop"]))  # readable where edges cross it
        self._caption_text.setBrush(QColor(PALETTE["caption"]))
        self.update()

    def place_caption(self) -> None:
        """Put the label (with the hidden count when collapsed) in the header, after the toggle.

        A label wider than the box ends in "…" inside it (it ran out past the box's edge, over the
        next box); the whole label is the caption's tooltip.
        """
        rect = self.rect()
        title = self.title()
        room = max(rect.width() - BOX_HEADER - 8, 0)
        shown = QFontMetricsF(self._caption_text.font()).elidedText(title, Qt.TextElideMode.ElideRight, room)
        self._caption_text.setText(shown)
        self.caption.setToolTip(title if shown != title else "")
        text = self._caption_text.boundingRect()
        left, top = rect.left() + BOX_HEADER + 2, rect.top() + (BOX_HEADER - text.height()) / 2
        self.caption.setRect(left, top, min(text.width() + 4, max(rect.width() - BOX_HEADER - 4, 0)), text.height())
        self._caption_text.setPos(left + 2, top)

    def title(self) -> str:
        """The label, with the number of nodes it hides when collapsed."""
        if not self.collapsed:
            return self.label
        count = len(self.members)
        if count == 1:
            return tr("{label} · 1 node", label=self.label)
        return tr("{label} · {n} nodes", label=self.label, n=count)

    def header(self) -> QRectF:
        """The strip along the top that a click selects the box by."""
        rect = self.rect()
        return QRectF(rect.left(), rect.top(), rect.width(), BOX_HEADER)

    def toggle_rect(self) -> QRectF:
        """The collapse toggle's square at the left of the header."""
        rect = self.rect()
        return QRectF(rect.left() + 4, rect.top() + 3, BOX_HEADER - 6, BOX_HEADER - 6)

    def paint(self, painter: QPainter, option: QStyleOptionGraphicsItem, widget: QWidget | None = None) -> None:
        rect = self.rect()
        fill, outline = PALETTE[f"{self.kind}_box"]
        lod = option.levelOfDetailFromTransform(painter.worldTransform())
        painter.setPen(make_pen(PALETTE["origin"] if self.marked else outline, 2.5 if self.marked else 1.0,
                                cosmetic=True))
        painter.setBrush(QColor(fill).darker(112) if self.collapsed else QColor(fill))
        if lod < 0.1:
            painter.drawRect(rect)
            return
        painter.drawRoundedRect(rect, 8, 8)
        if lod < 0.4:
            return
        toggle = self.toggle_rect()
        painter.setBrush(QColor(PALETTE["paper"]))
        painter.drawRect(toggle)
        middle = toggle.center()
        painter.drawLine(QPointF(toggle.left() + 2, middle.y()), QPointF(toggle.right() - 2, middle.y()))
        if self.collapsed:
            painter.drawLine(QPointF(middle.x(), toggle.top() + 2), QPointF(middle.x(), toggle.bottom() - 2))
