"""The lesson list: every row shows its whole text (title, summary, progress) at any width, in both languages."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QRect, Qt

from app import i18n
from app.lesson_format import list_lessons
from widgets.lesson_browser import TEXT_MARGIN, LessonBrowser

LESSONS = Path(__file__).resolve().parent.parent / "lessons"


def needed_height(browser: LessonBrowser, text: str, width: int) -> int:
    bounds = browser.list.fontMetrics().boundingRect(QRect(0, 0, width, 1 << 20), Qt.TextFlag.TextWordWrap, text)
    return bounds.height() + 2 * TEXT_MARGIN


@pytest.mark.parametrize("language", ["en", "zh"])
def test_a_row_whose_title_wraps_keeps_its_progress_line(qtbot, language):
    """In 中文 lesson 05's title wrapped to a second line: its summary ended in "…" and the row's last line,
    the learner's progress, was not drawn (Qt measured the row at one width and drew it at a narrower one)."""
    i18n.set_language(language)
    browser = LessonBrowser()
    qtbot.addWidget(browser)
    browser.resize(420, 900)
    browser.show()
    browser.set_lessons(list_lessons(LESSONS), language)
    model = browser.list.model()
    wide = [browser.list.visualRect(model.index(row, 0)).height() for row in range(model.rowCount())]
    browser.resize(190, 900)  # the lessons column of a 1280 px window
    qtbot.waitUntil(lambda: browser.list.visualRect(model.index(0, 0)).width() < 190)
    delegate = browser.list.itemDelegate()
    wrapped = 0
    for row in range(model.rowCount()):
        index = model.index(row, 0)
        text, rect = index.data(), browser.list.visualRect(index)
        assert text.count("\n") == 2  # title, summary, progress
        assert rect.width() - 2 * TEXT_MARGIN == delegate.text_width()  # drawn at the width it was measured at
        assert rect.height() >= needed_height(browser, text, delegate.text_width()), (row, text)
        wrapped += rect.height() > wide[row]
    assert wrapped == model.rowCount()  # measured again at the new width: every row grew
