"""A prediction is asked before it is told: nothing on the screen while GradStep asks holds the answer.

While GradStep waits for the learner's answer, the run is paused on the prediction's line and
the learner sees:

* the Lesson notes: :func:`app.lesson_format.notes_for_line`, the nearest notes cell above the
  line, in English and in Chinese;
* the code pane from the top of the file to the line: the module docstring, the code and its
  comments (notes cells above fold to one line; their text is the notes');
* the output the lesson printed so far;
* the Variables view at that pause.

None of them may state the right answer (the one ``tests/test_exercises.py`` judges right); a
lesson tells it in the notes cell after the line, read once the line has run. The code itself
is what the learner reasons from, so only its prose counts (docstrings and comments, the
``# predict:`` comment that asks excepted). A value written out counts; a paraphrase ("a node
named after the operation", "the inputs keep requires_grad") is beyond a rule, so the ways a
lesson once gave an answer away are listed in ``WORKINGS``, and must be told after the line.
"""

from __future__ import annotations

import ast
import io
import math
import re
import tokenize
from pathlib import Path

import pytest
from test_exercises import ANSWERS

from app.lesson_format import LANGUAGES, notes_after, notes_for_line, parse_lesson

LESSONS = Path(__file__).resolve().parent.parent / "lessons"
LESSON_FILES = sorted(LESSONS.glob("[0-9][0-9]_*.py"))

_NUMBER = r"(?:[-+]?(?:\d+\.?\d*|\.\d+)(?:e[-+]?\d+)?|[-+]?inf|nan)"
#: A bracketed run of numbers in text or in an answer: ``[0., 1., 4.]``, ``(3, 5, 3)``, ``[1, 2, 3]``.
_NUMBER_LIST = re.compile(rf"[\[(]\s*((?:{_NUMBER})(?:\s*,\s*(?:{_NUMBER}))*)\s*,?\s*[\])]")
_SCALAR = re.compile(rf"^(?:{_NUMBER})$")


def _numbers(text: str) -> list[float]:
    return [float(n) for n in re.findall(_NUMBER, text)]


def _same(left: list[float], right: list[float]) -> bool:
    return len(left) == len(right) and all(
        (math.isnan(a) and math.isnan(b)) or math.isclose(a, b, rel_tol=1e-3, abs_tol=1e-3)
        for a, b in zip(left, right, strict=True))


def tells(answer: str, notes: str) -> bool:
    """Whether ``notes`` state ``answer``, the way it could be written in a note.

    A tensor, list or shape is stated when the notes hold the same numbers in brackets
    (``[1, 2, 3]`` states ``tensor([1., 2., 3.])``); a number of two characters or more when
    it stands alone (``13``, ``0.5``, ``4 MB`` for ``4.0``); a single digit is too common in
    prose to count. Anything else (a node's name, ``True``, a line of code) is stated when it
    appears as a whole word.
    """
    text = notes.replace("`", "")
    listed = [_numbers(group) for group in _NUMBER_LIST.findall(answer)]
    if listed:
        inner = listed[-1]  # [[0., 0., 0.]] states its innermost row
        return any(_same(inner, _numbers(group)) for group in _NUMBER_LIST.findall(text))
    if _SCALAR.match(answer):
        if len(answer) < 2:
            return False
        value = float(answer)
        return any(_same([value], [float(n)]) for n in re.findall(rf"(?<![\w.]){_NUMBER}(?!\w|\.\d)", text))
    # A keyword argument (``create_graph=True``) is code the note quotes, not a value it states.
    return re.search(rf"(?<![\w.=]){re.escape(answer)}(?!\w)", text) is not None


# ---- the rule on small texts -------------------------------------------------------------------


@pytest.mark.parametrize(("answer", "notes", "told"), [
    ("MulBackward0", "`b.grad_fn` is `MulBackward0`.", True),
    ("MulBackward0", "a node named after the operation", False),
    ("False", "`decision` requires grad: False.", True),
    ("False", "GradStep asks whether `z` is a leaf.", False),
    ("True", "By hand with `create_graph=True` (lesson 8)", False),
    ("tensor([1., 2., 3.])", "so `y.grad` holds the values of `x`, [1, 2, 3].", True),
    ("tensor([1., 2., 3.])", "`x` is [1, 2, 3, 4]", False),
    ("[[0., 0., 0.]]", "it stays [0, 0, 0]", True),
    ("(3, 5, 3)", "the shape is (3, 5, 3)", True),
    ("13", "Step 0 found 13: nine of its own", True),
    ("13", "lesson 13", True),
    ("13", "130 nodes", False),
    ("4.0", "so 4 MB in all", True),
    ("0.5", "`max_norm` 0.5", True),
    ("1", "lesson 1", False),
    ("inf", "an infinite gradient", False),
    ("inf", "its gradient at 0 is inf.", True),
    ("logged", "the first one, `logged`", True),
    ("logged", "`first_nan` names a step", False),
])
def test_what_counts_as_telling_the_answer(answer, notes, told):
    assert tells(answer, notes) is told


# ---- what else the screen says: the code's prose and the output --------------------------------

_TOO_COMMON = ("True", "False", "None")


def states(expression: str, answer: str, text: str) -> bool:
    """Whether ``text`` says that ``expression`` is ``answer``, within one line.

    The expression, then within a few words ``:``, ``=``, "is", 是, 为 or 等于 and the answer
    standing alone: ``b._version after mul_: 2``. This catches what :func:`tells` lets pass as
    too common on its own, a digit or ``True`` said of the very value asked for.
    """
    name = r"\s*".join(re.escape(char) for char in expression.replace(" ", ""))
    said = rf"{name}[^\n]{{0,40}}?(?:[:=]|\bis\b|是|为|等于)[ \t]*{re.escape(answer)}(?![\w]|\.\d)"
    return re.search(said, text.replace("`", "")) is not None


def told(expression: str, answer: str, text: str) -> bool:
    """Whether prose that is not the question's own notes (a docstring, a comment, the output) tells the answer.

    ``True``, ``False`` and ``None`` stand in such text for many things, so they count only when
    :func:`states` finds them said of the expression.
    """
    return states(expression, answer, text) or (answer not in _TOO_COMMON and tells(answer, text))


def code_prose(source: str, line: int) -> str:
    """What the code pane shows as prose from the top of ``source`` to ``line``: docstrings and comments.

    Notes cells are left out (they fold to one line, and their text is the notes'), and so is
    the ``# predict:`` comment that asks: its choices are the question, not an answer.
    """
    lesson = parse_lesson(source)
    in_notes = {n for section in lesson.notes for n in range(section.start_line, section.end_line + 1)}
    found = []
    for node in ast.walk(ast.parse(source)):
        body = getattr(node, "body", None)
        if (isinstance(body, list) and body and isinstance(body[0], ast.Expr)
                and isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str)
                and body[0].lineno <= line):
            found.append(body[0].value.value)
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.start[0] > line:
            break
        if (token.type == tokenize.COMMENT and token.start[0] not in in_notes
                and not re.match(r"#\s*predict:", token.string)):
            found.append(token.string)
    return "\n".join(found)


@pytest.mark.parametrize(("expression", "answer", "text", "said"), [
    ("b._version", "2", "b._version after mul_: 2", True),
    ("b._version", "2", "b.add_(2) changes b._version", False),
    ("same_states", "True", "USE_PDB = False  # True stops in pdb", False),
    ("same_states", "True", "so it equals finals (`same_states` is True)", True),
    ("x.grad", "None", "`x.grad` 仍然是 None", True),
    ("x.grad", "None", "x.grad:\nNone of them", False),
])
def test_what_counts_as_saying_the_value_asked_for(expression, answer, text, said):
    assert states(expression, answer, text) is said


def test_the_code_prose_is_the_docstrings_and_comments_above_the_line_without_the_question():
    source = ('"""Lesson: it ends at 42."""\n\n# %% [markdown]\n# [en]\n# # T\n# S 17\n# [zh]\n# # T\n# S 17\n\n'
              '# %%\ndef f():\n    """Returns 55."""\n    return "a literal 66"  # a comment 77\n'
              'y = f()  # predict: y | 55 | 88\nz = 1  # after: 99\n')
    prose = code_prose(source, 15)
    assert [n for n in ("42", "55", "77") if n in prose] == ["42", "55", "77"]
    assert [n for n in ("17", "66", "88", "99") if n in prose] == []


# ---- every prediction of every lesson ----------------------------------------------------------


@pytest.mark.parametrize("path", LESSON_FILES, ids=lambda p: p.stem)
def test_the_notes_and_code_shown_at_a_prediction_do_not_state_its_answer(path):
    source = path.read_text(encoding="utf-8")
    lesson = parse_lesson(source)
    found = []
    for prediction, entry in zip(lesson.predictions, ANSWERS[path.stem], strict=True):
        expression, answer = prediction.expression, entry[1]
        for lang in LANGUAGES:
            if tells(answer, notes_for_line(lesson, prediction.line, lang)):
                found.append(f"line {prediction.line} [{lang} notes]: {expression} = {answer}")
        if told(expression, answer, code_prose(source, prediction.line)):
            found.append(f"line {prediction.line} [code above]: {expression} = {answer}")
    assert found == [], "the notes or the code on screen while GradStep asks already tell the answer"


def _flat(text: str, lang: str) -> str:
    """``text`` without Markdown's backticks and stars, its lines joined (Chinese without the spaces)."""
    text = text.replace("`", "").replace("*", "")
    return " ".join(text.split()) if lang == "en" else "".join(text.split())


#: Per lesson, the n-th prediction (0-based): how its answer was once worked out or given away on
#: the screen while GradStep asked, per language. None of it may be shown while it asks (the notes
#: shown, the code's prose above the line); the note after the line says it.
WORKINGS: dict[tuple[str, int], dict[str, list[str]]] = {
    ("07_backward", 0): {lang: ["2 * w * x**2", "2 * h * x", "2 * h"] for lang in LANGUAGES},
    ("07_backward", 2): {lang: ["u @ A", "A[i, j]"] for lang in LANGUAGES},
    ("11_inplace_version", 0): {"en": ["counts the in-place changes", "from 0"],
                                "zh": ["经历的原地操作次数", "从0开始"]},
    # Each lesson's docstring, always at the top of the code pane, once told these (issue 33).
    ("01_dynamic_graphs", 1): {"en": ["gives NaN without any error"], "zh": ["对负数取torch.log"]},
    ("04_variable_length", 2): {"en": ["no gradient reaches the pads"], "zh": ["完全没有得到梯度"]},
    ("05_requires_grad", 3): {"en": ["shares data but leaves the graph"], "zh": ["frozen与z共享内存"]},
    ("06_no_grad", 0): {"en": ["inputs keep requires_grad"], "zh": ["输入仍然需要梯度"]},
    ("06_no_grad", 1): {"en": ["results that do not require grad"], "zh": ["结果不再需要"]},
    ("08_autograd_grad", 0): {"en": ["leaves .grad untouched"], "zh": ["不碰任何.grad"]},
    ("08_autograd_grad", 1): {"en": ["makes the gradient itself differentiable"],
                              "zh": ["把反向传播的过程本身也记录成了计算图"]},
    ("08_autograd_grad", 2): {"en": ["one gradient per input"], "zh": ["每个输入一个梯度"]},
    ("09_retain_graph", 2): {"en": ["frees them"], "zh": ["普通的backward则会释放它们"]},
    ("10_trace_vs_script", 0): {"en": ["a wrong answer for inputs"], "zh": ["只保留了在positive上实际执行的那个分支"]},
    ("10_trace_vs_script", 1): {"en": ["keeps the if"], "zh": ["if和其余代码一起被编译了"]},
    ("10_trace_vs_script", 2): {"en": ["splits the model into graphs at the if"], "zh": ["断图一次，生成两张图"]},
    ("12_custom_function", 0): {"en": ["named after your class"], "zh": ["以你的类命名"]},
    ("14_hooks", 0): {"en": ["after the tensor's other hooks have run"], "zh": ["其他钩子都运行完之后才存下来"]},
    ("15_eval_nograd_inference", 1): {"en": ["BatchNorm still updates"], "zh": ["BatchNorm也计入了这个批量"]},
    ("15_eval_nograd_inference", 2): {"en": ["output still requires grad"], "zh": ["evaluated仍然需要梯度"]},
    ("16_torch_func", 0): {"en": ["without .grad or grad_fn"], "zh": ["torch.func没有在你的张量上记录任何东西"]},
    ("17_nan_gradients", 0): {"en": ["give 0 at 0"], "zh": ["它们在0处的梯度就是0"]},
    ("17_nan_gradients", 2): {"en": ["gives inf at 0"], "zh": ["clamp把x=0算作范围之内"]},
    ("17_nan_gradients", 3): {"en": ["hand-written norm gives NaN"], "zh": ["手写的范数得到NaN"]},
    ("18_accumulation_and_two_losses", 0): {"en": ["give the full-batch gradient"],
                                            "zh": ["累加起来的.grad就是整个批量的梯度"]},
    ("18_accumulation_and_two_losses", 2): {"en": ["of the listed leaves only"], "zh": ["只计算并累加了偏置的梯度"]},
    ("19_variable_length_no_padding", 2): {"en": ["gives the same final states"], "zh": ["它与循环得到的finals相等"]},
}


@pytest.mark.parametrize(("stem", "index"), sorted(WORKINGS), ids=lambda v: str(v))
def test_the_screen_at_a_prediction_does_not_work_out_its_answer_and_the_note_after_does(stem, index):
    """Lesson 7 asked w.grad under "dloss/dw = 2 * w * x**2"; lesson 6's docstring said the inputs keep it."""
    path = LESSONS / f"{stem}.py"
    source = path.read_text(encoding="utf-8")
    lesson = parse_lesson(source)
    line = lesson.predictions[index].line
    for lang, workings in WORKINGS[stem, index].items():
        shown = _flat(notes_for_line(lesson, line, lang) + "\n" + code_prose(source, line), lang)
        after = _flat(notes_after(lesson, line).text[lang], lang)
        assert [w for w in workings if _flat(w, lang) in shown] == [], (lang, "told while asking")
        assert [w for w in workings if _flat(w, lang) not in after] == [], (lang, "the note after the line explains it")


# ---- the Variables view at a prediction ---------------------------------------------------------


def _shown_values(summary: dict) -> list[str]:
    """What the Variables view shows of one variable that could read as an answer: a string or a number whole.

    A tensor's row shows a preview and statistics, not an answer to compare: the values a tensor answer
    states are the notes' business (above). True, False and None are too common to count.
    """
    if summary.get("type") == "str" and isinstance(summary.get("value"), str):
        return [summary["value"]]
    value = summary.get("value")
    if isinstance(value, int | float) and not isinstance(value, bool):
        return [repr(value)]
    return []


def shows(answer: str, variables: dict[str, dict]) -> list[str]:
    """The variables whose shown value is ``answer`` (a name, or a number of two characters or more)."""
    found = []
    for name, summary in variables.items():
        for shown in _shown_values(summary):
            if _SCALAR.match(answer) and _SCALAR.match(shown):
                if len(answer) >= 2 and _same([float(answer)], [float(shown)]):
                    found.append(name)
            elif shown == answer and answer not in ("True", "False", "None"):
                found.append(name)
    return found


@pytest.mark.parametrize(("answer", "variables", "found"), [
    ("logged", {"name": {"type": "str", "value": "logged"}}, ["name"]),
    ("logged", {"logged": {"type": "Tensor", "shape": [4]}}, []),  # the row of the value, not the answer
    ("13", {"nodes": {"type": "int", "value": 13}}, ["nodes"]),
    ("1", {"count": {"type": "int", "value": 1}}, []),
    ("-1.0", {"z": {"type": "float", "value": -1.0}}, ["z"]),
    ("None", {"first_nan": {"type": "NoneType", "value": None}}, []),
])
def test_what_counts_as_a_variable_showing_the_answer(answer, variables, found):
    assert shows(answer, variables) == found


@pytest.mark.timeout(300)
@pytest.mark.parametrize("path", LESSON_FILES, ids=lambda p: p.stem)
def test_the_output_and_variables_shown_at_a_prediction_do_not_hold_its_answer(tmp_path, path):
    """Lesson 1 asked ``first_nan`` while Variables showed ``name = 'logged'``; lesson 11 asked ``b._version``
    under the printed "b._version after mul_: 2".

    The lesson runs through the engine as in the app, stopping at each prediction before its line
    runs; what it printed up to there is the output on screen. The output is the run's data, as
    the code is: a value printed there is one to reason from, unless a line says it of the very
    expression asked for (:func:`states`).
    """
    import queue
    import shutil

    from conftest import borrow, give_back

    from app import messages as m

    shutil.copy(LESSONS / "course.py", tmp_path / "course.py")
    lesson = parse_lesson(path)
    copy = tmp_path / path.name
    copy.write_text(path.read_text(encoding="utf-8"), encoding="utf-8")
    answers = {p.line: (p.expression, entry[1])
               for p, entry in zip(lesson.predictions, ANSWERS[path.stem], strict=True)}
    pending = dict.fromkeys(answers)
    events: queue.Queue = queue.Queue()
    session = borrow(events.put)
    shown, output = [], []
    try:
        session.breakpoints[str(copy)] = dict(pending)
        session.start(str(copy), stop_on_entry=False)
        while not isinstance(message := events.get(timeout=120), m.Ended):
            if isinstance(message, m.Output):
                output.append(message.text)
            if not isinstance(message, m.Paused):
                continue
            snapshot = message.snapshot
            line = snapshot["line"]
            if snapshot["event"] == "line" and snapshot["file"] == str(copy) and line in pending:
                del pending[line]  # asked once per run
                session.set_breakpoints(str(copy), dict(pending))
                expression, answer = answers[line]
                names = shows(answer, {**snapshot["globals"], **snapshot["vars"]})
                if names:
                    shown.append(f"line {line}: {expression} = {answer} is shown in Variables as {names}")
                if states(expression, answer, "".join(output)):
                    shown.append(f"line {line}: {expression} = {answer} is in the output")
            session.resume()
    finally:
        give_back(session)
    assert message.status == "ok", message.error
    assert pending == {}, "every prediction was reached"
    assert shown == [], "the output or the Variables view shows the answer while GradStep asks"
