"""The code view's gutter: the strip left of the text, and the marks it draws in a line's cell.

The marks: a breakpoint, its hover hint, the debugger's arrow, a cross.

Pure drawing on a ``QPainter`` into a cell rectangle; which mark a line gets is the code view's
decision (:mod:`widgets.code_view`).
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QEvent, QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QContextMenuEvent, QFont, QMouseEvent, QPainter, QPaintEvent, QPen, QPolygonF
from PySide6.QtWidgets import QToolTip, QWidget

#: An arrow pointing right in a unit box (turned for the event when drawn).
_ARROW = ((-0.9, -0.22), (0.1, -0.22), (0.1, -0.6), (0.9, 0), (0.1, 0.6), (0.1, 0.22), (-0.9, 0.22))
#: How far the arrow turns for each kind of pause: down into a call, back out on a return.
_TURNS = {"call": 45, "return": 180}


def draw_breakpoint(painter: QPainter, cell: QRectF, fill: str, edge: str, font: QFont | None) -> None:
    """A dot filling most of ``cell``; with ``font``, a white ``?`` on it (a conditional breakpoint)."""
    radius = min(cell.width(), cell.height()) * 0.36
    centre = cell.center()
    painter.setPen(QColor(edge))
    painter.setBrush(QColor(fill))
    painter.drawEllipse(centre, radius, radius)
    if font is not None:
        font = QFont(font)
        font.setBold(True)
        font.setPixelSize(max(int(radius * 1.7), 6))
        painter.setFont(font)
        painter.setPen(Qt.white)
        painter.drawText(QRectF(centre.x() - radius, centre.y() - radius, 2 * radius, 2 * radius),
                         Qt.AlignCenter, "?")


def draw_breakpoint_hint(painter: QPainter, cell: QRectF, fill: str) -> None:
    """A faint dot where a click would put a breakpoint."""
    radius = min(cell.width(), cell.height()) * 0.36
    hint = QColor(fill)
    hint.setAlpha(70)
    painter.setPen(Qt.NoPen)
    painter.setBrush(hint)
    painter.drawEllipse(cell.center(), radius, radius)


def draw_arrow(painter: QPainter, cell: QRectF, colour: str, event: str) -> None:
    """An arrow pointing at the line, turned down into a ``call`` and back on a ``return``."""
    painter.save()
    painter.translate(cell.center())
    painter.rotate(_TURNS.get(event, 0))
    scale = min(cell.width(), cell.height()) * 0.45
    painter.scale(scale, scale)
    painter.setPen(Qt.NoPen)
    painter.setBrush(QColor(colour))
    painter.drawPolygon(QPolygonF([QPointF(x, y) for x, y in _ARROW]))
    painter.restore()


def draw_cross(painter: QPainter, cell: QRectF, colour: str) -> None:
    """A cross: the line an error points at."""
    painter.setPen(QPen(QColor(colour), 2.0))
    half = min(cell.width(), cell.height()) * 0.25
    painter.drawLine(cell.center() + QPointF(-half, -half), cell.center() + QPointF(half, half))
    painter.drawLine(cell.center() + QPointF(-half, half), cell.center() + QPointF(half, -half))


class Gutter(QWidget):
    """The strip left of the text: breakpoints, line numbers, arrows. It draws and reports; the view decides."""

    def __init__(self, view: Any) -> None:  # the CodeView (which imports this module)
        super().__init__(view)
        self._view = view
        self.hover_line: int | None = None
        self.setObjectName("code_gutter")
        self.setMouseTracking(True)
        self.setCursor(Qt.PointingHandCursor)

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802 - Qt override
        self._view.paint_gutter(self, event)

    def mousePressEvent(self, event: QMouseEvent) -> None:  # noqa: N802 - Qt override
        line = self._view.line_at(event.position().y())
        if event.button() == Qt.LeftButton and line is not None:
            self._view.toggle_breakpoint(line)

    def mouseMoveEvent(self, event: QMouseEvent) -> None:  # noqa: N802 - Qt override
        line = self._view.line_at(event.position().y())
        if line != self.hover_line:
            self.hover_line = line
            self.update()

    def leaveEvent(self, event: QEvent) -> None:  # noqa: N802 - Qt override
        self.hover_line = None
        self.update()

    def contextMenuEvent(self, event: QContextMenuEvent) -> None:  # noqa: N802 - Qt override
        line = self._view.line_at(event.pos().y())
        if line is not None:
            menu = self._view.gutter_menu(line)
            menu.exec(event.globalPos())
            menu.deleteLater()

    def event(self, event: QEvent) -> bool:
        if event.type() == QEvent.ToolTip:
            line = self._view.line_at(event.pos().y())
            if line is None:
                QToolTip.hideText()
            else:
                QToolTip.showText(event.globalPos(), self._view.gutter_tip(line), self)
            return True
        return super().event(event)
