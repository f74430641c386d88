"""The drill of a backward replay: before a backward function fires, the learner works out the gradients it sends.

From a replay entry (:class:`app.lesson.autograd_actions._Replay`) and, when known, the graph
node's saved tensors, :func:`question_for` makes a :class:`DrillQuestion`: the node's name, the
gradient it receives (``grad_output``), what it saved, and how many input gradients it sends.
:func:`judge` parses the learner's answer (numbers, bracketed lists, ``None``; one per input,
comma-separated) and compares it with what the node really sent, shape included, as a
prediction is judged. :class:`BackwardDrill` follows one replay: which steps ask, which were
answered, and the answers recorded in :class:`app.progress.Progress`. Plain Python.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from app.i18n import N_, join_words, tr
from app.progress import Progress

#: Gradients and saved tensors with more values than this are not asked (too many to work out by hand).
MAX_VALUES = 16
#: How close an answer must be, as ``numpy.allclose``: the values shown are rounded to 4 significant digits.
RTOL, ATOL = 1e-3, 1e-4

Summary = Mapping[str, Any]


class AnswerError(Exception):
    """An answer that is not numbers, lists of numbers or None; ``str()`` says why, in the current language.

    Parameters
    ----------
    text : str
        The English message id; ``fields`` fill it in.
    """

    def __init__(self, text: str, **fields: Any) -> None:
        super().__init__(text)
        self.text, self.fields = text, fields

    def __str__(self) -> str:
        return tr(self.text, **self.fields) if self.fields else tr(self.text)


def array_text(values: Any) -> str:
    """Values as the learner would type them: ``[1, 2.5]``, ``3``, ``[[1, 0], [0, 1]]``."""
    text = np.array2string(np.asarray(values), separator=", ", threshold=MAX_VALUES * 4,
                           formatter={"float_kind": lambda v: f"{v:.4g}"})
    return " ".join(text.split())


def _known(summary: Summary | None) -> bool:
    """Whether all of a tensor summary's values came along (None, a missing gradient, counts as known)."""
    if summary is None:
        return True
    return summary.get("values") is not None and not summary.get("sampled") \
        and int(np.asarray(summary["values"]).size) <= MAX_VALUES


def _tensors_of(value: Any) -> list[Summary]:
    if isinstance(value, Mapping) and "shape" in value:
        return [value]
    if isinstance(value, list):
        return [item for item in value if isinstance(item, Mapping) and "shape" in item]
    return []


def saved_text(entry: Mapping[str, Any]) -> str:
    """One saved value as ``_saved_other = [3, 4] (w)``; a freed one says so."""
    name = entry.get("name", "?")
    if entry.get("freed"):
        return f"{name}: {tr('freed by backward()')}"
    if entry.get("error"):
        return f"{name}: {entry['error']}"
    value = entry.get("value")
    tensors = _tensors_of(value)
    if not tensors:
        return f"{name} = {value!r}"
    shown = []
    for summary in tensors:
        values = summary.get("values")
        text = array_text(values) if values is not None else f"[{', '.join(map(str, summary.get('shape', [])))}]"
        shown.append(f"{text} ({summary['variable']})" if summary.get("variable") else text)
    return f"{name} = {', '.join(shown)}"


@dataclass(frozen=True, eq=False)
class DrillQuestion:
    """What the learner is asked before one backward function of a replay fires."""

    position: int
    """The step of the replay the node runs at."""
    node_id: int
    name: str
    key: str
    """Names the question in the progress: the root, the step and the node (``loss:1:MulBackward0``)."""
    grad_outputs: tuple[Any, ...]
    """What the node receives: an array per output, or None."""
    expected: tuple[Any, ...]
    """What it sends to its inputs (``grad_input``): an array per input, or None where no gradient flows."""
    saved: tuple[Mapping[str, Any], ...] | None
    """The graph node's saved values (entries as the engine sends them); None when the graph was not known."""
    targets: tuple[str, ...] = ()
    """Where each input gradient goes, when every input has a node; empty otherwise."""
    too_big: bool = False
    """More values than :data:`MAX_VALUES` in a gradient or a saved tensor, or values not sent: not asked."""

    @property
    def count(self) -> int:
        """How many input gradients the node sends (None ones included)."""
        return len(self.expected)

    def answer_text(self) -> str:
        """The right answer, as the learner would type it."""
        return ", ".join("None" if g is None else array_text(g) for g in self.expected)


def _values(summary: Summary | None) -> Any:
    if summary is None:
        return None
    return np.asarray(summary["values"], dtype=np.float64).reshape(summary.get("shape", []))


def question_for(entry: Mapping[str, Any], position: int, node: Mapping[str, Any] | None = None,
                 targets: Sequence[str] = (), root: str | None = None) -> DrillQuestion | None:
    """The question for a replay entry, or None for an ``AccumulateGrad`` leaf or a node that sends nothing.

    Parameters
    ----------
    entry : dict
        The replay entry (``id``, ``name``, ``kind``, ``grads_in``, ``grads_out``).
    position : int
        Its index in the replay.
    node : dict, optional
        The graph's dict for the node, whose ``saved`` entries are shown with the question.
    targets : list of str
        What each input gradient goes to; ignored unless there is one per input.
    root : str, optional
        What the pass started from, to tell apart the drills of one lesson.
    """
    sent = list(entry.get("grads_out") or [])
    if entry.get("kind") == "leaf" or not sent:
        return None
    received = list(entry.get("grads_in") or [])
    saved = None if node is None else tuple(node.get("saved") or [])
    tensors = [*sent, *received, *(t for e in saved or () for t in _tensors_of(e.get("value")))]
    too_big = not all(_known(t) for t in tensors)
    return DrillQuestion(
        position=position, node_id=int(entry["id"]), name=str(entry.get("name", "?")),
        key=f"{root or 'root'}:{position}:{entry.get('name', '?')}",
        grad_outputs=tuple(None if too_big else _values(g) for g in received),
        expected=tuple(None if too_big else _values(g) for g in sent),
        saved=saved, targets=tuple(targets) if len(targets) == len(sent) else (), too_big=too_big)


def split_commas(text: str) -> list[str]:
    """The comma-separated parts of ``text``, stripped, commas inside brackets kept: ``x, torch.ones(2, 3)``.

    Empty parts are kept (an answer ``1, , 2`` is unreadable); a list of expressions drops them.
    """
    parts, depth, start = [], 0, 0
    for i, char in enumerate(text):
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
        elif char == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return [part.strip() for part in parts]


def _numbers(node: ast.AST) -> Any:
    """A literal's numbers as nested lists, or AnswerError for anything else (names, strings, calls)."""
    if isinstance(node, ast.List | ast.Tuple):
        return [_numbers(item) for item in node.elts]
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        value = _numbers(node.operand)
        return -value if isinstance(node.op, ast.USub) else value
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float) and not isinstance(node.value, bool):
        return float(node.value)
    if isinstance(node, ast.Name) and node.id in ("nan", "inf"):  # what a NaN or infinite gradient prints as
        return float(node.id)
    raise AnswerError(N_("{part} is not a number: give numbers, lists of numbers such as [2, 4], or None"),
                      part=ast.unparse(node))


def parse_value(text: str) -> Any:
    """One gradient of an answer: ``None``, a number or a bracketed (nested) list, as a float64 array."""
    text = text.strip()
    if text.startswith("tensor(") and text.endswith(")"):  # the way PyTorch prints it
        text = text[len("tensor("):-1]
    if text == "None":
        return None
    if not text:
        raise AnswerError(N_("an empty gradient between two commas: give a value or None for each input"))
    try:
        tree = ast.parse(text, mode="eval").body
    except (SyntaxError, RecursionError, MemoryError):
        raise AnswerError(N_("{part} cannot be read: check its brackets and commas"), part=text) from None
    try:
        return np.asarray(_numbers(tree), dtype=np.float64)
    except ValueError:  # ragged lists
        raise AnswerError(N_("{part} is not a tensor: every row needs as many values"), part=text) from None


def parse_answer(text: str) -> list[Any]:
    """An answer's gradients, one per comma-separated part: ``[2, 4], 3`` → two arrays; ``None`` → None."""
    if not text.strip():
        raise AnswerError(N_("type the gradients it sends, one per input, separated by commas"))
    return [parse_value(part) for part in split_commas(text)]


@dataclass(frozen=True, eq=False)
class DrillVerdict:
    """A judged answer to a :class:`DrillQuestion`."""

    question: DrillQuestion
    answer: str
    right: bool
    why: tuple[str, dict[str, Any]] | None = None
    """Why it is wrong: a message id and its fields, worded where shown (:func:`verdict_text`)."""


def _shape(value: Any) -> str:
    return f"[{', '.join(map(str, np.shape(value)))}]"


def _same(given: Any, expected: Any) -> bool:
    if given is None or expected is None:
        return given is None and expected is None
    if given.shape != expected.shape and not given.size == expected.size == 1:
        return False
    return bool(np.allclose(given.reshape(expected.shape), expected, rtol=RTOL, atol=ATOL, equal_nan=True))


def _why_wrong(question: DrillQuestion, given: list[Any]) -> tuple[str, dict[str, Any]]:
    expected = list(question.expected)
    if len(given) != len(expected):
        return N_("you gave {given} gradient(s) for its {count} input(s) (None where no gradient flows)"), \
            {"given": len(given), "count": len(expected)}
    unmatched = list(given)
    for value in expected:
        match = next((i for i, g in enumerate(unmatched) if _same(g, value)), None)
        if match is None:
            break
        unmatched.pop(match)
    else:
        return N_("the right gradients in the wrong order: grad_input[i] goes to input i (next_functions[i])"), {}
    index = next(i for i, (g, e) in enumerate(zip(given, expected, strict=True)) if not _same(g, e))
    g, e = given[index], expected[index]
    if e is None:
        return N_("no gradient flows to input {i}: grad_input[{i}] is None"), {"i": index}
    if g is None:
        return N_("grad_input[{i}] is a gradient, not None"), {"i": index}
    if g.shape != e.shape and not g.size == e.size == 1:
        return N_("grad_input[{i}] has the shape of its input, {shape}; yours has {yours}"), \
            {"i": index, "shape": _shape(e), "yours": _shape(g)}
    return N_("grad_input[{i}] is {value}, not {yours}"), {"i": index, "value": array_text(e), "yours": array_text(g)}


def judge(question: DrillQuestion, answer: str) -> DrillVerdict:
    """Whether ``answer`` gives every gradient the node sent (raises :class:`AnswerError` if unreadable)."""
    given = parse_answer(answer)
    right = len(given) == question.count and all(_same(g, e) for g, e in zip(given, question.expected, strict=False))
    return DrillVerdict(question, answer.strip(), right, None if right else _why_wrong(question, given))


def verdict_text(verdict: DrillVerdict) -> str:
    """The verdict in the current language, with the right answer."""
    question = verdict.question
    if verdict.right:
        return tr("✓ Right: {name} sends {answer}.", name=question.name, answer=question.answer_text())
    text, fields = verdict.why or ("", {})
    return tr("✗ Not quite: {name} sends {answer}; {why}.", name=question.name, answer=question.answer_text(),
              why=tr(text, **fields) if fields else tr(text))


def question_lines(question: DrillQuestion) -> list[str]:
    """The question in the current language: what the node receives, what it saved, what to give."""
    received = join_words(["None" if g is None else array_text(g) for g in question.grad_outputs]) \
        if question.grad_outputs else tr("nothing")
    lines = [tr("Before {name} fires: it receives grad_output = {grads}. What does it send to its inputs?",
                name=question.name, grads=received)]
    if question.saved is None:
        lines.append(tr("Its saved tensors are not known (the graph was not read at this pause)."))
    elif question.saved:
        lines.append(tr("Saved for backward: {saved}", saved="; ".join(saved_text(e) for e in question.saved)))
    else:
        lines.append(tr("It saved nothing for backward."))
    if question.targets:
        inputs = join_words([f"grad_input[{i}] → {target}" for i, target in enumerate(question.targets)])
    else:
        inputs = join_words([f"grad_input[{i}]" for i in range(question.count)])
    lines.append(tr("1 input gradient: {inputs}", inputs=inputs) if question.count == 1
                 else tr("{n} input gradients: {inputs}", n=question.count, inputs=inputs))
    return lines


@dataclass
class BackwardDrill:
    """The drill of the replay on screen: its questions, the ones answered or skipped, and the progress.

    Parameters
    ----------
    progress : Progress, optional
        Where answers are recorded (nowhere when None).
    lesson : callable, optional
        The file stem of the lesson the answers belong to (None: not recorded).
    """

    progress: Progress | None = None
    lesson: Callable[[], str | None] = lambda: None
    enabled: bool = False
    questions: dict[int, DrillQuestion] = field(default_factory=dict)
    """The replay's questions by position (the nodes too big to ask included, marked ``too_big``)."""
    done: set[int] = field(default_factory=set)
    """Positions answered or skipped since the replay was loaded or restarted: not asked again."""
    asking: DrillQuestion | None = None

    def load(self, questions: Sequence[DrillQuestion]) -> None:
        """A new replay: its questions, none asked yet."""
        self.questions = {q.position: q for q in questions}
        self.done = set()
        self.asking = None

    def rearm(self) -> None:
        """The replay starts over: every question is asked again."""
        self.done = set()
        self.asking = None

    def question_at(self, position: int) -> DrillQuestion | None:
        """The question to ask before the step at ``position`` runs, if the drill is on and it was not asked."""
        question = self.questions.get(position)
        if not self.enabled or question is None or question.too_big or position in self.done:
            return None
        self.asking = question
        return question

    def answer(self, text: str) -> DrillVerdict:
        """Judge the answer to the open question and record it; an unreadable answer raises AnswerError."""
        question = self.asking
        if question is None:
            raise RuntimeError("no drill question is open")
        verdict = judge(question, text)
        self.asking = None
        self.done.add(question.position)
        lesson = self.lesson()
        if self.progress is not None and lesson:
            self.progress.record_drill(lesson, question.key, verdict.right)
        return verdict

    def skip(self) -> DrillQuestion | None:
        """Go on without answering: nothing is recorded and the question is not asked again."""
        question, self.asking = self.asking, None
        if question is not None:
            self.done.add(question.position)
        return question

    def cancel(self) -> None:
        """The replay moved elsewhere while asking: the question is closed, and asked again next time."""
        self.asking = None
