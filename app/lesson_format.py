"""Reads lesson files: their bilingual header, their notes and code cells, and the lesson list.

Plain Python: no Qt and no torch, so the app and the tests can read a lesson without
running it.

The lesson format
-----------------
A lesson is one runnable ``.py`` file in ``lessons/`` named ``NN_topic.py`` (``NN`` is its
place in the course). It is split into cells with the percent convention that Jupytext,
VS Code and Spyder share:

* a line that is exactly ``# %%`` (optionally followed by a cell title) starts a code cell;
* a line ``# %% [markdown]`` starts a notes cell. Every line of a notes cell is a comment
  (``#`` alone for an empty line), and the text is Markdown once ``# `` is removed;
* lines before the first ``# %%`` (the module docstring) form a code section of their own.

A cell runs from its marker line to the line before the next marker (or the end of the
file), trailing blank lines included.

Every notes cell holds one block per language, each opened by a line that is exactly
``# [en]`` or ``# [zh]`` (English, Simplified Chinese). No text may come before the
first marker, and each language appears once per cell::

    # %% [markdown]
    # [en]
    # Step over `h = x * w` and look at `h.grad_fn`.
    # [zh]
    # 单步执行 `h = x * w`，然后查看 `h.grad_fn`。

The first notes cell is the lesson's header. In each language block its first line is a
Markdown level-1 heading, the title (``# # Backward and leaf gradients``); the next
non-empty line is the one-line summary; anything after that is the introduction::

    # %% [markdown]
    # [en]
    # # Backward and leaf gradients
    # Where `.grad` comes from, and why it keeps growing.
    # [zh]
    # # backward() 与叶子张量的梯度
    # `.grad` 从哪里来，又为什么会不断累加。

The notes shown for a line are those of the nearest notes cell above it; lines above
the first notes cell (the docstring) show the header.

Predictions and exercise checks
-------------------------------
A code line may end with a prediction the learner is asked for before the line runs::

    h = x * w  # predict: h.requires_grad | True | False

``# predict: EXPR`` asks what ``EXPR`` will be once the line has run (a free answer);
``| choice | choice…`` after it offers those answers to pick from. A notes cell may hold
checks of its exercises ("Try it"), one line each, outside the language blocks' text::

    # check: torch.equal(v.grad, A.sum(0))

The n-th check of a cell belongs to its n-th exercise. When the run ends, ``EXPR`` is
evaluated in the lesson's module: true means the learner made the change the exercise asks
for, so it is false when the exercise is half done or done the wrong way, and the checks of
one lesson can all be true in the same run. A check may use ``course``, the lessons' helper
module, whose ``before``/``after``/``returned``/``calls`` read how a value was made in a
fresh run of the lesson (:mod:`app.lesson.predictions` evaluates it part by part). Both are
comments, so the lesson still runs with plain ``python``.
"""

from __future__ import annotations

import io
import os
import re
import tokenize
from dataclasses import dataclass, field
from pathlib import Path

#: Languages every notes cell must provide, in the order the app offers them.
LANGUAGES: tuple[str, ...] = ("en", "zh")

_CELL = re.compile(r"^# %%(?:\s.*)?$")
_NOTES_TAG = re.compile(r"\[(?:markdown|md)\]")
_LANG_MARK = re.compile(r"^\[([a-z]{2})\]$")
_HEADING = re.compile(r"^#\s+(\S.*)$")
_LESSON_NAME = re.compile(r"^(\d+)_\w+\.py$")
_PREDICT = re.compile(r"^#\s*predict:\s*(.*)$")
_CHECK = re.compile(r"^check:\s*(.*)$")


class LessonFormatError(ValueError):
    """A lesson file that does not follow the format; the message names the line."""


@dataclass
class Section:
    """One cell of a lesson: code or bilingual notes, with its 1-based inclusive line range."""

    kind: str
    start_line: int
    end_line: int
    text: dict[str, str] = field(default_factory=dict)

    def contains(self, line: int) -> bool:
        """Whether ``line`` lies inside this section."""
        return self.start_line <= line <= self.end_line


@dataclass(frozen=True)
class Prediction:
    """``# predict: EXPR | choice…`` at the end of code line ``line``."""

    line: int
    expression: str
    choices: tuple[str, ...] = ()



@dataclass(frozen=True)
class Check:
    """``# check: EXPR`` on line ``line``: exercise ``exercise`` (1-based) of the notes cell it is in."""

    line: int
    expression: str
    exercise: int


@dataclass
class Lesson:
    """A parsed lesson: title and summary per language, its sections in file order, predictions and checks."""

    title: dict[str, str]
    summary: dict[str, str]
    sections: list[Section]
    path: Path | None = None
    predictions: list[Prediction] = field(default_factory=list)
    checks: list[Check] = field(default_factory=list)

    def prediction_at(self, line: int) -> Prediction | None:
        """The prediction asked before ``line`` runs, if it has one."""
        return next((p for p in self.predictions if p.line == line), None)

    def prediction_key(self, prediction: Prediction) -> str:
        """What names a prediction in the learner's progress, whatever line edits move it to."""
        earlier = self.predictions[: self.predictions.index(prediction)]
        return _key(prediction.expression, [p.expression for p in earlier])

    def check_key(self, check: Check) -> str:
        """What names an exercise check in the learner's progress."""
        return _key(check.expression, [c.expression for c in self.checks[: self.checks.index(check)]])

    @property
    def notes(self) -> list[Section]:
        """The notes sections, the header first."""
        return [s for s in self.sections if s.kind == "notes"]


def _key(expression: str, before: list[str]) -> str:
    """``expression``, numbered when the same expression came before (``h.grad#2``)."""
    count = before.count(expression)
    return f"{expression}#{count + 1}" if count else expression


@dataclass
class LessonInfo:
    """What the lesson list shows about one lesson file."""

    path: Path
    order: int
    title: dict[str, str]
    summary: dict[str, str]
    error: str | None = None
    predictions: int = 0
    checks: int = 0

    @property
    def stem(self) -> str:
        """The file name without ``.py`` (``07_backward``), the name other code links to."""
        return self.path.stem


def _read(path_or_text: str | os.PathLike) -> tuple[str, Path | None]:
    """The lesson text and its path; a string with no newline naming a file is a path."""
    if isinstance(path_or_text, os.PathLike):
        path = Path(path_or_text)
        return path.read_text(encoding="utf-8"), path
    if "\n" not in path_or_text and path_or_text.endswith(".py") and Path(path_or_text).is_file():
        path = Path(path_or_text)
        return path.read_text(encoding="utf-8"), path
    return path_or_text, None


def _notes_text(lines: list[str], first: int, checks: list[Check] | None = None) -> dict[str, str]:
    """Split a notes cell's body (line ``first`` onwards) into its language blocks; its checks go to ``checks``."""
    blocks: dict[str, list[str]] = {}
    exercise = 0
    current: list[str] | None = None
    for number, raw in enumerate(lines, start=first):
        stripped = raw.strip()
        if not stripped:
            body = ""
        elif raw.startswith("#"):
            body = raw[2:] if raw.startswith("# ") else raw[1:]
            body = body.rstrip()
        else:
            raise LessonFormatError(f"line {number}: a notes cell holds only comment lines")
        check = _CHECK.match(body.strip())
        if check:
            if not check.group(1).strip():
                raise LessonFormatError(f"line {number}: 'check:' needs an expression")
            _compiles(check.group(1), number, "check")
            exercise += 1
            if checks is not None:
                checks.append(Check(number, check.group(1).strip(), exercise))
            continue
        mark = _LANG_MARK.match(body)
        if mark:
            lang = mark.group(1)
            if lang in blocks:
                raise LessonFormatError(f"line {number}: [{lang}] appears twice in one notes cell")
            current = blocks[lang] = []
            continue
        if current is None:
            if body:
                raise LessonFormatError(f"line {number}: notes text before the first [en]/[zh] marker")
            continue
        current.append(body)
    missing = [lang for lang in LANGUAGES if lang not in blocks]
    if missing:
        raise LessonFormatError(f"line {first - 1}: notes cell lacks {', '.join(f'[{m}]' for m in missing)}")
    return {lang: "\n".join(body).strip("\n") for lang, body in blocks.items()}


def _compiles(expression: str, line: int, what: str) -> None:
    try:
        compile(expression, f"<{what}>", "eval")
    except SyntaxError as exc:
        raise LessonFormatError(f"line {line}: the {what} expression is not a Python expression: {exc.msg}") from None


def _predictions(text: str) -> list[Prediction]:
    """The ``# predict:`` comments that end code lines (a comment on a line of its own is not one)."""
    found: list[Prediction] = []
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return found
    code_rows = {token.start[0] for token in tokens
                 if token.type not in (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT,
                                       tokenize.DEDENT, tokenize.ENCODING, tokenize.ENDMARKER)}
    for token in tokens:
        match = _PREDICT.match(token.string) if token.type == tokenize.COMMENT else None
        if match is None:
            continue
        line = token.start[0]
        if line not in code_rows:
            raise LessonFormatError(f"line {line}: '# predict:' ends the code line it asks about")
        expression, *choices = (part.strip() for part in match.group(1).split("|"))
        if not expression:
            raise LessonFormatError(f"line {line}: 'predict:' needs an expression")
        _compiles(expression, line, "predict")
        if any(not choice for choice in choices):
            raise LessonFormatError(f"line {line}: an empty choice after 'predict: {expression}'")
        found.append(Prediction(line, expression, tuple(choices)))
    return found


def _header(section: Section) -> tuple[dict[str, str], dict[str, str]]:
    """Title and summary of each language from the header cell."""
    title: dict[str, str] = {}
    summary: dict[str, str] = {}
    for lang, text in section.text.items():
        lines = [line.strip() for line in text.splitlines() if line.strip()]
        heading = _HEADING.match(lines[0]) if lines else None
        if heading is None:
            raise LessonFormatError(
                f"line {section.start_line}: the [{lang}] header must open with a '# Title' heading"
            )
        if len(lines) < 2 or lines[1].startswith("#"):
            raise LessonFormatError(f"line {section.start_line}: the [{lang}] header lacks a summary line")
        title[lang] = heading.group(1).strip()
        summary[lang] = lines[1]
    return title, summary


def parse_lesson(path_or_text: str | os.PathLike) -> Lesson:
    """Parse a lesson file (a path) or lesson source (a string).

    Raises
    ------
    LessonFormatError
        When the cells, the language blocks or the header break the format.
    """
    text, path = _read(path_or_text)
    lines = text.splitlines()
    starts = [i for i, line in enumerate(lines) if _CELL.match(line)]
    sections: list[Section] = []
    checks: list[Check] = []
    if starts and starts[0] > 0 and any(line.strip() for line in lines[: starts[0]]):
        sections.append(Section("code", 1, starts[0]))
    for n, start in enumerate(starts):
        end = starts[n + 1] if n + 1 < len(starts) else len(lines)
        marker = lines[start]
        if _NOTES_TAG.search(marker):
            notes = _notes_text(lines[start + 1 : end], start + 2, checks)
            sections.append(Section("notes", start + 1, end, notes))
        else:
            sections.append(Section("code", start + 1, end))
    if not starts:
        raise LessonFormatError("line 1: no '# %%' cell markers")
    notes = [s for s in sections if s.kind == "notes"]
    if not notes:
        raise LessonFormatError("line 1: no notes cell, so no header")
    title, summary = _header(notes[0])
    return Lesson(title=title, summary=summary, sections=sections, path=path, predictions=_predictions(text),
                  checks=checks)


def section_at(lesson: Lesson, line: int) -> Section | None:
    """The section holding ``line`` (1-based), or None past the end of the file."""
    for section in lesson.sections:
        if section.contains(line):
            return section
    return None


def notes_for_line(lesson: Lesson, line: int, lang: str) -> str:
    """The notes to show while paused at ``line``, in ``lang`` (English when it is missing).

    These are the notes of the nearest notes cell at or above the line; a line above every
    notes cell gets the header.
    """
    chosen: Section | None = None
    for section in lesson.sections:
        if section.start_line > line:
            break
        if section.kind == "notes":
            chosen = section
    if chosen is None:
        notes = lesson.notes
        if not notes:
            return ""
        chosen = notes[0]
    return chosen.text.get(lang) or chosen.text.get("en", "")


def notes_after(lesson: Lesson, line: int) -> Section | None:
    """The first notes cell below ``line``: where a lesson tells the answer to a prediction asked on it."""
    return next((s for s in lesson.sections if s.kind == "notes" and s.start_line > line), None)

def lesson_order(path: str | os.PathLike) -> int | None:
    """The order number of a lesson file name (``7`` for ``07_backward.py``), or None."""
    match = _LESSON_NAME.match(Path(path).name)
    return int(match.group(1)) if match else None


def list_lessons(folder: str | os.PathLike) -> list[LessonInfo]:
    """The lessons in ``folder`` (files named ``NN_topic.py``), sorted by their number.

    A file that does not parse is still listed, titled with its file name, with ``error``
    saying what is wrong, so a teacher sees the problem instead of a missing lesson.
    """
    infos: list[LessonInfo] = []
    for path in Path(folder).glob("*.py"):
        order = lesson_order(path)
        if order is None:
            continue
        try:
            lesson = parse_lesson(path)
        except (LessonFormatError, OSError, UnicodeDecodeError) as exc:
            infos.append(LessonInfo(path=path, order=order, title={"en": path.stem, "zh": path.stem},
                                    summary={"en": f"cannot read its notes: {exc}", "zh": f"无法读取笔记：{exc}"},
                                    error=str(exc)))
            continue
        infos.append(LessonInfo(path=path, order=order, title=lesson.title, summary=lesson.summary,
                                predictions=len(lesson.predictions), checks=len(lesson.checks)))
    infos.sort(key=lambda info: (info.order, info.path.name))
    return infos
