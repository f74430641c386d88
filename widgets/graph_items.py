"""The pieces the autograd graph is drawn with: the palette, pens, a drawn node's items and the edge chunks."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QFont, QFontMetricsF, QPainter, QPainterPath, QPen
from PySide6.QtWidgets import (
    QGraphicsPathItem,
    QGraphicsRectItem,
    QGraphicsSimpleTextItem,
    QStyleOptionGraphicsItem,
    QWidget,
)

#: Below this zoom factor edge labels are not drawn (level of detail).
EDGE_LABEL_MIN_SCALE = 0.65

#: Fill and outline of each kind of node; ``root`` is an operation a variable points to.
PALETTE = {
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
}


def make_pen(color: str, width: float = 1.0, cosmetic: bool = False, style: Qt.PenStyle = Qt.SolidLine) -> QPen:
    """A pen of ``color``; a cosmetic one keeps its width in pixels at any zoom."""
    pen = QPen(QColor(color), width, style)
    pen.setCosmetic(cosmetic)
    return pen


@dataclass(eq=False)
class DrawnNode:
    """The items drawing one node; ``node`` is the latest dict the engine sent for it."""

    node: dict[str, Any]
    box: QGraphicsRectItem | QGraphicsPathItem
    width: float
    height: float
    shape: str
    texts: list[QGraphicsSimpleTextItem] = field(default_factory=list)
    tag: QGraphicsPathItem | None = None


class EdgeChunk(QGraphicsPathItem):
    """Edges added together: one path for their lines and arrowheads, plus their shape labels.

    Labels are painted only when the view is zoomed in far enough to read them.
    """

    def __init__(self, edges: list[tuple[int, int]], pen: QPen) -> None:
        super().__init__()
        self.edges = edges
        self.labels: list[tuple[QPointF, str]] = []
        self.font = QFont()
        self._widths: dict[str, float] = {}
        self._bounds = QRectF()
        self.setPen(pen)

    def set_geometry(self, path: QPainterPath, labels: list[tuple[QPointF, str]], font: QFont) -> None:
        """Replace the drawn path and the ``(position, text)`` labels."""
        self.prepareGeometryChange()
        self.labels, self.font = labels, font
        self.setPath(path)
        bounds = path.boundingRect()
        metrics = QFontMetricsF(font)
        self._widths = {text: metrics.horizontalAdvance(text) for text in {text for _, text in labels}}
        if labels:
            widest = max(self._widths.values())
            xs = [point.x() for point, _ in labels]
            ys = [point.y() for point, _ in labels]
            bounds = bounds.united(QRectF(min(xs), min(ys) - metrics.ascent(),
                                          max(xs) - min(xs) + widest, max(ys) - min(ys) + metrics.height()))
        self._bounds = bounds.adjusted(-4, -4, 4, 4)

    def boundingRect(self) -> QRectF:
        return self._bounds

    def paint(self, painter: QPainter, option: QStyleOptionGraphicsItem, widget: QWidget | None = None) -> None:
        super().paint(painter, option, widget)
        if not self.labels or option.levelOfDetailFromTransform(painter.worldTransform()) < EDGE_LABEL_MIN_SCALE:
            return
        painter.setFont(self.font)
        painter.setPen(QColor(PALETTE["edge_label"]))
        metrics = QFontMetricsF(self.font)
        ascent, height = metrics.ascent(), metrics.height()
        backdrop = QColor(255, 255, 255, 210)  # keeps a label readable where lines cross it
        for point, text in self.labels:
            painter.fillRect(QRectF(point.x() - 1, point.y() - ascent, self._widths[text] + 2, height), backdrop)
            painter.drawText(point, text)
