"""The lessons' Chinese notes and the interface use the glossary's terms, one term per concept.

``docs/glossary.md`` gives, in its last column, the variants a term must not take in a lesson
or the catalog (拐点 for a kink, 随时间反向传播 for backpropagation through time, 梯度累加 for
gradient accumulation, a bare "autograd" in Chinese prose). Text in backticks is code and is
left alone, as is a name that goes on with ``.`` or ``_`` (``torch.autograd``, ``autograd.grad``).

Some concepts share words (a leaf tensor and a graph's leaf node, a micro-batch and a
minibatch), so a wrong variant cannot tell them apart: ``PAIRED`` holds each to its term by
the English it translates. In a text given in both languages (a lesson's notes cell, a catalog
entry), the English naming the concept means the Chinese has its term, and the Chinese term
means the English speaks of that concept.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from app.lesson_format import parse_lesson

ROOT = Path(__file__).resolve().parent.parent
LESSON_FILES = sorted((ROOT / "lessons").glob("[0-9][0-9]_*.py"))
CATALOG = json.loads((ROOT / "app" / "locale" / "zh.json").read_text(encoding="utf-8"))


def wrong_variants() -> dict[str, str]:
    """{wrong variant: the glossary's term} from the glossary table's last column."""
    found = {}
    for line in (ROOT / "docs" / "glossary.md").read_text(encoding="utf-8").splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) == 5 and cells[0] not in ("English", "---") and cells[4]:
            found.update(dict.fromkeys((v.strip() for v in cells[4].split(" / ")), cells[1]))
    return found


def glossary_terms() -> list[str]:
    """Every Chinese term of the glossary table's second column."""
    terms = []
    for line in (ROOT / "docs" / "glossary.md").read_text(encoding="utf-8").splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) == 5 and cells[0] not in ("English", "---"):
            terms += [term.strip() for term in cells[1].split(" / ")]
    return terms


def misused(text: str, variants: dict[str, str]) -> list[str]:
    """The wrong variants in ``text`` outside code spans, each as 'variant -> term'.

    A variant inside a longer glossary term is that term, not the variant (批次 in 微批次).
    """
    prose = re.sub(r"`[^`]*`", "", text)
    found = []
    for variant, term in variants.items():
        longer = [t for t in glossary_terms() if variant in t and t != variant]
        inside = {n for t in longer for hit in re.finditer(re.escape(t), prose)
                  for n in range(hit.start(), hit.end())}
        hits = re.finditer(rf"(?<![A-Za-z0-9_.]){re.escape(variant)}(?![A-Za-z0-9_.])", prose)
        if any(hit.start() not in inside for hit in hits):
            found.append(f"{variant} -> {term}")
    return found


def test_the_glossary_names_the_wrong_variants_the_lessons_had():
    variants = wrong_variants()
    assert {"拐点", "随时间反向传播", "autograd", "小批次", "批大小", "滑动平均"} <= set(variants)
    assert {"梯度累加", "原地修改", "推断模式"} <= set(variants)
    assert variants["拐点"] == "尖点 / 不可导点" and variants["autograd"] == "自动求导"


@pytest.mark.parametrize(("text", "found"), [
    ("`abs` 在 0 处有一个拐点", ["拐点 -> 尖点 / 不可导点"]),
    ("所以 autograd 不记录", ["autograd -> 自动求导"]),
    ("`torch.autograd.grad` 返回梯度；torch.autograd.grad 也是代码", []),
    ("用 `autograd` 这个词", []),
    ("通过时间反向传播", []),
    ("一个小批次", ["批次 -> 批量", "小批次 -> 小批量"]),
    ("四个微批次", []),
    ("梯度累加与原地修改", ["原地修改 -> 原地操作", "梯度累加 -> 梯度累积"]),
])
def test_a_wrong_variant_is_found_outside_code_only(text, found):
    assert misused(text, wrong_variants()) == found


@pytest.mark.parametrize("path", LESSON_FILES, ids=lambda p: p.stem)
def test_the_chinese_notes_use_the_glossary_terms(path):
    variants = wrong_variants()
    wrong = [(section.start_line, hit) for section in parse_lesson(path).notes
             for hit in misused(section.text["zh"], variants)]
    assert wrong == []


def test_the_catalog_uses_the_glossary_terms():
    variants = wrong_variants()
    assert {text: misused(zh, variants) for text, zh in CATALOG.items() if misused(zh, variants)} == {}


# ---- one term per concept ----------------------------------------------------------------------

#: (concept, what in the English names it, what in the English it may be said for, the Chinese term).
PAIRED: list[tuple[str, str, str, str]] = [
    ("inference mode", r"\binference mode\b", r"\binference(?:\b|_mode)", "推理模式"),
    ("gradient accumulation", r"\bgradient accumulation\b|\baccumulat\w* gradients\b|\baccumulation\b",
     r"\baccumulat", "梯度累积"),
    ("micro-batch", r"\bmicro-batch", r"\bmicro-batch", "微批次"),
    ("minibatch", r"\bmini-?batch", r"\bmini-?batch", "小批量"),
    ("in-place operation", r"\bin-place (?:operation|op)s?\b", r"\bin[- ]place\b|\w_\(|\+=", "原地操作"),
    ("leaf tensor", r"\bleaf tensors?\b", r"\bleaf\b(?! nodes?\b)|\bleaves\b|\bis_leaf\b", "叶子张量"),
    ("leaf node", r"\bleaf nodes?\b", r"\bnodes?\b|\broot\b|AccumulateGrad|accumulates into \.grad", "叶子节点"),
]

#: Catalog labels too short to say what they name: the graph legend's "leaf" is a kind of node.
LEAF_NODE_LABELS = {"leaf"}


def pairs() -> list[tuple[str, str, str]]:
    """(where, English, Chinese) of every text given in both languages: each lesson's notes cell, each catalog entry."""
    found = [(f"{path.stem} line {section.start_line}", section.text["en"], section.text["zh"])
             for path in LESSON_FILES for section in parse_lesson(path).notes]
    return found + [(f"catalog {text!r}", text, zh) for text, zh in CATALOG.items()]


def mixed(english: str, chinese: str, where: str = "") -> list[str]:
    """How ``chinese`` breaks one term per concept against ``english``: a concept without its term, or a term
    used off its concept."""
    en, zh = (re.sub(r"`[^`]*`", "", text) for text in (english, chinese))
    wrong = []
    for concept, names, means, term in PAIRED:
        if re.search(names, en, re.IGNORECASE) and term not in zh:
            wrong.append(f"{concept} without {term}")
        if term in zh and not re.search(means, en, re.IGNORECASE):
            if not (term == "叶子节点" and english in LEAF_NODE_LABELS and where.startswith("catalog")):
                wrong.append(f"{term} where the English has no {concept}")
    return wrong


@pytest.mark.parametrize(("english", "chinese", "found"), [
    ("Four micro-batches, one gradient", "四个小批量，一个梯度",
     ["micro-batch without 微批次", "小批量 where the English has no minibatch"]),
    ("Four micro-batches, one gradient", "四个微批次，一个梯度", []),
    ("every reachable leaf's .grad is filled in", "每个可达叶子节点的 .grad 都已填入",
     ["叶子节点 where the English has no leaf node"]),
    ("from the root toward the leaves", "从根节点走向叶子节点", []),
    ("Tensors you create yourself are leaves", "你自己创建的张量是叶子张量", []),
    ("the `AccumulateGrad` leaf node", "`AccumulateGrad` 叶子张量",
     ["叶子张量 where the English has no leaf tensor", "leaf node without 叶子节点"]),
    ("`torch.inference_mode()` skips version counters", "`torch.inference_mode()` 跳过版本计数", []),
    ("Inference mode: faster", "inference_mode：更快", ["inference mode without 推理模式"]),
])
def test_what_counts_as_mixing_two_concepts(english, chinese, found):
    assert mixed(english, chinese) == found


def test_each_concept_has_one_chinese_term_and_each_term_its_own_concept():
    assert {where: wrong for where, en, zh in pairs() if (wrong := mixed(en, zh, where))} == {}


@pytest.mark.parametrize("path", LESSON_FILES, ids=lambda p: p.stem)
def test_a_column_the_notes_name_is_one_the_variables_header_shows(path):
    """Lesson 11 said "the `version` column" (and "`version` 一列") where the header reads `_version`."""
    from widgets.variables_view import HEADERS

    lesson = parse_lesson(path)
    named = [(lang, name) for section in lesson.notes for lang, text in section.text.items()
             for name in re.findall(r"`(\w+)` (?:column|一列|列)", text)]
    assert [(lang, name) for lang, name in named if name not in HEADERS] == []


def test_lesson_16_says_in_chinese_what_it_says_in_english():
    """Its note on a gradient that is part of a graph added 这就是高阶导数 in Chinese only (issue 33)."""
    (path,) = (ROOT / "lessons").glob("16_*.py")
    section = next(s for s in parse_lesson(path).notes if "A gradient that is part of a graph" in s.text["en"])
    assert "这就是高阶导数" not in section.text["zh"] and "higher-order" not in section.text["en"]
