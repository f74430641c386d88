"""Editing keys as in an IDE, for the code view: Tab indents, Enter keeps the indentation, Ctrl+/ comments.

Tab and Shift+Tab indent and dedent the selected lines, Enter indents one level more after a
``:`` and one less after ``return``/``pass``/…, Backspace in the indentation goes back to the
previous indent stop, and Ctrl+/ comments or uncomments the selected lines, each as one undo step.
"""

from __future__ import annotations

import os
from collections.abc import Callable

from PySide6.QtCore import Qt
from PySide6.QtGui import QKeyEvent, QKeySequence, QTextCursor
from PySide6.QtWidgets import QPlainTextEdit

INDENT = "    "


class IdeEditing:
    """The editing keys of ``editor``."""

    def __init__(self, editor: QPlainTextEdit) -> None:
        self.editor = editor

    def key(self, event: QKeyEvent) -> bool:
        """Handle the keys that edit like an IDE; False leaves the key to Qt."""
        key, modifiers = event.key(), event.modifiers()
        if key == Qt.Key_Tab and not modifiers & (Qt.ControlModifier | Qt.AltModifier):
            self._indent()
        elif key == Qt.Key_Backtab:
            self._change_lines(lambda text: text[min(len(text) - len(text.lstrip(" ")), len(INDENT)):])
        elif key in (Qt.Key_Return, Qt.Key_Enter) and not modifiers & Qt.ControlModifier:
            self._new_line()
        elif key == Qt.Key_Backspace and not modifiers and not self.editor.textCursor().hasSelection():
            return self._dedent_blank()
        elif key == Qt.Key_Slash and modifiers & Qt.ControlModifier:
            self._toggle_comment()
        else:
            return False
        return True

    def _indent(self) -> None:
        cursor = self.editor.textCursor()
        if cursor.hasSelection() and len(self._selected_blocks()) > 1:
            self._change_lines(lambda text: INDENT + text if text.strip() else text)
        else:
            cursor.insertText(" " * (len(INDENT) - cursor.positionInBlock() % len(INDENT)))

    def _new_line(self) -> None:
        """Break the line, keeping the indentation: one level more after a ``:``, one less after return/pass/..."""
        cursor = self.editor.textCursor()
        before = cursor.block().text()[:cursor.positionInBlock()]
        indent = before[:len(before) - len(before.lstrip())]
        code = before.split("#", 1)[0].rstrip()
        if code.endswith(":"):
            indent += INDENT
        elif code.strip().split(" ", 1)[0] in ("return", "pass", "break", "continue", "raise"):
            indent = indent[:-len(INDENT)]
        cursor.insertText("\n" + indent)
        self.editor.ensureCursorVisible()

    def _dedent_blank(self) -> bool:
        """Backspace in a line's indentation removes up to the previous indent stop."""
        cursor = self.editor.textCursor()
        before = cursor.block().text()[:cursor.positionInBlock()]
        if not before or before.strip(" "):
            return False
        cursor.movePosition(QTextCursor.Left, QTextCursor.KeepAnchor, (len(before) - 1) % len(INDENT) + 1)
        cursor.removeSelectedText()
        return True

    def _toggle_comment(self) -> None:
        texts = [self.editor.document().findBlockByNumber(number).text() for number in self._selected_blocks()]
        code = [text for text in texts if text.strip()]
        if not code:
            return
        if all(text.lstrip().startswith("#") for text in code):
            self._change_lines(_uncommented)
        else:
            column = min(len(text) - len(text.lstrip()) for text in code)
            self._change_lines(lambda text: text[:column] + "# " + text[column:] if text.strip() else text)

    def _selected_blocks(self) -> list[int]:
        """Numbers of the blocks the selection covers (the cursor's block without one)."""
        cursor = self.editor.textCursor()
        document = self.editor.document()
        first = document.findBlock(cursor.selectionStart()).blockNumber()
        end = document.findBlock(cursor.selectionEnd())
        last = end.blockNumber()
        if cursor.hasSelection() and last > first and cursor.selectionEnd() == end.position():
            last -= 1  # a selection ending at a line's start does not take that line
        return list(range(first, last + 1))

    def _change_lines(self, change: Callable[[str], str]) -> None:
        """Rewrite each selected line with ``change``, as one undo step, keeping the lines selected."""
        numbers = self._selected_blocks()
        document = self.editor.document()
        cursor = QTextCursor(document)
        cursor.beginEditBlock()
        for number in numbers:
            block = document.findBlockByNumber(number)
            new = change(block.text())
            if new != block.text():
                # Edit only the changed head or tail, so that cursors (and breakpoints) in the rest stay put.
                head = len(os.path.commonprefix([block.text(), new]))
                cursor.setPosition(block.position() + head)
                cursor.setPosition(block.position() + len(block.text()), QTextCursor.KeepAnchor)
                cursor.insertText(new[head:])
        cursor.endEditBlock()
        if len(numbers) > 1:
            selection = QTextCursor(document.findBlockByNumber(numbers[0]))
            last = document.findBlockByNumber(numbers[-1])
            selection.setPosition(last.position() + len(last.text()), QTextCursor.KeepAnchor)
            self.editor.setTextCursor(selection)


def edits(event: QKeyEvent) -> bool:
    """Whether ``event`` would change the text of an editable view."""
    return (event.key() in (Qt.Key_Return, Qt.Key_Enter, Qt.Key_Backspace, Qt.Key_Delete, Qt.Key_Tab)
            or any(event.matches(key) for key in (QKeySequence.Paste, QKeySequence.Cut, QKeySequence.Undo))
            or (event.text().isprintable() and bool(event.text()) and not event.modifiers() & Qt.ControlModifier))


def _uncommented(text: str) -> str:
    """``text`` without the ``#`` (and one space after it) that starts its code."""
    body = text.lstrip()
    if not body.startswith("#"):
        return text
    return text[:len(text) - len(body)] + body[2 if body.startswith("# ") else 1:]
