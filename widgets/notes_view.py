"""The lesson notes: the notes of the section the current line is in, in the chosen language."""

from __future__ import annotations

import re

from PySide6.QtGui import (
    QFont,
    QResizeEvent,
    QTextBlock,
    QTextCharFormat,
    QTextCursor,
    QTextDocument,
    QTextFormat,
    QTextOption,
)
from PySide6.QtWidgets import QTextBrowser, QVBoxLayout, QWidget

from app.code_lines import prints_only
from app.i18n import tr
from app.lesson_format import Lesson, LessonFormatError, Section, notes_after, notes_for_line, parse_lesson
from app.shown_step import Step

#: Characters that Chinese and Japanese text runs together without spaces: CJK ideographs,
#: kana, CJK punctuation and the full-width forms (，。：（） and the rest).
_CJK = re.compile(
    "[\u3000-\u303f\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\ufe30-\ufe4f\uff00-\uffef\U00020000-\U0002fa1f]"
)
#: A line that starts a Markdown block of its own (list item, heading, quote, fence, table
#: row, rule), so it is never a continuation of the line before.
_BLOCK_START = re.compile(r"\s*(?:[-*+]\s|\d+[.)]\s|#{1,6}(?:\s|$)|>|```|~~~|\||(?:[-*_=]\s*){3,}$)")
#: A line after which a new line cannot continue the same paragraph.
_BLOCK_END = re.compile(r"\s*(?:#{1,6}(?:\s|$)|```|~~~|\||(?:[-*_=]\s*){3,}$)")
_FENCE = re.compile(r"\s*(?:```|~~~)")
#: An inline code span, which may go on over a line break of its paragraph: its backticks and what they hold.
_CODE_SPAN = re.compile(r"(`+)((?:[^`\n]|\n(?![ \t]*\n))+?)\1")
#: Where inline code may wrap besides a space: after '.', '(', ',' or '=' (a zero-width space marks it).
_CODE_BREAK = re.compile(r"(?<=[^\s.])([.(,=])(?=\S)")  # not a leading '.' (``.grad`` stays whole)
#: A name longer than a list item's line of the ~190 px column holds (``register_post_accumulate_grad_hook``).
_LONG_NAME = re.compile(r"\w{20,}")
#: Where such a name may wrap: after an underscore, or between a lower-case letter and a capital.
_NAME_BREAK = re.compile(r"(?<=[^\W_])_(?=[^\W_])|(?<=[a-z])(?=[A-Z])")
ZERO_WIDTH_SPACE = "\u200b"
#: A heading line without inline code: its names wrap as inline code does (``# torch.autograd.grad``).
_HEADING = re.compile(r"(\s*#{1,6}\s+)(.*)")
#: Font size steps of the headings by level (Qt's Markdown gives +3, +2, +1), each made smaller
#: while a line break cuts one of its words: in a column of 190 px a level-1 heading at +3 broke
#: "Backpropagatio / n".
HEADING_SIZES = {1: 2, 2: 1, 3: 0}
#: How far a list item is indented (Qt's 40 px left a list item 128 of the column's 168 px).
LIST_INDENT = 18


def join_wrapped_lines(markdown: str) -> str:
    """``markdown`` with each wrapped line that meets CJK text joined to the line before.

    Markdown turns the line break inside a paragraph into a space, which is right between
    English words and wrong in Chinese: a note wrapped as "依赖它的" / "结果" would show
    "依赖它的 结果". When the end of one line or the start of the next is a CJK character or
    full-width punctuation, the two are joined with nothing between them. A line that starts
    a block (a list item, heading, quote, fence, table row or rule) is never joined to the
    line before; a heading, table row, rule or a line ending in a hard break never takes the
    next one; lines inside a fenced code block are left as they are.
    """
    lines = markdown.split("\n")
    out: list[str] = []
    in_fence = False
    joinable = False  # whether the last line in ``out`` is paragraph text a line may continue
    for line in lines:
        if _FENCE.match(line):
            in_fence = not in_fence
            out.append(line)
            joinable = False
            continue
        if in_fence:
            out.append(line)
            continue
        text = line.strip()
        if (
            joinable
            and text
            and not _BLOCK_START.match(line)
            and (_CJK.match(out[-1].rstrip()[-1]) or _CJK.match(text[0]))
        ):
            out[-1] = out[-1].rstrip() + text
        else:
            out.append(line)
        last = out[-1]
        joinable = (
            bool(last.strip()) and not _BLOCK_END.match(last) and not (last.endswith("  ") or last.endswith("\\"))
        )
    return "\n".join(out)


def breakable_code(markdown: str) -> str:
    """``markdown`` with a zero-width space after each '.', '(', ',' and '=' inside inline code.

    The notes column is ~190 px wide and the notes wrap only at word boundaries, so a name is never cut
    (``torch.is_grad_enabl`` / ``ed()``); these are the places a long call may wrap instead:
    ``torch.`` / ``is_grad_enabled()``. A name of 20 characters or more, which may not fit a list item's line
    at all, may also wrap after an underscore or before a capital inside it
    (``register_post_`` / ``accumulate_grad_hook``). A heading's names wrap the same way (a heading
    of larger type, ``# torch.autograd.grad``, ran past the column). Fenced code blocks are left as written.
    """
    chunks, prose, in_fence = [], [], False  # prose: the lines since the last fence, spans may span them
    for line in markdown.split("\n"):
        if _FENCE.match(line) or in_fence:
            if prose:
                chunks.append(_CODE_SPAN.sub(_breakable_span, "\n".join(prose)))
                prose = []
            chunks.append(line)
            in_fence = in_fence != bool(_FENCE.match(line))
        else:
            heading = _HEADING.match(line)
            prose.append(heading[1] + _breakable(heading[2]) if heading and "`" not in line else line)
    if prose:
        chunks.append(_CODE_SPAN.sub(_breakable_span, "\n".join(prose)))
    return "\n".join(chunks)


def _breakable_span(span: re.Match[str]) -> str:
    return span[1] + _breakable(span[2]) + span[1]


def _breakable(code: str) -> str:
    """``code`` with a zero-width space where it may wrap (see :func:`breakable_code`)."""
    # after the underscore, or before the capital (where the match is empty)
    code = _LONG_NAME.sub(lambda name: _NAME_BREAK.sub(rf"\g<0>{ZERO_WIDTH_SPACE}", name[0]), code)
    return _CODE_BREAK.sub(rf"\1{ZERO_WIDTH_SPACE}", code)


class NotesView(QWidget):
    """Shows a lesson's notes as Markdown; follows the line being run.

    After a prediction's verdict it shows the note after the predicted line, which tells the
    answer, until the run leaves the lines between the two (the verdict says "the notes explain why").
    When another question comes before that note, the note waits for that question's verdict: it
    tells both answers.
    """

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.browser = QTextBrowser(self)
        self.browser.setAccessibleName(tr("Lesson notes"))
        self.browser.setOpenExternalLinks(False)
        # Only at word boundaries (Qt's default also breaks anywhere in a word wider than the room left,
        # which cut names in two): inline code gets its own break opportunities (breakable_code).
        self.browser.setWordWrapMode(QTextOption.WrapMode.WordWrap)
        self.browser.document().setIndentWidth(LIST_INDENT)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.browser)
        self.lesson: Lesson | None = None
        self.language = "en"
        self._line = 1
        self._explaining: tuple[int, Section] | None = None
        """(predicted line, the note after it) while that note is shown in place of the line's own."""
        self._shown = ""
        self._source = ""
        self.set_source("")

    def set_source(self, text: str) -> None:
        """Read the notes of a lesson's text (any file without notes shows a hint)."""
        try:
            self.lesson = parse_lesson(text) if "# %% [markdown]" in text else None
        except LessonFormatError:
            self.lesson = None
        self._source = text
        self._line = 1
        self._explaining = None
        self._render()

    def set_language(self, language: str) -> None:
        """Show the notes in ``language`` ("en" or "zh")."""
        self.language = language
        self.browser.setAccessibleName(tr("Lesson notes"))
        self._render()

    def show_step(self, step: Step) -> None:
        """Follow the step in view to its section."""
        if step.snapshot is not None and step.snapshot["line"] != self._line:
            self.show_line(step.snapshot["line"])

    def show_line(self, line: int) -> None:
        """Show the notes of the section ``line`` is in."""
        self._line = line
        if self._explaining is not None and not self._explaining[0] < line < self._explaining[1].start_line:
            self._explaining = None
        self._render()

    def explain(self, line: int, expression: str) -> None:
        """A prediction of ``expression`` asked on ``line`` has its verdict: show the note after that line early,
        when it is the explanation.

        It is when it names the expression and only prints run before it. A question in the middle
        of a cell keeps the cell's own notes, which the lines after it need (the note below is about
        what comes next: lesson 7's answer is in its last section), and the note below a second
        question would tell that one's answer before it is asked.
        """
        explanation = notes_after(self.lesson, line) if self.lesson is not None else None
        if explanation is None or not any(expression in text for text in explanation.text.values()) \
                or not prints_only(self._source, line, explanation.start_line):
            return
        if line < self._line < explanation.start_line:
            self._explaining = (line, explanation)
            self._render()

    @property
    def explaining(self) -> bool:
        """Whether the note shown is the one after a prediction's line, not the current line's."""
        return self._explaining is not None

    def text(self) -> str:
        """The Markdown shown now, with wrapped lines joined as :func:`join_wrapped_lines` does."""
        return self._shown

    def _render(self) -> None:
        if self.lesson is None:
            text = tr("This file has no lesson notes. Lessons put notes in `# %% [markdown]` cells; "
                      "see “Writing a lesson” in the README.")
        else:
            if self._explaining is not None:
                section = self._explaining[1]
                notes = section.text.get(self.language) or section.text.get("en", "")
            else:
                notes = notes_for_line(self.lesson, self._line, self.language)
            text = join_wrapped_lines(notes)
        if text != self._shown:
            self._shown = text
            self.browser.setMarkdown(breakable_code(text))
            bold_headings(self.browser.document())
            self._size_headings()

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        if event.size().width() != event.oldSize().width():
            self._size_headings()

    def _size_headings(self) -> None:
        """Give each heading the largest size of :data:`HEADING_SIZES` or below at which no word of it breaks
        or runs past the column (the notes wrap at word boundaries only: a word too wide is not cut)."""
        document = self.browser.document()
        document.setTextWidth(self.browser.viewport().width())  # laid out at the column's width now, not later
        block = document.begin()
        while block.isValid():
            level = block.blockFormat().headingLevel()
            for size in range(HEADING_SIZES.get(level, 0), -1, -1) if level else ():
                cursor = QTextCursor(block)
                cursor.movePosition(QTextCursor.MoveOperation.EndOfBlock, QTextCursor.MoveMode.KeepAnchor)
                step = QTextCharFormat()
                step.setProperty(QTextFormat.Property.FontSizeAdjustment, size)
                cursor.mergeCharFormat(step)
                document.documentLayout().blockBoundingRect(block)  # lays the block out
                if not broken_words(block) and not overflows(block):
                    break
            block = block.next()


def bold_headings(document: QTextDocument) -> None:
    """Make every heading bold to its end: Qt's Markdown reader drops the weight after a code span in a heading
    (``## A vector root needs a `gradient`: the vector-Jacobian product`` went plain after ``gradient``)."""
    bold = QTextCharFormat()
    bold.setFontWeight(QFont.Weight.Bold)
    block = document.begin()
    while block.isValid():
        if block.blockFormat().headingLevel():
            cursor = QTextCursor(block)
            cursor.movePosition(QTextCursor.MoveOperation.EndOfBlock, QTextCursor.MoveMode.KeepAnchor)
            cursor.mergeCharFormat(bold)
        block = block.next()


def overflows(block: QTextBlock) -> bool:
    """Whether a line of a laid-out ``block`` ends past the column's right edge (a word that does not fit it).

    The edge is the document's, not the line's: Qt widens a line to the word it cannot break.
    A full-width comma may hang into the document's margin; past the margin, text is cut.
    """
    layout, right = block.layout(), block.document().textWidth()
    return any(layout.position().x() + line.x() + line.naturalTextWidth() > right + 0.5
               for line in map(layout.lineAt, range(layout.lineCount())) if line.textLength())


def broken_words(block: QTextBlock) -> list[str]:
    """The words of a laid-out ``block`` that a line break cuts in two (``Backpropagatio`` / ``n``)."""
    text, layout = block.text(), block.layout()
    ends = (layout.lineAt(n).textStart() + layout.lineAt(n).textLength() for n in range(layout.lineCount() - 1))
    return [text[:end].split()[-1] + text[end:].split()[0] for end in ends
            if 0 < end < len(text) and f"{text[end - 1]}{text[end]}".isascii() and text[end - 1].isalnum()
            and text[end].isalnum()]
