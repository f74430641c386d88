"""The Lesson notes panel: wrapped Chinese notes read as one line, with no stray spaces."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from PySide6.QtGui import QTextCursor
from test_layout import iter_blocks

from app.lesson_format import parse_lesson
from widgets.notes_view import NotesView, join_wrapped_lines, overflows

LESSONS = Path(__file__).resolve().parent.parent / "lessons"

WRAPPED = """\
# %% [markdown]
# [en]
# # Wrapping
# A note whose lines are wrapped
# in the middle of a sentence.
# [zh]
# # 换行
# 对负数取 `torch.log` 不会抛出异常，之后所有依赖它的
# 结果都会变成 NaN。
#
# - 单步执行 `logged = torch.log(shifted)`，查看 `logged`：
#   `shifted` 中为负的位置变成了 `nan`，
#   但程序照常往下运行。
# - 第二项
# ## 小标题
# 标题后面的段落

# %%
x = 1
"""


@pytest.fixture
def view(qtbot):
    widget = NotesView()
    qtbot.addWidget(widget)
    widget.set_source(WRAPPED)
    return widget


def shown(widget: NotesView) -> list[str]:
    """The notes as the learner reads them, one entry per paragraph, item or heading."""
    return widget.browser.toPlainText().replace("\u200b", "").splitlines()  # without the break opportunities


def test_wrapped_chinese_lines_join_without_a_space(view):
    view.set_language("zh")
    assert shown(view) == [
        "换行",
        "对负数取 torch.log 不会抛出异常，之后所有依赖它的结果都会变成 NaN。",
        "单步执行 logged = torch.log(shifted)，查看 logged：shifted 中为负的位置变成了 nan，但程序照常往下运行。",
        "第二项",
        "小标题",
        "标题后面的段落",
    ]


def test_wrapped_english_lines_still_join_with_a_space(view):
    view.set_language("en")
    assert shown(view) == ["Wrapping", "A note whose lines are wrapped in the middle of a sentence."]


def test_the_markdown_shown_keeps_list_items_and_headings_apart(view):
    view.set_language("zh")
    text = view.text()
    assert "依赖它的结果都会变成 NaN。" in text
    assert "\n- 第二项\n## 小标题\n标题后面的段落" in text
    assert view.browser.toMarkdown().count("- ") == 2


def test_a_fenced_code_block_is_left_as_written():
    notes = "说明：\n```\n甲\n乙\n```\n结尾"
    assert join_wrapped_lines(notes) == notes


LESSON_FILES = sorted(LESSONS.glob("[0-9][0-9]_*.py"))
CJK = "[\u3000-\u303f\u4e00-\u9fff\uff00-\uffef]"
IDEOGRAPH, LATIN = "[\u4e00-\u9fff]", "[A-Za-z0-9]"


def count_per_section(path: Path, pattern: re.Pattern[str]) -> list[tuple[int, int, int]]:
    """For each notes cell: its line, the matches in the Chinese source lines, the matches shown."""
    widget = NotesView()
    widget.set_language("zh")
    widget.set_source(path.read_text(encoding="utf-8"))
    counts = []
    for section in parse_lesson(path).notes:
        widget.show_line(section.start_line)
        # Markdown drops the backticks and asterisks, so they are dropped from the source too.
        lines = [re.sub(r"[`*]", "", line) for line in section.text["zh"].splitlines()]
        typed = sum(len(pattern.findall(line)) for line in lines)
        counts.append((section.start_line, typed, len(pattern.findall(widget.browser.toPlainText()))))
    widget.deleteLater()
    return counts


@pytest.mark.parametrize("path", LESSON_FILES, ids=lambda p: p.stem)
def test_no_lesson_shows_a_space_its_chinese_notes_do_not_have(qtbot, path):
    """Every space between two CJK characters in the panel is one the author typed."""
    for line, typed, shown_count in count_per_section(path, re.compile(f"(?={CJK} {CJK})")):
        assert shown_count <= typed, f"notes cell at line {line}"


@pytest.mark.parametrize("path", LESSON_FILES, ids=lambda p: p.stem)
def test_no_lesson_loses_the_space_between_chinese_and_latin_at_a_line_break(qtbot, path):
    """A wrapped line joins without a space, so no Chinese note wraps between a word and Latin text."""
    touching = re.compile(f"(?={IDEOGRAPH}{LATIN}|{LATIN}{IDEOGRAPH})")
    for line, typed, shown_count in count_per_section(path, touching):
        assert shown_count <= typed, f"notes cell at line {line}"


IDENTIFIER = re.compile(r"[A-Za-z0-9_]")


def broken_identifiers(document) -> list[str]:
    """The words of ``document`` that a line break cuts inside a name (``torch.is_grad_enabl`` / ``ed()``)."""
    broken = []
    for block in iter_blocks(document):
        text, layout = block.text(), block.layout()
        for n in range(layout.lineCount() - 1):
            end = layout.lineAt(n).textStart() + layout.lineAt(n).textLength()
            if 0 < end < len(text) and IDENTIFIER.match(text[end - 1]) and IDENTIFIER.match(text[end]):
                broken.append(f"{text[max(0, end - 12):end]} / {text[end:end + 12]}")
    return broken


def cut_prose(document) -> list[str]:
    """The blocks of prose in ``document`` with a line past the column (code blocks and tables scroll sideways)."""
    return [block.text()[:60] for block in iter_blocks(document)
            if not block.blockFormat().nonBreakableLines() and QTextCursor(block).currentTable() is None
            and overflows(block)]


@pytest.mark.parametrize("language", ["zh", "en"])
@pytest.mark.parametrize("size", [(1280, 800), (1600, 1000)], ids=["1280", "1600"])
def test_inline_code_in_the_notes_never_breaks_inside_a_name(qtbot, open_window, size, language):
    """Lesson 6 at 1600×1000 in Chinese broke ``torch.is_grad_enabl / ed()`` in the ~190 px notes column:
    inline code wraps only at a space, '.', '(' or ','."""
    lesson = LESSONS / "06_no_grad.py"
    window = open_window(lesson, size)
    window.set_language(language)
    window.docks["notes"].raise_()
    notes, browser = window.notes_view, window.notes_view.browser
    qtbot.waitUntil(lambda: browser.isVisible() and browser.viewport().width() > 0)
    assert browser.viewport().width() < 260  # the narrow column
    shown_code = False
    for section in parse_lesson(lesson).notes:
        notes.show_line(section.start_line)
        document = browser.document()
        document.documentLayout().documentSize()  # laid out at the column's width
        assert broken_identifiers(document) == [], section.start_line
        shown_code = shown_code or "torch.is_grad_enabled()" in browser.toPlainText().replace("\u200b", "")
        assert cut_prose(document) == []  # nor does a word run past the column
    assert shown_code


@pytest.mark.parametrize("language", ["zh", "en"])
@pytest.mark.parametrize("size", [(1280, 800), (1600, 1000)], ids=["1280", "1600"])
def test_no_note_of_any_lesson_runs_past_the_column(qtbot, open_window, size, language):
    """Lesson 14 at 1600×1000 in Chinese cut ``register_post_accumulate_g`` at the column's edge,
    with a sideways scroll bar under the notes: every section of every lesson fits the column."""
    window = open_window(LESSON_FILES[0], size)
    window.set_language(language)
    window.docks["notes"].raise_()
    notes, browser = window.notes_view, window.notes_view.browser
    qtbot.waitUntil(lambda: browser.isVisible() and browser.viewport().width() > 0)
    cut = []
    for lesson in LESSON_FILES:
        window.open_file(lesson)
        for section in parse_lesson(lesson).notes:
            notes.show_line(section.start_line)
            document = browser.document()
            document.documentLayout().documentSize()
            cut += [f"{lesson.stem}:{section.start_line}: {text}" for text in cut_prose(document)]
            assert broken_identifiers(document) == [], (lesson.stem, section.start_line)
    assert cut == []


@pytest.mark.parametrize(("lesson", "line", "expression", "heading", "early"), [
    ("07_backward.py", 104, "w.grad", "## Non-leaf tensors", False),  # its answer is in the last section
    ("11_inplace_version.py", 108, "s._version", "## When the graph needs the old value", False),  # 11 lines follow
    ("20_be_the_engine.py", 149, "z.grad", "## Why `+=`", True),  # a print, then the note about z.grad
    ("03_loops.py", 99, "nodes", "## What the loop built", True),
])
def test_a_verdict_shows_the_note_below_early_only_when_it_explains_the_answer(view, lesson, line, expression,
                                                                                heading, early):
    """After lesson 7's question on loss2.backward() the notes jumped to the next section, about something else,
    and after lesson 11's the bullets for the 11 lines still to run were gone."""
    path = Path(__file__).resolve().parent.parent / "lessons" / lesson
    view.set_source(path.read_text(encoding="utf-8"))
    view.show_line(line + 1)
    before = view.text()
    view.explain(line, expression)
    assert view.explaining is early
    assert (heading in view.text()) if early else (view.text() == before and heading in before)


def test_a_heading_stays_bold_after_its_inline_code(qtbot):
    """Lesson 07's "A vector root needs a `gradient`: the vector-Jacobian product" went plain after `gradient`:
    Qt's Markdown reader drops a heading's weight after a code span."""
    from PySide6.QtGui import QFont

    path = LESSONS / "07_backward.py"
    (section,) = [s for s in parse_lesson(path).notes if "A vector root needs a `gradient`" in s.text["en"]]
    view = NotesView()
    qtbot.addWidget(view)
    view.set_source(path.read_text(encoding="utf-8"))
    view.show_line(section.end_line + 1)  # the code under the notes
    document = view.browser.document()
    blocks = [document.findBlockByNumber(n) for n in range(document.blockCount())]
    (heading,) = [b for b in blocks if b.text().replace("\u200b", "").startswith("A vector root needs a gradient")]
    assert heading.blockFormat().headingLevel() == 2
    weights = []
    it = heading.begin()
    while not it.atEnd():
        weights.append((it.fragment().text(), it.fragment().charFormat().fontWeight()))
        it += 1
    assert len(weights) >= 3 and all(weight == QFont.Weight.Bold for _, weight in weights), weights
    body = heading.next()
    assert body.begin().fragment().charFormat().fontWeight() != QFont.Weight.Bold
