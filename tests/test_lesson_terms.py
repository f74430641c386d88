"""The lessons' Chinese notes use the glossary's terms: none of a term's known wrong variants appears.

``docs/glossary.md`` gives, in its last column, the variants a term must not take in a lesson
(拐点 for a kink, 随时间反向传播 for backpropagation through time, a bare "autograd" in Chinese
prose). Text in backticks is code and is left alone, as is a name that goes on with ``.`` or
``_`` (``torch.autograd``, ``autograd.grad``).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from app.lesson_format import parse_lesson

ROOT = Path(__file__).resolve().parent.parent
LESSON_FILES = sorted((ROOT / "lessons").glob("[0-9][0-9]_*.py"))


def wrong_variants() -> dict[str, str]:
    """{wrong variant: the glossary's term} from the glossary table's last column."""
    found = {}
    for line in (ROOT / "docs" / "glossary.md").read_text(encoding="utf-8").splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) == 5 and cells[0] not in ("English", "---") and cells[4]:
            found.update(dict.fromkeys((v.strip() for v in cells[4].split(" / ")), cells[1]))
    return found


def misused(text: str, variants: dict[str, str]) -> list[str]:
    """The wrong variants in ``text`` outside code spans, each as 'variant -> term'."""
    prose = re.sub(r"`[^`]*`", "", text)
    return [f"{variant} -> {term}" for variant, term in variants.items()
            if re.search(rf"(?<![A-Za-z0-9_.]){re.escape(variant)}(?![A-Za-z0-9_.])", prose)]


def test_the_glossary_names_the_wrong_variants_the_lessons_had():
    variants = wrong_variants()
    assert {"拐点", "随时间反向传播", "autograd", "小批次", "批大小", "滑动平均"} <= set(variants)
    assert variants["拐点"] == "尖点 / 不可导点" and variants["autograd"] == "自动求导"


@pytest.mark.parametrize(("text", "found"), [
    ("`abs` 在 0 处有一个拐点", ["拐点 -> 尖点 / 不可导点"]),
    ("所以 autograd 不记录", ["autograd -> 自动求导"]),
    ("`torch.autograd.grad` 返回梯度；torch.autograd.grad 也是代码", []),
    ("用 `autograd` 这个词", []),
    ("通过时间反向传播", []),
    ("一个小批次", ["批次 -> 批量", "小批次 -> 小批量"]),
])
def test_a_wrong_variant_is_found_outside_code_only(text, found):
    assert misused(text, wrong_variants()) == found


@pytest.mark.parametrize("path", LESSON_FILES, ids=lambda p: p.stem)
def test_the_chinese_notes_use_the_glossary_terms(path):
    variants = wrong_variants()
    wrong = [(section.start_line, hit) for section in parse_lesson(path).notes
             for hit in misused(section.text["zh"], variants)]
    assert wrong == []


@pytest.mark.parametrize("path", LESSON_FILES, ids=lambda p: p.stem)
def test_a_column_the_notes_name_is_one_the_variables_header_shows(path):
    """Lesson 11 said "the `version` column" (and "`version` 一列") where the header reads `_version`."""
    from widgets.variables_view import HEADERS

    lesson = parse_lesson(path)
    named = [(lang, name) for section in lesson.notes for lang, text in section.text.items()
             for name in re.findall(r"`(\w+)` (?:column|一列|列)", text)]
    assert [(lang, name) for lang, name in named if name not in HEADERS] == []
