"""Folding of a lesson's notes cells in the code view: each cell one marker line, opened by a click.

The notes repeat what the Lesson notes panel shows, in two languages, so the code view folds
every ``# %% [markdown]`` cell to its marker line by default, drawn as ``▸ notes: <heading>``.
The folded lines are hidden blocks: the text and its line numbers do not change, the gutter
keeps the real numbers, and revealing a line inside a folded cell (the line about to run, an
error, "go to line") opens the cell. Cells are found with :func:`app.lesson_format.parse_lesson`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from PySide6.QtCore import QEvent, QObject, QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QFont, QMouseEvent, QPainter, QPalette, QTextBlock
from PySide6.QtWidgets import QPlainTextEdit

from app.i18n import tr
from app.lesson_format import LessonFormatError, parse_lesson

#: Characters of a cell's heading or first words shown on its marker.
LABEL_LENGTH = 70
FOLDED_SIGN, OPEN_SIGN = "▸", "▾"
_MARKUP = re.compile(r"^#+\s*|[*`]")


@dataclass
class Fold:
    """One notes cell: its marker line and last line (1-based, trailing blank lines left out)."""

    start: int
    end: int
    labels: dict[str, str] = field(default_factory=dict)
    folded: bool = True

    def holds(self, line: int) -> bool:
        """Whether ``line`` is one of the lines folding hides."""
        return self.start < line <= self.end


def find_folds(text: str) -> list[Fold]:
    """The notes cells of a lesson's text, folded; none when the text is not a lesson."""
    try:
        lesson = parse_lesson(text if "\n" in text else text + "\n")
    except LessonFormatError:
        return []
    lines = text.splitlines()
    folds = []
    for section in lesson.notes:
        end = section.end_line
        while end > section.start_line and not lines[end - 1].strip():
            end -= 1
        labels = {lang: _label(body) for lang, body in section.text.items()}
        if end > section.start_line:
            folds.append(Fold(section.start_line, end, labels))
    return folds


def _label(body: str) -> str:
    """A notes block's heading, or its first words."""
    first = next((line for line in body.splitlines() if line.strip()), "")
    words = _MARKUP.sub("", first.strip()).strip()
    return words if len(words) <= LABEL_LENGTH else words[:LABEL_LENGTH - 1].rstrip() + "…"


class NotesFolding(QObject):
    """Folds the notes cells of a :class:`QPlainTextEdit`'s lesson; the view calls its hooks.

    Parameters
    ----------
    view
        The editor. Clicks on its viewport are watched here; it calls :meth:`paint` after its
        own painting and :meth:`reveal` before scrolling to a line.
    """

    def __init__(self, view: QPlainTextEdit) -> None:
        super().__init__(view)
        self._view = view
        self._folds: list[Fold] = []
        self._language = "en"
        view.viewport().installEventFilter(self)

    # -- public API -----------------------------------------------------------------------------

    def set_text(self, text: str) -> None:
        """Find the notes cells of a newly shown text and fold them all."""
        self._folds = find_folds(text)
        self._apply()

    def text_edited(self, text: str) -> None:
        """Find the cells again after an edit; cells keep their state when the cells still line up."""
        folds = find_folds(text)
        if [f.labels for f in folds] == [f.labels for f in self._folds]:
            for new, old in zip(folds, self._folds, strict=True):
                new.folded = old.folded
        else:
            for fold in folds:
                fold.folded = False  # the learner is changing the notes: show them
        self._folds = folds
        self._apply()

    def set_language(self, language: str) -> None:
        """Label the markers in ``language``."""
        self._language = language
        self._view.viewport().update()

    def folds(self) -> list[Fold]:
        """The notes cells, in file order."""
        return list(self._folds)

    def set_folded(self, folded: bool, fold: Fold | None = None) -> None:
        """Fold or unfold one cell, or every cell when ``fold`` is None."""
        for each in self._folds if fold is None else [fold]:
            each.folded = folded
        self._apply()

    def reveal(self, line: int) -> None:
        """Open the folded cell that hides ``line``, if any."""
        for fold in self._folds:
            if fold.folded and fold.holds(line):
                self.set_folded(False, fold)

    def marker_at(self, line: int) -> Fold | None:
        """The cell whose marker is ``line``."""
        return next((fold for fold in self._folds if fold.start == line), None)

    # -- drawing and clicks -----------------------------------------------------------------------

    def paint(self, painter: QPainter) -> None:
        """Draw each marker line on screen: a folded one as ``▸ notes: …``, an open one with a ``▾`` tag."""
        view = self._view
        palette = view.palette()
        height = view.viewport().height()
        for fold in self._folds:
            rect = self._line_rect(fold.start)
            if rect is None or rect.bottom() < 0 or rect.top() > height:
                continue
            label = fold.labels.get(self._language) or fold.labels.get("en", "")
            font = QFont(view.font())
            font.setItalic(True)
            painter.setFont(font)
            tint = QColor(palette.color(QPalette.ColorRole.Highlight))
            if fold.folded:
                base = palette.color(QPalette.ColorRole.Base)
                painter.fillRect(QRectF(0, rect.top(), view.viewport().width(), rect.height()), base)
                tint.setAlpha(28)
                painter.fillRect(QRectF(0, rect.top(), view.viewport().width(), rect.height()), tint)
                text = f"{FOLDED_SIGN} " + tr("notes: {label}   ({n} lines)", label=label, n=fold.end - fold.start)
                left = rect.left()
            else:
                text = f"{OPEN_SIGN} " + tr("fold notes")
                left = self._tag_left(fold)
            painter.setPen(palette.color(QPalette.ColorRole.PlaceholderText))
            painter.drawText(QRectF(left, rect.top(), view.viewport().width(), rect.height()),
                             Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter, text)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt override
        if event.type() == QEvent.Type.MouseButtonPress and isinstance(event, QMouseEvent) \
                and event.button() == Qt.MouseButton.LeftButton:
            fold = self._clicked(event.position())
            if fold is not None:
                self.set_folded(not fold.folded, fold)
                return True
        return super().eventFilter(watched, event)

    # -- helpers ------------------------------------------------------------------------------------

    def _clicked(self, point: QPointF) -> Fold | None:
        """The cell whose marker (a folded line, or an open cell's tag) is under ``point``."""
        for fold in self._folds:
            rect = self._line_rect(fold.start)
            if rect is None or not rect.top() <= point.y() < rect.bottom():
                continue
            if fold.folded or point.x() >= self._tag_left(fold):
                return fold
        return None

    def _block(self, line: int) -> QTextBlock:
        return self._view.document().findBlockByNumber(line - 1)

    def _line_rect(self, line: int) -> QRectF | None:
        block = self._block(line)
        if not block.isValid() or not block.isVisible():
            return None
        view = self._view
        rect = view.blockBoundingGeometry(block).translated(view.contentOffset())
        margin = view.document().documentMargin()
        return QRectF(rect.left() + margin, rect.top(), rect.width() - margin, rect.height())

    def _tag_left(self, fold: Fold) -> float:
        rect = self._line_rect(fold.start)
        text = self._block(fold.start).text()
        return (rect.left() if rect else 0.0) + self._view.fontMetrics().horizontalAdvance(text + "   ")

    def _apply(self) -> None:
        """Hide the lines of folded cells and show every other line."""
        document = self._view.document()
        hidden = {line for fold in self._folds if fold.folded for line in range(fold.start + 1, fold.end + 1)}
        block = document.firstBlock()
        changed = False
        while block.isValid():
            visible = block.blockNumber() + 1 not in hidden
            if block.isVisible() != visible:
                block.setVisible(visible)
                changed = True
            block = block.next()
        if changed:
            document.markContentsDirty(0, document.characterCount())
        self._view.viewport().update()
        self._view.updateGeometry()
