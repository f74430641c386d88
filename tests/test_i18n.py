"""The translation catalog: every text of the code has its 中文, none is left over, the terms are the glossary's."""

from __future__ import annotations

import json
import re
import string
from pathlib import Path

import pytest

from app import i18n
from app.i18n import tr
from tests.i18n_msgids import code_msgids

ROOT = Path(__file__).resolve().parent.parent
CATALOG = json.loads((ROOT / "app" / "locale" / "zh.json").read_text(encoding="utf-8"))


def fields(text: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(text) if name is not None}


def test_every_text_of_the_code_has_a_chinese_translation():
    missing = {text: places for text, places in code_msgids().items() if text not in CATALOG}
    assert missing == {}


def test_no_catalog_entry_is_left_over():
    assert sorted(set(CATALOG) - set(code_msgids())) == []


def test_a_translation_has_the_fields_of_its_message_id():
    assert {text: translated for text, translated in CATALOG.items() if fields(text) != fields(translated)} == {}


def test_translations_are_chinese_with_full_width_punctuation():
    worded = {text: t for text, t in CATALOG.items() if re.search("[A-Za-z]{2,}", re.sub(r"\{\w*\}", "", text))}
    not_chinese = [t for t in worded.values() if not re.search("[\u4e00-\u9fff]", t)]
    assert not_chinese == []
    # a half-width comma or colon right after a Chinese character is a slip of the keyboard
    half_width = [t for t in CATALOG.values() if re.search("[\u4e00-\u9fff][,:;?!]", t)]
    assert half_width == []


def glossary() -> list[tuple[str, str]]:
    """(English term, 中文 term) of docs/glossary.md's table, where the 中文 term is checked in the catalog."""
    rows = []
    for line in (ROOT / "docs" / "glossary.md").read_text(encoding="utf-8").splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) >= 4 and cells[3] == "✓":
            rows.append((cells[0], cells[1]))
    return rows


def test_the_glossary_lists_the_terms_the_issue_fixes():
    chinese = " ".join(zh for _, zh in glossary())
    for term in ("计算图", "叶子", "梯度", "反向传播", "前向", "原地操作", "版本计数器", "向量-雅可比积", "高阶导数"):
        assert term in chinese
    text = (ROOT / "docs" / "glossary.md").read_text(encoding="utf-8")
    for term in ("钩子", "分离（detach）", "禁用梯度计算", "推理模式", "保留计算图", "自动求导", "叶子张量"):
        assert term in text


@pytest.mark.parametrize(("english", "chinese"), glossary())
def test_the_catalog_uses_the_glossary_terms(english, chinese):
    # the term as a word of the text, not inside code (``is_leaf``, ``∂leaf``, ``gradient=``, ``autograd.grad``)
    pattern = re.compile(rf"(?<![\w.∂_]){re.escape(english)}s?(?![\w.=_(])", re.IGNORECASE)
    wrong = {text: translated for text, translated in CATALOG.items()
             if pattern.search(text) and not any(t in translated for t in chinese.split(" / "))}
    assert wrong == {}


def test_tr_follows_the_language_and_tells_the_listeners():
    heard = []
    i18n.listeners.append(heard.append)
    try:
        assert tr("step {step}", step=3) == "step 3"
        i18n.set_language("zh")
        assert tr("step {step}", step=3) == "第 3 步"
        assert tr("a text nobody translated") == "a text nobody translated"
        assert i18n.language() == "zh"
        i18n.set_language("en")
    finally:
        i18n.listeners.remove(heard.append)
    assert heard == ["zh", "en"]


def test_the_system_locale_picks_the_first_language():
    assert i18n.system_language("zh_CN") == "zh"
    assert i18n.system_language("zh_TW") == "zh"
    assert i18n.system_language("en_US") == "en"
    assert i18n.system_language("C") == "en"


def test_a_teaching_card_made_in_the_lesson_process_is_shown_in_the_learners_language():
    from app.lesson.autograd_actions import explain

    error = explain(RuntimeError("one of the variables needed for gradient computation has been modified by an "
                                 "inplace operation: [torch.FloatTensor [2]], which is output 0 of MulBackward0, "
                                 "is at version 2; expected version 1 instead."))
    assert "version counter was 1" in error["explanation"]  # English for the trace and other readers
    i18n.set_language("zh")
    explanation, fix = i18n.error_texts(error)
    assert "版本计数器为 1" in explanation and "[torch.FloatTensor [2]]" in explanation
    assert "原地" in fix and "clone()" in fix
