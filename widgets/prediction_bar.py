"""The prediction bar over the code: "what will EXPR be after this line?", the answer, then right or wrong.

Features
--------
* Shown when the run pauses on a line that ends with ``# predict: EXPR``: a free answer
  (Enter runs the line) or one button per choice; "Skip" (or Esc) goes on without answering.
  Nothing else passes over an open question: the window's step keys wait for an answer or a skip.
* After the line ran, the verdict: right, or what the value is instead, and a pointer to the
  notes that explain it.
* In the interface's language (:mod:`app.i18n`), following View > Language.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QLineEdit, QPushButton, QSizePolicy, QVBoxLayout, QWidget

from app.coach import CheckResult, Verdict
from app.i18n import N_, tr
from app.lesson_format import Prediction

#: The bar's texts (English msgids, translated by :func:`app.i18n.tr` where they are shown).
TEXTS = {
    "question": N_("Predict before this line runs: what will <code>{expr}</code> evaluate to after it?"),
    "placeholder": N_("Your answer, e.g. 3, True, [1, 2]"),
    "answer_tip": N_("Your answer: a number, True/False, None, a list, a name such as MulBackward0…"),
    "run": N_("Run the line"),
    "skip": N_("Skip"),
    "close": N_("Close"),
    "right": N_("✓ Right: <code>{expr}</code> is <code>{value}</code>."),
    "wrong": N_("✗ Not quite: you said <code>{answer}</code>; <code>{expr}</code> is <code>{value}</code>. "
                "The notes explain why."),
    "failed": N_("<code>{expr}</code> could not be evaluated here: {value}"),
    "run_tip": N_("Run this line (as Step Over does), then see whether your answer was right (Enter)"),
    "skip_tip": N_("Go on without predicting (Esc); the line does not run yet"),
    "check_passed": N_("Try it {n}: ✓ done ({expr})"),
    "check_missing": N_("Try it {n}: ✗ not yet: still false: {missing}"),
    "check_untried": N_("Try it {n}: not tried yet: the notes' “Try it {n}” says what to change in the lesson"),
    "check_done_before": N_("Try it {n}: ✓ done in an earlier run ({expr} is false in this one)"),
    "check_failed": N_("Try it {n}: the check {expr} raised {error}"),
}


def verdict_text(verdict: Verdict) -> str:
    """The verdict as one line of plain text (for the console), in the interface's language."""
    key = "failed" if verdict.right is None else "right" if verdict.right else "wrong"
    html = tr(TEXTS[key], expr=verdict.prediction.expression, value=verdict.value, answer=verdict.answer)
    return html.replace("<code>", "").replace("</code>", "")


def check_text(result: CheckResult, untried: bool = False) -> str:
    """An exercise check's result as one line of plain text, in the interface's language.

    ``untried``: the run was of the lesson as it comes, so an exercise not done is not tried yet
    (its check's expression, the course's own code, is no hint then).
    """
    if result.passed is None:
        key = "check_failed"
    elif result.passed:
        key = "check_passed"
    else:
        key = "check_done_before" if result.done_before else "check_untried" if untried else "check_missing"
    return tr(TEXTS[key], n=result.check.exercise, expr=result.check.expression, error=result.error,
              missing=result.missing or result.check.expression)


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


class PredictionBar(QFrame):
    """Asks for a prediction, then shows the verdict; hidden otherwise."""

    answered = Signal(str)
    """The learner answered (free text or a choice): run the line, then judge it."""
    skipped = Signal(object)
    """The learner chose to go on without predicting the :class:`~app.lesson_format.Prediction` asked."""
    asking_changed = Signal(bool)
    """A question opened (True) or closed (False): answered, skipped, or the bar dismissed."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("prediction_bar")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setStyleSheet("#prediction_bar { background: palette(alternate-base); border: 1px solid #1e88e5; }")
        self.prediction: Prediction | None = None
        """The prediction asked (None when no question is open)."""
        self.verdict: Verdict | None = None
        """The last verdict shown (it stays beside the next question)."""
        self.verdict_label = QLabel(self)
        self.verdict_label.setWordWrap(True)
        self.question = QLabel(self)
        self.question.setWordWrap(True)
        self.question.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)
        self.answer_edit = QLineEdit(self)
        self.run_button = QPushButton(self)
        self.skip_button = QPushButton(self)
        self.close_button = QPushButton(self)
        self._choices = QHBoxLayout()
        self._choice_buttons: list[QPushButton] = []
        row = QHBoxLayout()
        row.addLayout(self._choices)
        row.addWidget(self.answer_edit, 4)
        row.addWidget(self.run_button)
        row.addWidget(self.skip_button)
        row.addWidget(self.close_button)
        row.addStretch(1)  # buttons keep their own width; a free answer's line takes the rest
        for button in (self.run_button, self.skip_button, self.close_button):
            button.setSizePolicy(QSizePolicy.Policy.Maximum, QSizePolicy.Policy.Fixed)
            button.setAutoDefault(True)  # Enter picks the choice with the focus, as the status bar says (Space did)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 6, 8, 6)
        layout.setSpacing(4)
        layout.addWidget(self.verdict_label)
        layout.addWidget(self.question)
        layout.addLayout(row)
        self.answer_edit.returnPressed.connect(self._on_run_button_clicked)
        self.run_button.clicked.connect(self._on_run_button_clicked)
        self.skip_button.clicked.connect(self._on_skip_button_clicked)
        self.close_button.clicked.connect(self.dismiss)
        # Esc anywhere in the window skips, so a learner at the keyboard need not reach for the mouse.
        self._skip_shortcut = QShortcut(QKeySequence(Qt.Key.Key_Escape), self, self._on_skip_button_clicked,
                                        context=Qt.ShortcutContext.WindowShortcut)
        self._skip_shortcut.setEnabled(False)
        self._retranslate()
        self.hide()

    @property
    def asking(self) -> bool:
        """Whether a question waits for its answer."""
        return self.isVisible() and self.prediction is not None

    def ask(self, prediction: Prediction) -> None:
        """Ask ``prediction``'s question."""
        self.prediction, self.verdict = prediction, None
        self._drop_choices()
        for choice in prediction.choices:
            button = QPushButton(choice, self)
            button.setSizePolicy(QSizePolicy.Policy.Maximum, QSizePolicy.Policy.Fixed)
            button.setAutoDefault(True)  # Enter picks the choice with the focus, as the status bar says (Space did)
            button.clicked.connect(lambda _checked=False, c=choice: self.answered.emit(c))
            self._choices.addWidget(button)
            self._choice_buttons.append(button)
        self.answer_edit.clear()
        self._retranslate()
        self.show()
        self.focus_answer()
        self.asking_changed.emit(True)

    def focus_answer(self) -> None:
        """Put the keyboard focus where the open question is answered."""
        (self._choice_buttons[0] if self._choice_buttons else self.answer_edit).setFocus()

    def show_verdict(self, verdict: Verdict) -> None:
        """Say whether the answer was right, once the line has run (above the next question, if one is open)."""
        self.verdict = verdict
        self._retranslate()
        self.show()

    def dismiss(self) -> None:
        """Close the bar: no open question, no verdict."""
        was_asking = self.prediction is not None
        self.prediction = self.verdict = None
        self._drop_choices()
        self.hide()
        if was_asking:
            self.asking_changed.emit(False)

    def _drop_choices(self) -> None:
        """Take the last question's choice buttons out at once (deleted later, out of sight meanwhile)."""
        for button in self._choice_buttons:
            button.hide()
            self._choices.removeWidget(button)
            button.deleteLater()
        self._choice_buttons = []

    def retranslate(self) -> None:
        """Set the bar's texts again, in the current language."""
        self._retranslate()

    def _retranslate(self) -> None:
        texts = {key: tr(text) for key, text in TEXTS.items()}
        self.answer_edit.setPlaceholderText(texts["placeholder"])  # short enough to read whole at 1280
        self.answer_edit.setToolTip(texts["answer_tip"])
        self.run_button.setText(texts["run"])
        self.run_button.setToolTip(texts["run_tip"])
        self.skip_button.setText(texts["skip"])
        self.skip_button.setToolTip(texts["skip_tip"])
        self.close_button.setText(texts["close"])
        verdict, prediction = self.verdict, self.prediction
        free = prediction is not None and not prediction.choices
        self.answer_edit.setVisible(free)
        self.run_button.setVisible(free)
        self.skip_button.setVisible(prediction is not None)
        self._skip_shortcut.setEnabled(prediction is not None)
        self.close_button.setVisible(prediction is None and verdict is not None)
        self.question.setVisible(prediction is not None)
        if prediction is not None:
            self.question.setText(tr(TEXTS["question"], expr=_escape(prediction.expression)))
        self.verdict_label.setVisible(verdict is not None)
        if verdict is not None:
            key = "failed" if verdict.right is None else "right" if verdict.right else "wrong"
            self.verdict_label.setText(tr(TEXTS[key], expr=_escape(verdict.prediction.expression),
                                          value=_escape(verdict.value), answer=_escape(verdict.answer)))

    def _on_run_button_clicked(self) -> None:
        answer = self.answer_edit.text().strip()
        if answer:
            self.answered.emit(answer)

    def _on_skip_button_clicked(self) -> None:
        prediction = self.prediction
        if prediction is None or not self.isVisible():
            return
        self.dismiss()
        self.skipped.emit(prediction)
