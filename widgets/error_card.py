"""The card that shows an autograd error: PyTorch's message, what it means, the fix and the lesson to read."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QFontDatabase, QPalette
from PySide6.QtWidgets import QFrame, QLabel, QPushButton, QVBoxLayout, QWidget

from widgets.watch_view import blend, readable_color


def lesson_title(stem: str) -> str:
    """``09_retain_graph`` → ``lesson 09: retain_graph``."""
    number, _, rest = stem.partition("_")
    return f"lesson {number}: {rest}" if rest else f"lesson {stem}"


class ErrorCard(QFrame):
    """What went wrong, as a learner needs it: PyTorch's message, the meaning, the fix, the lesson."""

    lesson_requested = Signal(str)
    """The learner clicked the lesson link; carries the lesson's file stem."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("error_card")
        base = self.palette().color(QPalette.ColorRole.Base)
        border = readable_color("#c62828", "#ff8a80")
        self.setStyleSheet(f"QFrame#error_card {{ background: {blend(base, border, 0.08).name()}; "
                           f"border: 1px solid {border.name()}; border-left: 4px solid {border.name()}; "
                           "border-radius: 4px; }")
        self.title = QLabel()
        self.title.setStyleSheet(f"font-weight: bold; color: {border.name()};")
        self.message = QLabel()
        self.message.setObjectName("error_message")
        self.message.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.message.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.message.setToolTip("PyTorch's own message: select it to copy it")
        self.explanation = QLabel()
        self.fix = QLabel()
        self.lesson_link = QPushButton()
        self.lesson_link.setFlat(True)
        self.lesson_link.setCursor(Qt.CursorShape.PointingHandCursor)
        link = self.palette().color(QPalette.ColorRole.Link).name()
        self.lesson_link.setStyleSheet(f"QPushButton {{ color: {link}; text-decoration: underline; "
                                       "text-align: left; border: none; padding: 0; }")
        self.lesson_link.clicked.connect(self._on_lesson_link_clicked)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(10, 8, 10, 8)
        for label in (self.title, self.message, self.explanation, self.fix):
            label.setWordWrap(True)
            layout.addWidget(label)
        layout.addWidget(self.lesson_link, 0, Qt.AlignmentFlag.AlignLeft)
        self._lesson: str | None = None

    def show_error(self, error: Mapping[str, Any]) -> None:
        """Fill the card from an engine error dict (``type``, ``message``, ``explanation``, ``fix``, ``lesson``)."""
        self.title.setText(f"{error.get('type', 'Error')}: PyTorch said")
        self.message.setText(error.get("message", ""))
        explanation = error.get("explanation") or ""
        versions = error.get("versions")
        if versions:
            explanation += (f" (saved at version {versions['expected']}, "
                            f"now at version {versions['found']})")
        self.explanation.setText(explanation)
        self.fix.setText(f"<b>Fix:</b> {error['fix']}" if error.get("fix") else "")
        self.fix.setVisible(bool(error.get("fix")))
        self._lesson = error.get("lesson")
        self.lesson_link.setVisible(self._lesson is not None)
        if self._lesson:
            self.lesson_link.setText(f"Open {lesson_title(self._lesson)}")

    def _on_lesson_link_clicked(self) -> None:
        if self._lesson:
            self.lesson_requested.emit(self._lesson)
