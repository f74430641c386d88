"""The lesson's source: an editor with line numbers, breakpoints and the line the debugger is at.

Features
--------
- A gutter with line numbers, breakpoints (a red dot; a conditional one carries a white
  ``?`` and its tooltip shows the condition) and arrows: the line about to run (a red arrow,
  pointing down into a function on ``call``, back out on ``return``) and the line that just
  ran (a light-green arrow, as in Python Tutor). Click the gutter to toggle a breakpoint;
  right-click it to add, edit or remove a condition.
- Full-width highlights: yellow for the line about to run, red when it raised, light green
  for the line that just ran, red for an error line. A line that is already on screen is
  highlighted without scrolling; one that is not is brought a third of the way down.
- Notes cells (``# %% [markdown]``) folded to one marker line by default (``▸ notes: …``),
  opened by a click or when a line inside is revealed; line numbers stay the file's own
  (see :mod:`widgets.notes_folding`).
- Python colours from Pygments' tokenizer, one line at a time; a triple-quoted string that
  spans lines is carried from line to line in the block state, and lexed lines are cached.
- Breakpoints stay with their code: a line inserted or deleted above moves them, a line break
  typed before the code moves them down with it, and deleting the line drops them.
- Editing as in a small IDE (:mod:`widgets.code_editing`): monospace font, Tab inserts four
  spaces (indents a selection), Shift+Tab dedents, Enter keeps the indentation (four more after
  a ``:``), Backspace in the indentation removes four spaces, Ctrl+/ toggles comments,
  Ctrl+wheel / Ctrl++ / Ctrl+- / Ctrl+0 zoom.
- Read-only while a lesson runs: the background is tinted, and a key that would edit shows a
  note saying why under the cursor; the cursor still moves (for run-to-cursor) and
  breakpoints can still be toggled.
- Hovering the text emits :attr:`CodeView.position_hovered`, the line and the character under the mouse
  (the graph outlines the nodes the line or the operation there made);
  :meth:`CodeView.select_span` selects an operation's sub-expression.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from PySide6.QtCore import QEvent, QPoint, QPointF, QRect, QRectF, Qt, QTimer, Signal
from PySide6.QtGui import (
    QColor,
    QFontDatabase,
    QKeyEvent,
    QKeySequence,
    QMouseEvent,
    QPainter,
    QPaintEvent,
    QPalette,
    QPen,
    QResizeEvent,
    QTextBlock,
    QTextBlockUserData,
    QTextCharFormat,
    QTextCursor,
    QWheelEvent,
)
from PySide6.QtWidgets import QInputDialog, QLabel, QLineEdit, QMenu, QPlainTextEdit, QTextEdit, QWidget

from app.code_lines import breakpoint_line
from app.i18n import N_, tr
from app.shown_step import Step
from widgets.code_colours import LINE_COLOURS as LINE_COLOURS  # re-exported: tests read the colours here
from widgets.code_colours import line_colours, lock_note_sheet, locked_palette, operation_colour, syntax_background
from widgets.code_editing import INDENT, edit, would_edit
from widgets.colours import blend
from widgets.gutter_marks import Gutter, draw_arrow, draw_breakpoint, draw_breakpoint_hint, draw_cross
from widgets.notes_folding import NotesFolding
from widgets.python_highlighter import TOKEN_STYLES as TOKEN_STYLES  # re-exported: tests read the colours here
from widgets.python_highlighter import PythonHighlighter
from widgets.theme import follow_palette

#: What the arrow's tooltip says for each kind of pause.
EVENT_TIPS = {
    "line": N_("Runs next"),
    "call": N_("A function was just called: its body runs from here"),
    "return": N_("Returns from here: the function's value goes back to the caller"),
    "exception": N_("Raised an exception"),
}
#: How long the "read-only" note stays up after a key press that could not edit.
LOCK_NOTE_MS = 2500
LOCK_NOTE = N_("Read-only while the lesson runs: stop it to edit")
MIN_POINT_SIZE = 6.0
MAX_POINT_SIZE = 40.0
#: Lines kept in view below the line about to run, where the code has them.
LINES_AROUND = 2


class _LineToken(QTextBlockUserData):
    """Marks the block a breakpoint was set on; Qt deletes it with the block, which is how a deleted line is noticed."""

    def __init__(self, key: int) -> None:
        super().__init__()
        self.key = key


@dataclass
class _Breakpoint:
    """A breakpoint and the cursors that follow its code through edits."""

    key: int
    condition: str | None
    code_start: QTextCursor  # at the first non-blank character of the line (its end if blank)
    code_end: QTextCursor  # at the end of the line


def reveal_range(view: QPlainTextEdit, start: int, end: int) -> bool:
    """Scroll ``view`` sideways as little as brings document positions ``start`` to ``end`` into view (``start``, if
    they are wider than the view); whether it is now scrolled sideways."""
    cursor = QTextCursor(view.document())
    bar = view.horizontalScrollBar()
    cursor.setPosition(start)
    left = view.cursorRect(cursor).left() + bar.value()
    cursor.setPosition(end)
    right = view.cursorRect(cursor).right() + bar.value()
    margin = view.fontMetrics().horizontalAdvance("  ")
    width = view.viewport().width()
    value = bar.value()
    if right + margin > value + width:
        value = right + margin - width
    if left - margin < value:
        value = left - margin
    bar.setValue(max(bar.minimum(), min(value, bar.maximum())))
    return bar.value() > bar.minimum()


class CodeView(QPlainTextEdit):
    """The editor of the lesson's source, with breakpoints and the debugger's position.

    Lines are 1-based everywhere. The view keeps the breakpoints (following their code through
    edits); the current, previous and error lines are only shown, and are cleared by an edit.

    Parameters
    ----------
    parent : QWidget, optional
    """

    breakpoints_changed = Signal(object)
    """The breakpoints changed (toggled, given a condition, moved or dropped by an edit); carries {line: condition}."""
    source_edited = Signal()
    """The learner changed the text (typing, pasting, undo); :meth:`set_source` does not emit it."""
    position_hovered = Signal(int, int)
    """The mouse moved onto a character: its line (1-based) and UTF-8 byte column (0-based, as
    ``co_positions``); -1 past the line's end; ``(0, -1)`` off the text."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("code_view")
        self._name_for_screen_readers()
        self._path: str | None = None
        self._text: str | None = ""
        self._entries: list[_Breakpoint] = []
        self._breakpoints: dict[int, str | None] = {}
        self._keys = itertools.count(1)
        self._current: tuple[int, str] | None = None
        self._previous: int | None = None
        self._error: int | None = None
        self._hovered_position = (0, -1)
        self._reveal_due = False  # the reveal after the layout settles has not run yet
        self._op_span_shown: list[int] | None = None  # the operation span the step in view gave
        self._unscaled_point_size = max(QFontDatabase.systemFont(QFontDatabase.FixedFont).pointSizeF(), 10.0)
        self._base_point_size = self._unscaled_point_size  # Ctrl+0's size: View > Text Size scales it

        self.setLineWrapMode(QPlainTextEdit.NoWrap)
        self.viewport().setMouseTracking(True)
        self._gutter = Gutter(self)
        self._lock_note = LOCK_NOTE  # why the text is read-only (set_read_only)
        self._scrolled_for_operation = False  # scrolled sideways to show an operation: scrolls back after it
        self._scrolled_for_selection = False  # scrolled sideways to show a picked line or span: back at a step
        self._lock_label = QLabel(tr(LOCK_NOTE), self)
        self._lock_label.setObjectName("code_lock_label")
        self._lock_label.setAttribute(Qt.WA_TransparentForMouseEvents)
        self._lock_label.hide()
        self._lock_timer = QTimer(self)
        self._lock_timer.setSingleShot(True)
        self._lock_timer.setInterval(LOCK_NOTE_MS)
        self._lock_timer.timeout.connect(self._lock_label.hide)
        self._highlighter = PythonHighlighter(self.document())
        self.notes_folding = NotesFolding(self)
        self._restyle()
        follow_palette(self, self._restyle)
        self._zoom_to(self._base_point_size)

        self.blockCountChanged.connect(self._on_self_block_count_changed)
        self.updateRequest.connect(self._on_self_update_request)
        self.document().contentsChanged.connect(self._on_document_contents_changed)

    # -- public API -------------------------------------------------------------------------

    def set_source(self, text: str, path: str | None = None) -> None:
        """Show ``text`` (the file at ``path``, if any), dropping breakpoints, marks and undo history."""
        self._entries.clear()
        self._current = self._previous = self._error = None
        self._path = path
        self._text = None  # loading: not an edit
        self.setPlainText(text)
        self._text = self.toPlainText()
        self.notes_folding.set_text(self._text)
        self.document().setModified(False)
        self._publish_breakpoints()
        self._refresh_marks()

    def source(self) -> str:
        """The text as it is now, edits included."""
        return self.toPlainText()

    def path(self) -> str | None:
        """The file given to :meth:`set_source`, or None."""
        return self._path

    def set_language(self, language: str) -> None:
        """Label the folded notes cells in ``language`` (``en`` or ``zh``)."""
        self.notes_folding.set_language(language)

    def _name_for_screen_readers(self) -> None:
        self.setAccessibleName(tr("Code"))
        self.setAccessibleDescription(tr("The lesson's code. F9 sets a breakpoint on the cursor's line; F10 runs "
                                         "the line the run is paused on."))

    def retranslate(self) -> None:
        """Set the view's own texts again in the current language (the folded notes redraw with it)."""
        self._lock_label.setText(tr(self._lock_note))
        self._name_for_screen_readers()
        self.viewport().update()

    def _restyle(self) -> None:
        """The colours of the theme in use (View > High Contrast): the code's, the lines' and the lock note's."""
        self._lock_label.setStyleSheet(lock_note_sheet())
        self._highlighter.set_background(syntax_background())
        self.setPalette(locked_palette(self.isReadOnly()))
        selections = self.extraSelections()
        for selection in selections:
            selection.format.setBackground(QColor(operation_colour()))
        self.setExtraSelections(selections)
        self.viewport().update()
        self._gutter.update()

    def fold_notes(self, folded: bool = True) -> None:
        """Fold every notes cell to its marker line, or (False) open them all."""
        self.notes_folding.set_folded(folded)

    def set_read_only(self, read_only: bool, why: str = LOCK_NOTE) -> None:
        """Lock the text while a lesson runs (tinted; typing shows ``why``, an English msgid); the cursor
        still moves, breakpoints toggle."""
        self._lock_note = why
        self.setReadOnly(read_only)
        self.setPalette(locked_palette(read_only))
        if read_only:
            self.setTextInteractionFlags(Qt.TextSelectableByMouse | Qt.TextSelectableByKeyboard)
        else:
            self._lock_timer.stop()
            self._lock_label.hide()

    def breakpoints(self) -> dict[int, str | None]:
        """Line -> condition (None for an unconditional breakpoint)."""
        return dict(self._breakpoints)

    def set_breakpoints(self, breakpoints: dict[int, str | None]) -> None:
        """Replace all breakpoints; lines outside the text are ignored."""
        self._entries.clear()
        for line, condition in sorted(breakpoints.items()):
            if 1 <= line <= self.blockCount():
                self._add_entry(line, condition)
        self._publish_breakpoints()

    def toggle_breakpoint(self, line: int | None = None) -> None:
        """Add a breakpoint on ``line`` (the cursor's line when None), or remove the one there.

        A breakpoint asked for on a blank line or a comment goes to the next line with code (as
        in VS Code), and the view says so; with no code below, none is set and the view says why.
        """
        line = self.cursor_line() if line is None else self._checked(line)
        if line in self._breakpoints:
            self._entries = [entry for entry in self._entries if entry.code_start.blockNumber() + 1 != line]
        else:
            target = self._pausable(line)
            if target is None:
                return
            if target not in self._breakpoints:
                self._add_entry(target, None)
        self._publish_breakpoints()

    def _pausable(self, line: int) -> int | None:
        """The line a breakpoint asked for on ``line`` goes to; says so when it moves, or why there is none."""
        target = breakpoint_line(self.toPlainText(), line)
        if target is None:
            self._show_note(tr("No code on line {line} or below it: a breakpoint there could never pause", line=line),
                            line)
        elif target != line:
            self._show_note(tr("Breakpoint set on line {target}: line {line} has no code to pause at", target=target,
                               line=line), target)
        return target

    def set_condition(self, line: int, condition: str | None) -> None:
        """Pause at ``line`` only when ``condition`` is true; adds the breakpoint if needed. None or "" = always."""
        line = self._checked(line)
        if line not in self._breakpoints:
            line = self._pausable(line)
            if line is None:
                return
        condition = condition.strip() if condition and condition.strip() else None
        for entry in self._entries:
            if entry.code_start.blockNumber() + 1 == line:
                entry.condition = condition
                break
        else:
            self._add_entry(line, condition)
        self._publish_breakpoints()

    def edit_condition(self, line: int | None = None) -> None:
        """Ask for the condition of the breakpoint on ``line`` (the cursor's line when None) in a dialog."""
        line = self.cursor_line() if line is None else self._checked(line)
        condition, accepted = QInputDialog.getText(
            self, tr("Breakpoint condition"),
            tr("Pause at line {line} only when this expression is true (empty: always pause):", line=line),
            QLineEdit.Normal, self._breakpoints.get(line) or "")
        if accepted:
            self.set_condition(line, condition)

    def cursor_line(self) -> int:
        """The line the text cursor is on."""
        return self.textCursor().blockNumber() + 1

    def go_to_line(self, line: int) -> None:
        """Put the cursor at the start of ``line``'s code, scrolling only if the line is off screen."""
        block = self.document().findBlockByNumber(self._checked(line) - 1)
        cursor = QTextCursor(block)
        cursor.setPosition(block.position() + len(block.text()) - len(block.text().lstrip()))
        self.setTextCursor(cursor)
        self._reveal_due = False  # the learner's own look at a line wins over revealing the paused one later
        self._reveal(line)

    def select_line(self, line: int) -> None:
        """Select the code of ``line`` (as :meth:`go_to_line` places the cursor, then to the line's end), its start in
        view: the cursor at the end of a long line scrolled the code out of view sideways."""
        self.go_to_line(line)
        cursor = self.textCursor()
        cursor.movePosition(QTextCursor.EndOfBlock, QTextCursor.KeepAnchor)
        self.setTextCursor(cursor)
        self._scrolled_for_selection = reveal_range(self, cursor.selectionStart(), cursor.selectionEnd())

    def select_span(self, span: list[int]) -> None:
        """Select ``[line, col, end_line, end_col]`` (UTF-8 byte columns, as ``co_positions``), revealing it."""
        if not (self._in_text(span[0]) and self._in_text(span[2])):
            return
        self._reveal_due = False
        self._reveal(span[0])
        cursor = QTextCursor(self.document())
        cursor.setPosition(self._position(span[0], span[1]))
        cursor.setPosition(self._position(span[2], span[3]), QTextCursor.KeepAnchor)
        self.setTextCursor(cursor)
        self._scrolled_for_selection = reveal_range(self, cursor.selectionStart(), cursor.selectionEnd())

    def show_step(self, step: Step) -> None:
        """Mark the step in view: the line about to run (a past step's line), the line that just ran, the operation.

        A step that keeps the marks (the lesson running on from the pause in view) leaves the view where
        the learner scrolled it.
        """
        current = (step.line, step.event) if self._in_text(step.line) else None
        if current != self._current:
            self.set_current_line(step.line, step.event)
        if step.previous_line != self._previous:
            self.set_previous_line(step.previous_line)
        if step.op_span != self._op_span_shown:
            self.set_operation_span(step.op_span)
        self._op_span_shown = step.op_span

    def set_current_line(self, line: int | None, event: str = "line") -> None:
        """Mark the line about to run (None clears it); ``event`` is the pause's: line, call, return or exception."""
        self._current = (line, event) if self._in_text(line) else None
        self._refresh_marks()
        if self._scrolled_for_selection:  # a node's line was shown sideways: the step's line from its start
            self._scrolled_for_selection = False
            self.horizontalScrollBar().setValue(0)
        if self._current:
            self._reveal(line)
            # Once more when the window has settled: an opened notes cell or a bar shown over the code
            # (a prediction) changes the layout after this call.
            self._reveal_due = True
            QTimer.singleShot(0, self, lambda: self._reveal_current(only_if_due=True))

    def _reveal_current(self, only_if_due: bool = False) -> None:
        if only_if_due and not self._reveal_due:
            return  # the learner looked at another line meanwhile
        self._reveal_due = False
        if self._current:
            self._reveal(self._current[0])
        self._reveal_operation()

    def set_operation_span(self, span: list[int] | None) -> None:
        """Highlight ``[line, col, end_line, end_col]`` (UTF-8 byte columns, as ``co_positions``); None clears it.

        The operation is scrolled into view, sideways too, and a selection over it (a graph node
        picked at an earlier step) goes, since the selection would be drawn over it; once the
        operations of a line are done, a view scrolled sideways for them scrolls back.
        """
        selections = []
        if span is not None and self._in_text(span[0]) and self._in_text(span[2]):
            cursor = QTextCursor(self.document())
            cursor.setPosition(self._position(span[0], span[1]))
            cursor.setPosition(self._position(span[2], span[3]), QTextCursor.KeepAnchor)
            selection = QTextEdit.ExtraSelection()
            selection.cursor = cursor
            selection.format = QTextCharFormat()
            selection.format.setBackground(QColor(operation_colour()))
            selections.append(selection)
            mine = self.textCursor()
            if mine.hasSelection() and mine.selectionStart() < cursor.selectionEnd() \
                    and cursor.selectionStart() < mine.selectionEnd():
                mine.clearSelection()
                self.setTextCursor(mine)
        self.setExtraSelections(selections)
        if selections:
            self._reveal(span[0])
            self._reveal_operation()
        elif self._scrolled_for_operation:
            self.horizontalScrollBar().setValue(0)
        self._scrolled_for_operation = self._scrolled_for_operation and bool(selections)

    def _reveal_operation(self) -> None:
        """Scroll sideways as little as brings the highlighted operation into view (its start, if it is
        wider than the view)."""
        span = self.operation_span()
        if span is None:
            return
        # scrolled sideways while the operation is shown (by this or by clearing the selection): back after it
        self._scrolled_for_operation = reveal_range(self, *span)

    def operation_span(self) -> tuple[int, int] | None:
        """The highlighted operation as document positions ``(start, end)``, or None."""
        selections = self.extraSelections()
        if not selections:
            return None
        cursor = selections[0].cursor
        return cursor.selectionStart(), cursor.selectionEnd()

    def _position(self, line: int, byte_column: int) -> int:
        block = self.document().findBlockByNumber(line - 1)
        column = len(block.text().encode("utf-8")[:byte_column].decode("utf-8", "ignore"))
        return block.position() + column

    def current_line(self) -> int | None:
        """The line marked as about to run, or None."""
        return self._current[0] if self._current else None

    def previous_line(self) -> int | None:
        """The line marked as just run, or None."""
        return self._previous

    def set_previous_line(self, line: int | None) -> None:
        """Mark the line that just ran (None clears it)."""
        self._previous = line if self._in_text(line) else None
        self._refresh_marks()

    def set_error_line(self, line: int | None) -> None:
        """Mark the line an error points to (None clears it)."""
        self._error = line if self._in_text(line) else None
        self._refresh_marks()
        if self._error:
            self._reveal(line)

    # -- gutter (called by _Gutter) -----------------------------------------------------------

    def _gutter_width(self) -> int:
        digits = max(3, len(str(self.blockCount())))
        return self._mark_width() * 2 + self.fontMetrics().horizontalAdvance("9") * digits + 8

    def line_at(self, y: float) -> int | None:
        """The line drawn at viewport height ``y``, or None below the last line."""
        block = self.cursorForPosition(QPoint(0, int(y))).block()
        geometry = self.blockBoundingGeometry(block).translated(self.contentOffset())
        return block.blockNumber() + 1 if geometry.top() <= y < geometry.bottom() else None

    def gutter_menu(self, line: int) -> QMenu:
        """The right-click menu of ``line``'s gutter."""
        menu = QMenu(self)
        if line in self._breakpoints:
            menu.addAction(tr("Edit condition…"), lambda: self.edit_condition(line))
            menu.addAction(tr("Remove breakpoint"), lambda: self.toggle_breakpoint(line))
        else:
            menu.addAction(tr("Add breakpoint"), lambda: self.toggle_breakpoint(line))
            menu.addAction(tr("Add conditional breakpoint…"), lambda: self.edit_condition(line))
        return menu

    def gutter_tip(self, line: int) -> str:
        """The tooltip of ``line``'s gutter: its breakpoint and marks, and what a click does."""
        tips = []
        if self._current and self._current[0] == line:
            tips.append(f"<b>{tr(EVENT_TIPS.get(self._current[1], EVENT_TIPS['line']))}</b>")
        if self._previous == line:
            tips.append(tr("Just ran"))
        if self._error == line:
            tips.append(tr("The error points here"))
        if line not in self._breakpoints:
            tips.append(tr("Click: add a breakpoint; right-click: a conditional one"))
        elif self._breakpoints[line] is None:
            tips.append(tr("Breakpoint. Click: remove; right-click: add a condition"))
        else:
            condition = self._breakpoints[line].replace("&", "&amp;").replace("<", "&lt;")
            tips.append(tr("Breakpoint when <code>{condition}</code> is true. Right-click: edit", condition=condition))
        return tr("Line {line}", line=line) + "<br>" + "<br>".join(tips)

    def paint_gutter(self, gutter: QWidget, event: QPaintEvent) -> None:
        painter = QPainter(gutter)
        palette = self.palette()
        painter.fillRect(event.rect(), blend(palette.color(QPalette.Base), palette.color(QPalette.Window), 0.7))
        painter.setPen(palette.color(QPalette.Mid))
        painter.drawLine(gutter.width() - 1, event.rect().top(), gutter.width() - 1, event.rect().bottom())
        painter.setRenderHint(QPainter.Antialiasing)
        mark = self._mark_width()
        number_colour = palette.color(QPalette.PlaceholderText)
        line_height = self.fontMetrics().height()
        plain, bold = self.font(), self.font()
        bold.setBold(True)
        text_colour = palette.color(QPalette.Text)
        current_line = self._current[0] if self._current is not None else None
        number_width = gutter.width() - 2 * mark - 4
        block = self.firstVisibleBlock()
        top = self.blockBoundingGeometry(block).translated(self.contentOffset()).top()
        while block.isValid() and top <= event.rect().bottom():
            line = block.blockNumber() + 1
            if block.isVisible() and top + line_height >= event.rect().top():  # folded notes lines are hidden
                current = line == current_line  # the paused line's number in bold
                painter.setFont(bold if current else plain)  # fonts made once: the marks below change them
                painter.setPen(text_colour if current else number_colour)
                painter.drawText(QRectF(mark, top, number_width, line_height), Qt.AlignRight | Qt.AlignVCenter,
                                 str(line))
                self._paint_marks(painter, QRectF(0, top, mark, line_height),
                                  QRectF(gutter.width() - mark - 3, top, mark, line_height), line)
            top += self.blockBoundingRect(block).height()
            block = block.next()
        painter.end()

    # -- Qt overrides -------------------------------------------------------------------------

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802 - Qt override
        # The marked lines are filled here, under the text, rather than with full-width extra
        # selections: those leave a gap after italic text and miss the document margin.
        painter = QPainter(self.viewport())
        # the base (or the lock's tint) as the view's own palette has it: the high-contrast style sheet's style can
        # leave the viewport a palette of its own, from before the theme changed
        painter.fillRect(event.rect(), self.palette().color(QPalette.Base))
        for line, colour in self._line_backgrounds():
            row = self.blockBoundingGeometry(self.document().findBlockByNumber(line - 1))
            row = row.translated(self.contentOffset())
            painter.fillRect(QRectF(0, row.top(), self.viewport().width(), row.height()), QColor(colour))
            if "frame" in line_colours() and line == (self._current or (None,))[0]:  # a mark not told by colour alone
                painter.setPen(QPen(QColor(line_colours()["frame"]), 2.0))
                painter.drawRect(QRectF(1, row.top() + 1, self.viewport().width() - 2, row.height() - 2))
        painter.end()
        super().paintEvent(event)
        painter = QPainter(self.viewport())
        self.notes_folding.paint(painter)
        painter.end()

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 - Qt override
        super().resizeEvent(event)
        self._layout_gutter()
        if event.size().height() < event.oldSize().height():
            self._reveal_current()  # a shorter view must still show the line the run is paused on

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802 - Qt override
        control = bool(event.modifiers() & Qt.ControlModifier)
        if event.matches(QKeySequence.ZoomIn) or (control and event.key() in (Qt.Key_Plus, Qt.Key_Equal)):
            self._zoom_to(self.font().pointSizeF() + 1)
        elif event.matches(QKeySequence.ZoomOut) or (control and event.key() == Qt.Key_Minus):
            self._zoom_to(self.font().pointSizeF() - 1)
        elif control and event.key() == Qt.Key_0:
            self._zoom_to(self._base_point_size)
        elif self.isReadOnly():
            if would_edit(event):
                self._show_lock_note()
            super().keyPressEvent(event)
        elif not edit(self, event):
            super().keyPressEvent(event)

    def mouseMoveEvent(self, event: QMouseEvent) -> None:  # noqa: N802 - Qt override
        super().mouseMoveEvent(event)
        line = self.line_at(event.position().y()) or 0
        self._hover_position(line, self._column_at(event.position()) if line else -1)

    def viewportEvent(self, event: QEvent) -> bool:  # noqa: N802 - Qt override
        if event.type() == QEvent.Leave:
            self._hover_position(0, -1)
        return super().viewportEvent(event)

    def _hover_position(self, line: int, column: int) -> None:
        if (line, column) != self._hovered_position:
            self._hovered_position = (line, column)
            self.position_hovered.emit(line, column)

    def _column_at(self, point: QPointF) -> int:
        """The UTF-8 byte column of the character under ``point`` (viewport coordinates); -1 past the text."""
        cursor = self.cursorForPosition(point.toPoint())
        column = cursor.positionInBlock()
        if point.x() < self.cursorRect(cursor).left() and column > 0:
            column -= 1  # the cursor lands on the nearest gap: the character is the one before it
        text = cursor.block().text()
        if column >= len(text):
            return -1
        return len(text[:column].encode("utf-8"))

    def wheelEvent(self, event: QWheelEvent) -> None:  # noqa: N802 - Qt override
        if event.modifiers() & Qt.ControlModifier:
            if event.angleDelta().y():
                self._zoom_to(self.font().pointSizeF() + (1 if event.angleDelta().y() > 0 else -1))
            event.accept()
        else:
            super().wheelEvent(event)

    # -- handlers -----------------------------------------------------------------------------

    def _on_self_block_count_changed(self, _count: int) -> None:
        self._layout_gutter()

    def _on_self_update_request(self, rect: QRect, dy: int) -> None:
        if dy:
            self._gutter.scroll(0, dy)
        else:
            self._gutter.update(0, rect.y(), self._gutter.width(), rect.height())

    def _on_document_contents_changed(self) -> None:
        # Re-colouring also emits contentsChanged, so compare the text to see whether it was an edit.
        if self._text is None:
            return
        text = self.toPlainText()
        if text == self._text:
            return
        self._text = text
        self.notes_folding.text_edited(text)
        self._follow_code()
        if self._current or self._previous or self._error:
            self._current = self._previous = self._error = None
            self._refresh_marks()
        self.source_edited.emit()

    # -- breakpoints --------------------------------------------------------------------------

    def _add_entry(self, line: int, condition: str | None) -> None:
        entry = _Breakpoint(0, condition, QTextCursor(self.document()), QTextCursor(self.document()))
        self._mark(entry, self.document().findBlockByNumber(line - 1))
        self._entries.append(entry)

    def _mark(self, entry: _Breakpoint, block: QTextBlock) -> None:
        """Make ``block`` ``entry``'s line."""
        entry.key = next(self._keys)
        block.setUserData(_LineToken(entry.key))
        self._place_cursors(entry, block)

    @staticmethod
    def _place_cursors(entry: _Breakpoint, block: QTextBlock) -> None:
        text = block.text()
        entry.code_start.setPosition(block.position() + len(text) - len(text.lstrip()))
        entry.code_end.setPosition(block.position() + len(text))

    def _follow_code(self) -> None:
        """After an edit, move each breakpoint to the line its code is now on, or drop it with its line.

        The cursors moved with the text. A breakpoint whose code start is still in its marked block
        stays there. Otherwise a line break went in before its code, or its line was joined to a
        blank line above: it moves if its code is still there with only blanks before it. If its
        line was deleted, the token went with the block and the cursors closed up: it is dropped.
        """
        in_place, moved = [], []
        for entry in self._entries:
            block = entry.code_start.block()
            token = block.userData()
            if isinstance(token, _LineToken) and token.key == entry.key:
                in_place.append(entry)
                self._place_cursors(entry, block)
            elif (entry.code_end.position() > entry.code_start.position()
                  and not block.text()[:entry.code_start.positionInBlock()].strip()):
                moved.append(entry)
        taken = {entry.code_start.blockNumber() for entry in in_place}
        for entry in moved:
            if entry.code_start.blockNumber() not in taken:
                taken.add(entry.code_start.blockNumber())
                self._mark(entry, entry.code_start.block())
                in_place.append(entry)
        self._entries = in_place
        self._publish_breakpoints()

    def _publish_breakpoints(self) -> None:
        breakpoints = {entry.code_start.blockNumber() + 1: entry.condition for entry in self._entries}
        if breakpoints != self._breakpoints:
            self._breakpoints = breakpoints
            self._gutter.update()
            self.breakpoints_changed.emit(dict(breakpoints))

    # -- marks --------------------------------------------------------------------------------

    def _refresh_marks(self) -> None:
        self.viewport().update()
        self._gutter.update()

    def _line_backgrounds(self) -> list[tuple[int, str]]:
        """(line, colour) of each marked line, painted in this order: the current line on top."""
        marks = []
        if self._previous and (not self._current or self._current[0] != self._previous):
            marks.append((self._previous, line_colours()["previous"]))
        if self._error:
            marks.append((self._error, line_colours()["error"]))
        if self._current:
            line, event = self._current
            marks.append((line, line_colours()["exception" if event == "exception" else "current"]))
        return marks

    def _reveal(self, line: int) -> None:
        """Scroll ``line`` a third of the way down the view, unless it is already on screen with
        :data:`LINES_AROUND` lines in view below it (the next line, often a question's, sat hidden under the
        bottom edge as the learner stepped down).

        A folded notes cell that hides the line opens first.
        """
        self.notes_folding.reveal(line)
        block = self.document().findBlockByNumber(line - 1)
        geometry = self.blockBoundingGeometry(block).translated(self.contentOffset())
        if geometry.top() >= 0 and geometry.bottom() + LINES_AROUND * geometry.height() <= self.viewport().height():
            return
        rows = self.viewport().height() // max(self.fontMetrics().height(), 1)
        # The scroll bar counts shown lines: the hidden lines of folded notes are not among them.
        self.verticalScrollBar().setValue(max(block.firstLineNumber() - rows // 3, 0))

    def _paint_marks(self, painter: QPainter, breakpoint_cell: QRectF, arrow_cell: QRectF, line: int) -> None:
        """``line``'s breakpoint (or the hint of one under the mouse) and its arrow (or the error's cross)."""
        colours = line_colours()
        if line in self._breakpoints:
            font = self.font() if self._breakpoints[line] is not None else None
            draw_breakpoint(painter, breakpoint_cell, colours["breakpoint"], colours["breakpoint_edge"], font)
        elif line == self._gutter.hover_line:
            draw_breakpoint_hint(painter, breakpoint_cell, colours["breakpoint"])
        if self._current and self._current[0] == line:
            draw_arrow(painter, arrow_cell, colours["current_arrow"], self._current[1])
        elif self._previous == line:
            draw_arrow(painter, arrow_cell, colours["previous_arrow"], "line")
        elif self._error == line:
            draw_cross(painter, arrow_cell, colours["current_arrow"])

    # -- helpers ------------------------------------------------------------------------------

    def _mark_width(self) -> int:
        return self.fontMetrics().height() + 2

    def set_text_scale(self, scale: float) -> None:
        """View > Text Size: the code at ``scale`` times its usual size (Ctrl+0 comes back to it)."""
        self._base_point_size = self._unscaled_point_size * scale
        self._zoom_to(self._base_point_size)

    def _zoom_to(self, point_size: float) -> None:
        font = QFontDatabase.systemFont(QFontDatabase.FixedFont)
        font.setPointSizeF(min(max(point_size, MIN_POINT_SIZE), MAX_POINT_SIZE))
        self.setFont(font)
        self.setTabStopDistance(self.fontMetrics().horizontalAdvance(" ") * len(INDENT))
        self._layout_gutter()

    def _layout_gutter(self) -> None:
        """Size the gutter for the line count and font."""
        self.setViewportMargins(self._gutter_width(), 0, 0, 0)
        contents = self.contentsRect()
        self._gutter.setGeometry(QRect(contents.left(), contents.top(), self._gutter_width(), contents.height()))

    def _show_lock_note(self) -> None:
        """Say why typing does nothing, just under the cursor, for a moment."""
        self._show_note(tr(self._lock_note))

    def _show_note(self, text: str, line: int | None = None) -> None:
        """Show ``text`` for a moment just under ``line`` (the cursor's line when None)."""
        self._lock_label.setText(text)
        self._lock_label.adjustSize()
        viewport = self.viewport().geometry()
        if line is None:
            anchor = self.cursorRect()
        else:
            block = self.document().findBlockByNumber(line - 1)
            anchor = self.blockBoundingGeometry(block).translated(self.contentOffset()).toRect()
        place = viewport.topLeft() + anchor.bottomLeft() + QPoint(0, 3)
        if place.y() + self._lock_label.height() > viewport.bottom():
            place.setY(viewport.top() + anchor.top() - self._lock_label.height() - 3)
        place.setX(max(viewport.left() + 2, min(place.x(), viewport.right() - self._lock_label.width() - 2)))
        self._lock_label.move(place)
        self._lock_label.show()
        self._lock_label.raise_()
        self._lock_timer.start()

    def _checked(self, line: int) -> int:
        if not self._in_text(line):
            raise ValueError(f"line {line} is not in the text (1..{self.blockCount()})")
        return line

    def _in_text(self, line: int | None) -> bool:
        return line is not None and 1 <= line <= self.blockCount()
