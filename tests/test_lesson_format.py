"""The lesson format: the parser on small texts, and every lesson in ``lessons/`` against it."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from app.lesson_format import (
    LANGUAGES,
    LessonFormatError,
    list_lessons,
    notes_for_line,
    parse_lesson,
    section_at,
)

LESSONS = Path(__file__).resolve().parent.parent / "lessons"
LESSON_FILES = sorted(LESSONS.glob("[0-9][0-9]_*.py"))

SMALL = textwrap.dedent(
    '''\
    """Docstring."""

    # %% [markdown]
    # [en]
    # # Small lesson
    # A summary in one line.
    #
    # Some intro.
    # [zh]
    # # 小课
    # 一句话摘要。

    # %%
    import math

    # %% [markdown]
    # [en]
    # Watch `y`.
    # [zh]
    # 观察 `y`。

    # %% A titled code cell
    y = math.pi
    z = y * 2
    '''
)


def text_with_notes(body: str) -> str:
    """A valid header followed by one notes cell with ``body`` and a code cell."""
    header = "# %% [markdown]\n# [en]\n# # T\n# S\n# [zh]\n# # 标\n# 摘\n"
    return header + "# %% [markdown]\n" + textwrap.dedent(body) + "# %%\nx = 1\n"


# ---- the parser on small texts ------------------------------------------------------------


def test_header_gives_title_and_summary_in_both_languages():
    lesson = parse_lesson(SMALL)
    assert lesson.title == {"en": "Small lesson", "zh": "小课"}
    assert lesson.summary == {"en": "A summary in one line.", "zh": "一句话摘要。"}
    assert lesson.path is None


def test_sections_cover_the_file_with_one_based_inclusive_ranges():
    lesson = parse_lesson(SMALL)
    ranges = [(s.kind, s.start_line, s.end_line) for s in lesson.sections]
    assert ranges == [("code", 1, 2), ("notes", 3, 12), ("code", 13, 15), ("notes", 16, 21), ("code", 22, 24)]
    assert lesson.sections[3].text == {"en": "Watch `y`.", "zh": "观察 `y`。"}
    assert lesson.sections[1].text["en"] == "# Small lesson\nA summary in one line.\n\nSome intro."
    assert section_at(lesson, 23) is lesson.sections[4]
    assert section_at(lesson, 99) is None


def test_notes_follow_the_section_the_line_is_in():
    lesson = parse_lesson(SMALL)
    assert notes_for_line(lesson, 23, "en") == "Watch `y`."
    assert notes_for_line(lesson, 24, "zh") == "观察 `y`。"
    assert notes_for_line(lesson, 14, "en").startswith("# Small lesson")
    assert notes_for_line(lesson, 18, "en") == "Watch `y`."
    # The docstring above every notes cell shows the header.
    assert notes_for_line(lesson, 1, "zh").startswith("# 小课")


def test_unknown_language_falls_back_to_english():
    assert notes_for_line(parse_lesson(SMALL), 23, "fr") == "Watch `y`."


def test_parse_reads_a_path_given_as_path_or_str(tmp_path):
    path = tmp_path / "03_small.py"
    path.write_text(SMALL, encoding="utf-8")
    assert parse_lesson(path).path == path
    assert parse_lesson(str(path)).title["en"] == "Small lesson"


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("# [en]\n# only English\n", r"lacks \[zh\]"),
        ("# stray text\n# [en]\n# a\n# [zh]\n# b\n", "before the first"),
        ("# [en]\n# a\n# [en]\n# b\n# [zh]\n# c\n", "twice"),
        ("# [en]\n# a\nx = 1\n# [zh]\n# b\n", "only comment lines"),
    ],
)
def test_broken_notes_cells_are_rejected_with_their_line(body, message):
    with pytest.raises(LessonFormatError, match=message) as info:
        parse_lesson(text_with_notes(body))
    assert str(info.value).startswith("line ")


def test_header_needs_a_heading_and_a_summary():
    no_heading = "# %% [markdown]\n# [en]\n# Title without hash\n# S\n# [zh]\n# # 标\n# 摘\n# %%\nx = 1\n"
    with pytest.raises(LessonFormatError, match="heading"):
        parse_lesson(no_heading)
    no_summary = "# %% [markdown]\n# [en]\n# # T\n# [zh]\n# # 标\n# 摘\n# %%\nx = 1\n"
    with pytest.raises(LessonFormatError, match="summary"):
        parse_lesson(no_summary)


def test_a_file_without_cells_or_notes_is_rejected():
    with pytest.raises(LessonFormatError, match="no '# %%'"):
        parse_lesson("x = 1\ny = 2\n")
    with pytest.raises(LessonFormatError, match="no notes"):
        parse_lesson("# %%\nx = 1\n")


def test_list_lessons_sorts_by_number_and_skips_other_files(tmp_path):
    for name in ("10_ten.py", "2_two.py", "helper.py", "01_one.py"):
        (tmp_path / name).write_text(SMALL, encoding="utf-8")
    (tmp_path / "notes.md").write_text("not a lesson", encoding="utf-8")
    infos = list_lessons(tmp_path)
    assert [(i.order, i.stem) for i in infos] == [(1, "01_one"), (2, "2_two"), (10, "10_ten")]
    assert infos[0].title["zh"] == "小课" and infos[0].summary["en"] == "A summary in one line."


def test_list_lessons_lists_a_broken_file_with_its_error(tmp_path):
    (tmp_path / "01_ok.py").write_text(SMALL, encoding="utf-8")
    (tmp_path / "02_bad.py").write_text("# %%\nx = 1\n", encoding="utf-8")
    ok, bad = list_lessons(tmp_path)
    assert ok.error is None
    assert bad.stem == "02_bad" and bad.title["en"] == "02_bad" and "notes" in bad.error
    assert bad.summary["en"].startswith("cannot read its notes")


def test_the_parser_imports_neither_torch_nor_qt():
    code = "import sys, app.lesson_format; print(sorted(m for m in ('torch', 'PySide6') if m in sys.modules))"
    root = Path(__file__).resolve().parent.parent
    done = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


# ---- the course ---------------------------------------------------------------------------


def test_the_course_numbers_its_lessons_without_a_gap_and_has_the_linked_names():
    infos = list_lessons(LESSONS)
    assert [i.order for i in infos] == list(range(1, len(infos) + 1)) and len(infos) >= 19
    stems = {i.stem for i in infos}
    assert {"01_dynamic_graphs", "07_backward", "09_retain_graph", "11_inplace_version", "14_hooks"} <= stems


@pytest.mark.parametrize(("readme", "lang"), [("README.md", "en"), ("README.zh-CN.md", "zh")])
def test_the_readme_lists_every_lesson_in_order_with_its_title(readme, lang):
    text = (LESSONS.parent / readme).read_text(encoding="utf-8")
    listed = re.findall(r"^\| `(\d\d_\w+\.py)` \| (.+?) \|", text, re.MULTILINE)
    assert listed == [(path.name, parse_lesson(path).title[lang]) for path in LESSON_FILES]


@pytest.mark.parametrize("path", LESSON_FILES, ids=lambda p: p.stem)
def test_lesson_has_title_summary_and_every_note_in_both_languages(path):
    lesson = parse_lesson(path)
    for lang in LANGUAGES:
        assert lesson.title.get(lang), f"no {lang} title"
        assert lesson.summary.get(lang), f"no {lang} summary"
        for section in lesson.notes:
            assert section.text.get(lang), f"notes at line {section.start_line} lack {lang} text"
    assert len(lesson.notes) >= 3, "a header, at least one note on the code, and a Try it"


@pytest.mark.parametrize("path", LESSON_FILES, ids=lambda p: p.stem)
def test_lesson_cells_parse_and_it_opens_with_a_docstring(path):
    source = path.read_text(encoding="utf-8")
    lines = source.splitlines()
    module = ast.parse(source, filename=str(path))
    assert ast.get_docstring(module), "the lesson opens with a docstring saying what it teaches"
    for section in parse_lesson(path).sections:
        if section.kind == "code":
            cell = "\n".join(lines[section.start_line - 1 : section.end_line])
            compile(cell, f"{path.name}:{section.start_line}", "exec")


@pytest.mark.parametrize("path", LESSON_FILES, ids=lambda p: p.stem)
def test_lesson_ends_with_try_it_and_seeds_its_data(path):
    lesson = parse_lesson(path)
    last = lesson.notes[-1].text
    assert last["en"].startswith("## Try it") and last["zh"].startswith("## 动手试试")
    source = path.read_text(encoding="utf-8")
    assert "torch.manual_seed(" in source
    for banned in ("urllib", "requests", "download", "http://", "https://"):
        assert banned not in source, f"lessons make their own data; found {banned!r}"


@pytest.mark.parametrize("path", LESSON_FILES, ids=lambda p: p.stem)
def test_every_lesson_asks_three_predictions_and_checks_each_of_its_exercises(path):
    """The course asks before it tells: at least three ``# predict:`` lines, and one ``# check:`` per
    numbered exercise of each Try it cell, in that cell."""
    lesson = parse_lesson(path)
    assert len(lesson.predictions) >= 3, [p.expression for p in lesson.predictions]
    cells = [s for s in lesson.notes if re.match(r"##\s+Try it\b", s.text["en"])]
    assert cells, "no Try it cell"
    for cell in cells:
        exercises = len(re.findall(r"^\d+\.\s", cell.text["en"], re.MULTILINE))
        checks = [c for c in lesson.checks if cell.contains(c.line)]
        assert [c.exercise for c in checks] == list(range(1, exercises + 1)), (cell.start_line, checks)
