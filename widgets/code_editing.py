"""The keys that edit Python like a small IDE, on a QPlainTextEdit: indent, dedent, new line, comment.

Tab inserts spaces to the next indent stop (indents a selection of lines), Shift+Tab dedents,
Enter keeps the indentation (one level more after a ``:``, one less after ``return``…),
Backspace in a line's indentation removes up to the previous stop, Ctrl+/ toggles comments.
Each change of several lines is one undo step and edits only the changed part of each line, so
the cursors a view keeps in the text (its breakpoints') stay put.
"""

from __future__ import annotations

import os
from collections.abc import Callable

from PySide6.QtCore import Qt
from PySide6.QtGui import QKeyEvent, QKeySequence, QTextCursor
from PySide6.QtWidgets import QPlainTextEdit

INDENT = "    "


def edit(view: QPlainTextEdit, event: QKeyEvent) -> bool:
    """Handle a key that edits like an IDE; False leaves the key to Qt."""
    key, modifiers = event.key(), event.modifiers()
    if key == Qt.Key_Tab and not modifiers & (Qt.ControlModifier | Qt.AltModifier):
        _indent(view)
    elif key == Qt.Key_Backtab:
        _change_lines(view, lambda text: text[min(len(text) - len(text.lstrip(" ")), len(INDENT)):])
    elif key in (Qt.Key_Return, Qt.Key_Enter) and not modifiers & Qt.ControlModifier:
        _new_line(view)
    elif key == Qt.Key_Backspace and not modifiers and not view.textCursor().hasSelection():
        return _dedent_blank(view)
    elif key == Qt.Key_Slash and modifiers & Qt.ControlModifier:
        _toggle_comment(view)
    else:
        return False
    return True


def would_edit(event: QKeyEvent) -> bool:
    """Whether ``event`` would change the text of an editable view."""
    return (event.key() in (Qt.Key_Return, Qt.Key_Enter, Qt.Key_Backspace, Qt.Key_Delete, Qt.Key_Tab)
            or any(event.matches(key) for key in (QKeySequence.Paste, QKeySequence.Cut, QKeySequence.Undo))
            or (event.text().isprintable() and bool(event.text()) and not event.modifiers() & Qt.ControlModifier))


def _indent(view: QPlainTextEdit) -> None:
    cursor = view.textCursor()
    if cursor.hasSelection() and len(_selected_blocks(view)) > 1:
        _change_lines(view, lambda text: INDENT + text if text.strip() else text)
    else:
        cursor.insertText(" " * (len(INDENT) - cursor.positionInBlock() % len(INDENT)))


def _new_line(view: QPlainTextEdit) -> None:
    """Break the line, keeping the indentation: one level more after a ``:``, one less after return/pass/..."""
    cursor = view.textCursor()
    before = cursor.block().text()[:cursor.positionInBlock()]
    indent = before[:len(before) - len(before.lstrip())]
    code = before.split("#", 1)[0].rstrip()
    if code.endswith(":"):
        indent += INDENT
    elif code.strip().split(" ", 1)[0] in ("return", "pass", "break", "continue", "raise"):
        indent = indent[:-len(INDENT)]
    cursor.insertText("\n" + indent)
    view.ensureCursorVisible()


def _dedent_blank(view: QPlainTextEdit) -> bool:
    """Backspace in a line's indentation removes up to the previous indent stop."""
    cursor = view.textCursor()
    before = cursor.block().text()[:cursor.positionInBlock()]
    if not before or before.strip(" "):
        return False
    cursor.movePosition(QTextCursor.Left, QTextCursor.KeepAnchor, (len(before) - 1) % len(INDENT) + 1)
    cursor.removeSelectedText()
    return True


def _toggle_comment(view: QPlainTextEdit) -> None:
    texts = [view.document().findBlockByNumber(number).text() for number in _selected_blocks(view)]
    code = [text for text in texts if text.strip()]
    if not code:
        return
    if all(text.lstrip().startswith("#") for text in code):
        _change_lines(view, _uncommented)
    else:
        column = min(len(text) - len(text.lstrip()) for text in code)
        _change_lines(view, lambda text: text[:column] + "# " + text[column:] if text.strip() else text)


def _selected_blocks(view: QPlainTextEdit) -> list[int]:
    """Numbers of the blocks the selection covers (the cursor's block without one)."""
    cursor = view.textCursor()
    document = view.document()
    first = document.findBlock(cursor.selectionStart()).blockNumber()
    end = document.findBlock(cursor.selectionEnd())
    last = end.blockNumber()
    if cursor.hasSelection() and last > first and cursor.selectionEnd() == end.position():
        last -= 1  # a selection ending at a line's start does not take that line
    return list(range(first, last + 1))


def _change_lines(view: QPlainTextEdit, change: Callable[[str], str]) -> None:
    """Rewrite each selected line with ``change``, as one undo step, keeping the lines selected."""
    numbers = _selected_blocks(view)
    document = view.document()
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
        view.setTextCursor(selection)


def _uncommented(text: str) -> str:
    """``text`` without the ``#`` (and one space after it) that starts its code."""
    body = text.lstrip()
    if not body.startswith("#"):
        return text
    return text[:len(text) - len(body)] + body[2 if body.startswith("# ") else 1:]
