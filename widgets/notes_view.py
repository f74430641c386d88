"""The lesson notes: the notes of the section the current line is in, in the chosen language."""

from __future__ import annotations

from PySide6.QtWidgets import QTextBrowser, QVBoxLayout, QWidget

from app.lesson_format import Lesson, LessonFormatError, notes_for_line, parse_lesson


class NotesView(QWidget):
    """Shows a lesson's notes as Markdown; follows the line being run."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.browser = QTextBrowser(self)
        self.browser.setOpenExternalLinks(False)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.browser)
        self.lesson: Lesson | None = None
        self.language = "en"
        self._line = 1
        self._shown = ""
        self.set_source("")

    def set_source(self, text: str) -> None:
        """Read the notes of a lesson's text (any file without notes shows a hint)."""
        try:
            self.lesson = parse_lesson(text) if "# %% [markdown]" in text else None
        except LessonFormatError:
            self.lesson = None
        self._line = 1
        self._render()

    def set_language(self, language: str) -> None:
        """Show the notes in ``language`` ("en" or "zh")."""
        self.language = language
        self._render()

    def show_line(self, line: int) -> None:
        """Show the notes of the section ``line`` is in."""
        self._line = line
        self._render()

    def text(self) -> str:
        """The Markdown shown now."""
        return self._shown

    def _render(self) -> None:
        if self.lesson is None:
            text = ("This file has no lesson notes. Lessons put notes in `# %% [markdown]` cells; "
                    "see “Writing a lesson” in the README." if self.language == "en" else
                    "此文件没有课程笔记。课程把笔记写在 `# %% [markdown]` 单元中，参见 README 中的“编写课程”。")
        else:
            text = notes_for_line(self.lesson, self._line, self.language)
        if text != self._shown:
            self._shown = text
            self.browser.setMarkdown(text)
