"""The card that shows an autograd error: PyTorch's message, what it means, the fix and the lesson to read."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QColor, QFontDatabase, QGuiApplication, QPalette
from PySide6.QtWidgets import QFrame, QLabel, QPushButton, QVBoxLayout, QWidget

from app.i18n import error_texts, tr
from widgets.colours import blend, readable_color
from widgets.theme import follow_palette


def lesson_title(stem: str) -> str:
    """``09_retain_graph`` → ``lesson 09: retain_graph``."""
    number, _, rest = stem.partition("_")
    return tr("lesson {number}: {name}", number=number, name=rest) if rest else tr("lesson {stem}", stem=stem)


class ErrorCard(QFrame):
    """What went wrong, as a learner needs it: PyTorch's message, the meaning, the fix, the lesson."""

    lesson_requested = Signal(str)
    """The learner clicked the lesson link; carries the lesson's file stem."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("error_card")
        self.title = QLabel()
        self.message = QLabel()
        self.message.setObjectName("error_message")
        self.message.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.message.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self._error: Mapping[str, Any] = {}
        self._call: str | None = None
        self.explanation = QLabel()
        self.fix = QLabel()
        self.lesson_link = QPushButton()
        self.lesson_link.setFlat(True)
        self.lesson_link.setCursor(Qt.CursorShape.PointingHandCursor)
        self._restyle()
        follow_palette(self, self._restyle)
        self.lesson_link.clicked.connect(self._on_lesson_link_clicked)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(10, 8, 10, 8)
        for label in (self.title, self.message, self.explanation, self.fix):
            label.setWordWrap(True)
            layout.addWidget(label)
        layout.addWidget(self.lesson_link, 0, Qt.AlignmentFlag.AlignLeft)
        self._lesson: str | None = None
        self.retranslate()

    def _restyle(self) -> None:
        """A red border and title on a faint red of the theme's base, the link in its link colour."""
        palette = QGuiApplication.palette()
        border = readable_color("#c62828", "#ff8a80").name()
        background = blend(palette.color(QPalette.ColorRole.Base), QColor(border), 0.08).name()
        self.setStyleSheet(f"QFrame#error_card {{ background: {background}; border: 1px solid {border}; "
                           f"border-left: 4px solid {border}; border-radius: 4px; }}")
        self.title.setStyleSheet(f"font-weight: bold; color: {border};")
        link = palette.color(QPalette.ColorRole.Link).name()
        self.lesson_link.setStyleSheet(f"QPushButton {{ color: {link}; text-decoration: underline; "
                                       "text-align: left; border: none; padding: 0; }")

    def retranslate(self) -> None:
        """Show the card's texts again in the current language (PyTorch's own message stays as it is)."""
        self.message.setToolTip(tr("PyTorch's own message: select it to copy it"))
        if self._error:
            self.show_error(self._error, self._call)

    def show_error(self, error: Mapping[str, Any], call: str | None = None) -> None:
        """Fill the card from an engine error dict (``type``, ``message``, ``explanation``, ``fix``, ``lesson``);
        ``call`` names what raised it (``loss.backward()``), so a card kept from an earlier pause still says."""
        self._error, self._call = error, call
        kind = error.get("type", "Error")
        self.title.setText(tr("{call} raised {type}; PyTorch said", call=call, type=kind) if call
                           else tr("{type}: PyTorch said", type=kind))
        self.message.setText(error.get("message", ""))
        explanation, fix = error_texts(error)
        versions = error.get("versions")
        if versions:
            explanation += tr(" (saved at version {expected}, now at version {found})",
                              expected=versions["expected"], found=versions["found"])
        self.explanation.setText(explanation)
        self.fix.setText(tr("<b>Fix:</b> {fix}", fix=fix) if fix else "")
        self.fix.setVisible(bool(fix))
        self._lesson = error.get("lesson")
        self.lesson_link.setVisible(self._lesson is not None)
        if self._lesson:
            self.lesson_link.setText(tr("Open {lesson}", lesson=lesson_title(self._lesson)))

    def _on_lesson_link_clicked(self) -> None:
        if self._lesson:
            self.lesson_requested.emit(self._lesson)
