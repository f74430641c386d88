"""The drill's question in the Backward panel's replay: the node about to fire, the answer line, the verdict.

Features
--------
* Asked by the panel before a backward function fires (:meth:`DrillView.ask`): the gradient the node
  receives, what it saved for backward and how many input gradients it sends, then one line for
  the answer (``[3, 4], [1, 2]``; ``None`` where no gradient flows). Enter or **Check** judges it,
  **Skip** or Esc goes on without an answer; an unreadable answer is explained, not judged.
* The verdict, right or not quite with the right values, stays in sight above the next question.
* Judging and recording are the model's (:class:`app.backward_drill.BackwardDrill`); the view shows
  them, in the interface's language.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Qt, Signal
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QLineEdit, QPushButton, QSizePolicy, QVBoxLayout, QWidget

from app.backward_drill import AnswerError, BackwardDrill, DrillQuestion, DrillVerdict, question_lines, verdict_text
from app.i18n import N_, tr
from widgets.colours import keep_readable, readable_color
from widgets.theme import follow_palette
from widgets.translated_texts import TranslatedTexts

SKIPPED = N_("Skipped {name}: not judged, nothing recorded.")


class DrillView(QFrame):
    """Shows :class:`BackwardDrill`'s open question and the last verdict; hidden when there is neither."""

    judged = Signal(object)
    """An answer was judged (and recorded in the progress); carries the :class:`DrillVerdict`."""
    skipped = Signal(object)
    """The learner went on without answering; carries the :class:`DrillQuestion`."""

    def __init__(self, drill: BackwardDrill, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.drill = drill
        self.setObjectName("backward_drill")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setStyleSheet("#backward_drill { background: palette(alternate-base); border: 1px solid #1e88e5; }")
        self._texts = TranslatedTexts()
        self._last: DrillVerdict | DrillQuestion | None = None  # the verdict shown, or the question skipped
        self._error: AnswerError | None = None  # why the answer typed could not be read
        self.verdict_label = QLabel()
        self.verdict_label.setObjectName("drill_verdict")
        self.verdict_label.setWordWrap(True)
        self.verdict_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.question_label = QLabel()
        self.question_label.setObjectName("drill_question")
        self.question_label.setWordWrap(True)
        self.question_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.answer_edit = QLineEdit()
        self.answer_edit.setObjectName("drill_answer")
        self.answer_edit.installEventFilter(self)
        self.answer_edit.returnPressed.connect(self._on_check_button_clicked)
        self.check_button = QPushButton()
        self._texts.set(self.check_button.setText, "Check")
        self._texts.set(self.check_button.setToolTip, "Judge the answer (Enter), then the node fires")
        self.check_button.clicked.connect(self._on_check_button_clicked)
        self.skip_button = QPushButton()
        self._texts.set(self.skip_button.setText, "Skip")
        self._texts.set(self.skip_button.setToolTip, "Let the node fire without answering (Esc): nothing is recorded")
        self.skip_button.clicked.connect(self._on_skip_button_clicked)
        for button in (self.check_button, self.skip_button):
            button.setSizePolicy(QSizePolicy.Policy.Maximum, QSizePolicy.Policy.Fixed)
        self.error_label = QLabel()
        self.error_label.setObjectName("drill_error")
        self.error_label.setWordWrap(True)
        keep_readable(self.error_label, "#b71c1c", "#ef9a9a")
        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.answer_edit, 1)
        row.addWidget(self.check_button)
        row.addWidget(self.skip_button)
        self._answer_row = QWidget()
        self._answer_row.setLayout(row)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 4, 6, 4)
        layout.setSpacing(3)
        for widget in (self.verdict_label, self.question_label, self._answer_row, self.error_label):
            layout.addWidget(widget)
        self._show()
        follow_palette(self, self._show)  # the verdict's colour, in the theme's

    @property
    def asking(self) -> bool:
        """Whether a question waits for its answer."""
        return self.drill.asking is not None

    def ask(self) -> None:
        """Show the model's open question (the last verdict stays above it) and put the focus on the answer."""
        self._error = None
        self.answer_edit.clear()
        self._show()
        self.answer_edit.setFocus()

    def close_question(self) -> None:
        """The replay moved elsewhere: the open question goes, unanswered; the last verdict stays."""
        self.drill.cancel()
        self._error = None
        self._show()

    def clear(self) -> None:
        """A new replay: no question, no verdict."""
        self.drill.cancel()
        self._last = self._error = None
        self._show()

    def retranslate(self) -> None:
        """Set every text again, in the current language."""
        self._texts.apply()
        self._show()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt override
        # Esc in the answer line skips: taken before any window shortcut on Esc (the prediction bar's) sees it.
        if watched is self.answer_edit and isinstance(event, QKeyEvent) and event.key() == Qt.Key.Key_Escape:
            if event.type() == QEvent.Type.ShortcutOverride:
                event.accept()
                return True
            if event.type() == QEvent.Type.KeyPress:
                self._on_skip_button_clicked()
                return True
        return super().eventFilter(watched, event)

    def _show(self) -> None:
        question = self.drill.asking
        last = self._last
        if isinstance(last, DrillVerdict):
            self.verdict_label.setText(verdict_text(last))
            color = readable_color("#2e7d32", "#a5d6a7") if last.right else readable_color("#b71c1c", "#ef9a9a")
            self.verdict_label.setStyleSheet(f"color: {color.name()};")
        elif last is not None:
            self.verdict_label.setText(tr(SKIPPED, name=last.name))
            self.verdict_label.setStyleSheet("color: palette(placeholder-text);")
        self.verdict_label.setVisible(last is not None)
        if question is not None:
            self.question_label.setText("\n".join(question_lines(question)))
            example = ", ".join(["[2, 4]", *["None"] * (question.count - 1)])  # the form, one value per input
            self.answer_edit.setPlaceholderText(tr("e.g. {example}", example=example))
        self.question_label.setVisible(question is not None)
        self._answer_row.setVisible(question is not None)
        self.error_label.setText("" if self._error is None else str(self._error))
        self.error_label.setVisible(question is not None and self._error is not None)
        self.setVisible(question is not None or last is not None)

    def _on_check_button_clicked(self) -> None:
        if self.drill.asking is None:
            return
        try:
            verdict = self.drill.answer(self.answer_edit.text())
        except AnswerError as exc:
            self._error = exc
            self._show()
            return
        self._last, self._error = verdict, None
        self._show()
        self.judged.emit(verdict)

    def _on_skip_button_clicked(self) -> None:
        question = self.drill.skip()
        if question is None:
            return
        self._last, self._error = question, None
        self._show()
        self.skipped.emit(question)
