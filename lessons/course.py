"""Helpers the lessons share, kept out of the lesson files so that stepping a lesson stays on what it teaches.

GradStep steps through the lesson file only, so on a line that calls one of these, F11 runs
the whole helper as one step (a breakpoint set in this file makes it stepped like the lesson).
A lesson imports them with a plain ``from course import ...``: this module sits beside the
lessons, and GradStep puts a copy beside a learner's edited lessons, so ``python
lessons/03_loops.py`` works as well as a run in the app. The name is not a lesson's
(``NN_topic.py``), so the lesson list leaves this file out.

The lessons' exercise checks (``# check:`` lines) use it too, without the lesson importing
it: :func:`before`, :func:`after`, :func:`returned` and :func:`calls` run the lesson again
and read how a value was made, which a value typed in at the end of the file cannot fake.
"""

from __future__ import annotations

import ast
import builtins
import contextlib
import io
import linecache
import sys
import warnings
import weakref
from collections.abc import Iterable
from types import FrameType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import torch


def graph_nodes(tensor: torch.Tensor) -> list[str]:
    """The names of the autograd nodes behind ``tensor``, walking back from its ``grad_fn``.

    Each node is named once, however many paths lead to it; a tensor without a
    ``grad_fn`` has none.
    """
    names: list[str] = []
    stack, seen = [tensor.grad_fn], set()
    while stack:
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        names.append(node.name().rsplit("::", 1)[-1])
        stack.extend(parent for parent, _ in node.next_functions)
    return names


def count_nodes(tensor: torch.Tensor) -> int:
    """How many autograd nodes lie behind ``tensor`` (its leaves' ``AccumulateGrad`` nodes included)."""
    return len(graph_nodes(tensor))


def first_lines(caught: Iterable[warnings.WarningMessage]) -> list[str]:
    """Each distinct warning in ``caught`` as ``"Category: first sentence"``, in the order they came."""
    lines: list[str] = []
    for warning in caught:
        text = f"{warning.category.__name__}: {str(warning.message).split('. ')[0]}"
        if text not in lines:
            lines.append(text)
    return lines


def has_api(root: object, *names: str) -> bool:
    """Whether every dotted name exists under ``root``: ``has_api(torch, "jit.trace")``.

    A lesson uses it to skip, with a message, what the installed PyTorch lacks (or no
    longer has), instead of failing.
    """
    for name in names:
        target = root
        for part in name.split("."):
            if not hasattr(target, part):
                return False
            target = getattr(target, part)
    return True


class SavedTensors:
    """Notes every tensor a graph saves for backward, to measure how much of it is still alive.

    Its ``pack`` and ``unpack`` are a ``torch.autograd.graph.saved_tensors_hooks`` pair that
    stores each tensor unchanged; ``pack`` keeps only a weak reference, so the meter itself
    keeps nothing alive.
    """

    def __init__(self) -> None:
        self._refs: list[weakref.ref] = []

    def pack(self, tensor: torch.Tensor) -> torch.Tensor:
        """The pack hook: note a weak reference to ``tensor`` and store it as it is."""
        self._refs.append(weakref.ref(tensor))
        return tensor

    @staticmethod
    def unpack(tensor: torch.Tensor) -> torch.Tensor:
        """The unpack hook: the stored tensor, unchanged."""
        return tensor

    def megabytes(self) -> float:
        """Megabytes of the noted tensors that are still alive, a tensor shared by two nodes counted once."""
        alive = {tensor.data_ptr(): tensor for ref in self._refs if (tensor := ref()) is not None}
        return sum(t.numel() * t.element_size() for t in alive.values()) / 1e6


#: What :func:`torch.manual_seed` adds to the lesson's seed in a run on hidden inputs.
HIDDEN_SEED = 1009


class Raised:
    """What an expression of :func:`replay` raised instead of giving a value; false, so a check fails on it."""

    def __init__(self, error: BaseException) -> None:
        self.error = error

    def __bool__(self) -> bool:
        return False

    def __repr__(self) -> str:
        return f"<raised {type(self.error).__name__}: {self.error}>"


_replays: dict[tuple, list[Any]] = {}


def before(anchor: str, expression: str, *, hidden: bool = False) -> list[Any]:
    """What ``expression`` was each time, in a fresh run of the lesson, a line starting with ``anchor`` was
    about to run: the values its inputs had, the grad mode it ran under (``torch.is_grad_enabled()``).
    See :func:`replay`."""
    return replay("before", anchor, expression, hidden)


def after(anchor: str, expression: str, *, hidden: bool = False) -> list[Any]:
    """What ``expression`` was each time, in a fresh run of the lesson, a line starting with ``anchor`` had
    run (at the next line of its frame, or when the frame returns): what the line made, before any
    later line changed it. See :func:`replay`."""
    return replay("after", anchor, expression, hidden)


def returned(function: str, *, hidden: bool = False) -> list[Any]:
    """What each call of the lesson's function (or method, or hook) named ``function`` returned, in a
    fresh run of the lesson, in the order the calls ended: how many times a hook fired, and what it
    gave back. See :func:`replay`."""
    return replay("returned", function, None, hidden)


def calls(anchor: str, function: Any, *, hidden: bool = False) -> list[dict[str, Any]]:
    """The arguments of each call that a line starting with ``anchor`` made to ``function`` (a Python
    function: ``torch.func.grad``, ``torch.autograd.grad``, one of the lesson's), as {name: value},
    in a fresh run of the lesson: which API a line used, and with what (a function passed to it can
    then be called on inputs the lesson never used). See :func:`replay`."""
    return replay("calls", anchor, function.__code__, hidden)


def replay(mode: str, anchor: str, target: Any, hidden: bool = False) -> list[Any]:
    """Run the lesson again and record, in the order it happened, what ``mode`` asks for.

    A check at the end of a run reads values as the run left them, so a value assigned at
    the end of the file would pass it. This runs the lesson again, as it was run (unsaved
    edits too), in a new module, under a trace function of its own, and records: with
    ``mode`` "before" or "after", the value of the expression ``target`` in the frame of each
    line whose text, stripped, starts with ``anchor`` (an expression that raised gives a
    false :class:`Raised`); "returned", the return value of each call of the lesson's function
    named ``anchor``; "calls", the arguments of each call the ``anchor`` lines made to the code
    object ``target``. ``hidden`` draws other random inputs than the lesson's:
    :func:`torch.manual_seed` seeds ``HIDDEN_SEED`` later, so a value typed in fails.

    One run again answers this question and every other one the lesson's ``# check:`` lines
    ask with literal arguments, and its answers are kept for the process. The lesson prints
    nothing and warns nothing while it runs again; an error it raises is raised here.
    """
    main = sys.modules["__main__"]
    source = "".join(linecache.getlines(main.__file__))
    key = (main.__file__, source, mode, anchor, target, hidden)
    if key not in _replays:
        questions = [question for question in _asked(source, vars(main)) if question[2] == hidden]
        questions = list(dict.fromkeys([*questions, (mode, anchor, hidden, target)]))
        answers = _replay(main.__file__, source, [(m, a, t) for m, a, _, t in questions], hidden)
        for (m, a, h, t), values in zip(questions, answers, strict=True):
            _replays.setdefault((main.__file__, source, m, a, t, h), values)
    return _replays[key]


#: The helpers a check line may call: each asks :func:`replay` for the mode of its name.
_HELPERS = ("before", "after", "returned", "calls")


def _asked(source: str, namespace: dict[str, Any]) -> list[tuple[str, str, bool, Any]]:
    """The questions ``course.<helper>(...)`` calls with literal arguments in ``source``'s check lines ask:
    (mode, anchor, hidden, target) each, a ``calls`` target read from the lesson's ``namespace``."""
    questions = []
    for line in source.splitlines():
        text = line.strip()
        if not text.startswith("# check:"):
            continue
        try:
            tree = ast.parse(text.removeprefix("# check:").strip(), mode="eval")
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and isinstance(node.func.value, ast.Name) and node.func.value.id == "course"
                    and node.func.attr in _HELPERS and node.args and isinstance(node.args[0], ast.Constant)):
                continue
            hidden = any(k.arg == "hidden" and isinstance(k.value, ast.Constant) and k.value.value is True
                         for k in node.keywords)
            mode, anchor = node.func.attr, node.args[0].value
            if mode == "returned":
                questions.append((mode, anchor, hidden, None))
            elif len(node.args) == 2 and mode == "calls" and isinstance(node.args[1], ast.Name):
                function = namespace.get(node.args[1].id)
                if hasattr(function, "__code__"):
                    questions.append((mode, anchor, hidden, function.__code__))
            elif len(node.args) == 2 and isinstance(node.args[1], ast.Constant):
                questions.append((mode, anchor, hidden, node.args[1].value))
    return questions


def _inline(frame: FrameType) -> bool:
    """Whether ``frame`` runs a lambda or a comprehension: its lines are those of the statement it is in."""
    name = frame.f_code.co_name
    return name.startswith("<") and name != "<module>"


def _replay(path: str, source: str, questions: list[tuple[str, str, Any]], hidden: bool) -> list[list[Any]]:
    """Run ``source`` (the lesson at ``path``) once more; for each (mode, anchor, target) of ``questions``,
    the record :func:`replay` says."""
    import torch

    texts = [text.strip() for text in source.splitlines()]
    lines = [{n for n, text in enumerate(texts, 1) if text.startswith(anchor)} for _, anchor, _ in questions]
    values: list[list[Any]] = [[] for _ in questions]
    pending: list[set[FrameType]] = [set() for _ in questions]  # "after": frames whose anchor line ran

    def value(frame: FrameType, target: str) -> Any:
        try:
            return eval(target, frame.f_globals, frame.f_locals)  # noqa: S307 - the lesson's own check
        except Exception as exc:
            return Raised(exc)

    def local(frame: FrameType, event: str, arg: Any) -> Any:
        for (mode, anchor, target), at, found, waiting in zip(questions, lines, values, pending, strict=True):
            if mode == "returned":
                if event == "return" and frame.f_code.co_name == anchor:
                    found.append(arg)
            elif mode in ("before", "after"):
                if frame in waiting and event in ("line", "return"):
                    waiting.discard(frame)
                    found.append(value(frame, target))
                if event == "line" and frame.f_lineno in at and not _inline(frame):
                    if mode == "after":
                        waiting.add(frame)
                    else:
                        found.append(value(frame, target))
        return local

    def enter(frame: FrameType, event: str, arg: Any) -> Any:
        caller = frame.f_back
        if caller is not None and caller.f_code.co_filename == path:
            for (mode, _, target), at, found in zip(questions, lines, values, strict=True):
                if mode == "calls" and frame.f_code == target and caller.f_lineno in at:
                    found.append(dict(frame.f_locals))
        return local if frame.f_code.co_filename == path else None

    module = {"__name__": "__main__", "__file__": path, "__builtins__": builtins}
    seed = torch.manual_seed
    before, grad_mode = sys.gettrace(), torch.is_grad_enabled()
    if hidden:
        torch.manual_seed = lambda number: seed(number + HIDDEN_SEED)
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()), \
                warnings.catch_warnings():
            warnings.simplefilter("ignore")
            sys.settrace(enter)
            try:
                exec(compile(source, path, "exec"), module)  # noqa: S102 - the lesson itself
            finally:
                sys.settrace(before)
    finally:
        torch.manual_seed = seed
        torch.set_grad_enabled(grad_mode)
    return values
