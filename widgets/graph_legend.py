"""The graph's legend: what a node's colour and an edge's colour mean, drawn as the graph draws them."""

from __future__ import annotations

from PySide6.QtCore import QPointF, QRectF, QSize, Qt
from PySide6.QtGui import QBrush, QColor, QFontMetricsF, QPainter, QPaintEvent
from PySide6.QtWidgets import QSizePolicy, QWidget

from app.i18n import N_, tr
from widgets.graph_items import PALETTE, make_pen

#: ``(swatch, text)``: a node kind or state drawn as a small box, or ``edge`` / ``lane`` drawn as a line.
ENTRIES = (
    ("leaf", N_("leaf")),
    ("op", N_("operation")),
    ("root", N_("a variable's grad_fn")),
    ("custom", N_("custom Function")),
    ("new", N_("new this step")),
    ("freed", N_("saved tensors freed")),
    ("removed", N_("left the graph")),
    ("edge", N_("to an input")),
    ("lane", N_("a shared lane to an input")),
)
#: A swatch's width, the space between entries and between rows, in pixels.
SWATCH = 20.0
GAP = 12.0
ROW_PADDING = 4.0
#: Fill and outline of the swatches that are a state, not a kind: new is outlined amber, a node whose saved
#: tensors a backward freed is grey and dashed, a node that left the graph fades grey.
def _swatch_colours() -> dict[str, tuple[str, str]]:
    return {"new": (PALETTE["op"][0], PALETTE["new"]), "freed": PALETTE["freed"],
            "removed": (QColor(PALETTE["removed"]).lighter(120).name(), PALETTE["removed"])}


class GraphLegend(QWidget):
    """One or more rows of swatches and their meaning, wrapped to the width it is given, in the current language.

    Parameters
    ----------
    parent : QWidget, optional
    """

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("graph_legend")
        policy = QSizePolicy(QSizePolicy.Preferred, QSizePolicy.Fixed)
        policy.setHeightForWidth(True)
        self.setSizePolicy(policy)
        font = self.font()
        font.setPointSizeF(font.pointSizeF() * 0.85)
        self.setFont(font)
        self.retranslate()

    def texts(self) -> list[str]:
        """The legend's texts as shown, in order."""
        return [tr(text) for _, text in ENTRIES]

    def retranslate(self) -> None:
        """Show the texts in the current language."""
        self.setToolTip("\n".join(self.texts()))
        self.updateGeometry()
        self.update()

    def _places(self, width: float) -> list[tuple[str, str, QPointF]]:
        """Where each entry's swatch starts, rows wrapped at ``width``."""
        metrics = QFontMetricsF(self.font())
        row_height = metrics.height() + ROW_PADDING
        x, y, places = GAP / 2, ROW_PADDING / 2, []
        for (swatch, _), text in zip(ENTRIES, self.texts(), strict=True):
            needed = SWATCH + 4 + metrics.horizontalAdvance(text)
            if x > GAP / 2 and x + needed > width:
                x, y = GAP / 2, y + row_height
            places.append((swatch, text, QPointF(x, y)))
            x += needed + GAP
        return places

    def heightForWidth(self, width: int) -> int:  # noqa: N802 - Qt override
        places = self._places(width)
        return int(places[-1][2].y() + QFontMetricsF(self.font()).height() + ROW_PADDING)

    def hasHeightForWidth(self) -> bool:  # noqa: N802 - Qt override
        return True

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt override
        return QSize(400, self.heightForWidth(400))

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802 - Qt override
        painter = QPainter(self)
        painter.setRenderHint(QPainter.Antialiasing)
        metrics = QFontMetricsF(self.font())
        height = metrics.height()
        swatches = _swatch_colours()
        for swatch, text, place in self._places(self.width()):
            box = QRectF(place.x(), place.y() + height / 2 - 6, SWATCH, 12)
            if swatch in ("edge", "lane"):
                painter.setPen(make_pen(PALETTE[swatch], 1.2 if swatch == "edge" else 2.0))
                middle = box.center().y()
                painter.drawLine(QPointF(box.left(), middle), QPointF(box.right(), middle))
                if swatch == "edge":  # the arrowhead, as on the graph's edges
                    painter.drawLine(QPointF(box.right() - 5, middle - 3), QPointF(box.right(), middle))
                    painter.drawLine(QPointF(box.right() - 5, middle + 3), QPointF(box.right(), middle))
            else:
                fill, outline = swatches.get(swatch) or PALETTE[swatch]
                style = Qt.DashLine if swatch in ("custom", "freed") else Qt.SolidLine
                painter.setPen(make_pen(outline, 2.0 if swatch == "new" else 1.2, style=style))
                painter.setBrush(QBrush(QColor(fill)))
                painter.drawRect(box)
            painter.setPen(self.palette().color(self.foregroundRole()))
            painter.drawText(QPointF(box.right() + 4, place.y() + metrics.ascent()), text)
        painter.end()
