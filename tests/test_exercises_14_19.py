"""Lessons 14 to 19 ask before they tell: their predictions, and the checks of their "Try it" exercises.

Every prediction's right answer is judged right (and an obvious wrong answer wrong) by the
lesson process, as the app asks it: the run stops at the prediction's line, steps over it,
then asks. Every exercise's check is false on the lesson as shipped and true on a copy with
the change that exercise asks for, written here as (old text, new text) replacements; no
check raises on either.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from test_exercises import run
from test_lesson_facts import lesson_path
from test_new_lessons import NEW_LESSONS as FILES

from app.lesson_format import parse_lesson

#: Seconds to wait for the next message of a run.
WAIT = 120

#: Each lesson's predictions in file order: (expression, right answer, an obvious wrong answer).
PREDICTIONS: dict[str, list[tuple[str, str, str]]] = {
    "14": [
        ("h.grad", "[8., 16., 24.]", "[4., 8., 12.]"),  # retain_grad() stores the hook's result
        ('torch.equal(seen["grad_output"], weights)', "True", "False"),
        ("out.grad_fn", "BackwardHookFunctionBackward", "AddmmBackward0"),
        ("fired[3]", "out: tensor hook", "inputs: tensor hook"),
    ],
    "15": [
        ("same_twice", "False", "True"),
        ("norm.num_batches_tracked.item()", "3", "2"),  # no_grad() leaves BatchNorm counting
        ("evaluated.requires_grad", "True", "False"),  # eval() leaves autograd on
    ],
    "16": [
        ("x.grad", "None", "[9., 15., 29.]"),
        ("first.requires_grad", "True", "False"),
        ("per_sample.shape", "[5, 3]", "[3]"),
    ],
    "17": [
        ("abs_grad[1].item()", "0", "nan"),
        ("int(x.grad.isnan().sum())", "2", "1"),  # 0 x inf at 0 and 0 x nan at -1
        ("clamp_grad[1].item()", "inf", "0"),
        ("v.grad[0].item()", "nan", "0"),
    ],
    "18": [
        ("accumulated_grad.allclose(full_grad)", "True", "False"),
        ("norm_after.item()", "0.5", "6.211"),  # clipped to max_norm, not the norm it had
        ("micro_model.weight.grad", "None", "[[0., 0., 0.]]"),
        ("w.grad.requires_grad", "True", "False"),
    ],
    "19": [
        ("count_nodes(h)", "10", "8"),  # 4 per step and the two AccumulateGrad nodes
        ("h_n.shape", "[1, 3, 1]", "[3, 5, 1]"),
        ("same_states", "True", "False"),
    ],
}

#: Each lesson's exercises in order: the change each asks for, as (old text, new text) replacements.
CHANGES: dict[str, list[list[tuple[str, str]]]] = {
    "14": [
        [("    return grad * 2\n", "    return None\n")],
        [
            (
                '    print("post-accumulate hook sees w.grad:", param.grad)\n',
                '    print("post-accumulate hook sees w.grad:", param.grad)\n    param.grad = None\n',
            ),
            (
                "(w * torch.tensor([1.0, 2.0])).sum().backward()\n",
                "(w * torch.tensor([1.0, 2.0])).sum().backward()\n(w * torch.tensor([1.0, 2.0])).sum().backward()\n",
            ),
        ],
    ],
    "15": [
        [
            (
                "with torch.no_grad():\n    quiet = model(batch)",
                "model.eval()\nwith torch.no_grad():\n    quiet = model(batch)",
            )
        ],
        [("with torch.inference_mode():\n", "with torch.no_grad():\n")],
    ],
    "16": [
        [
            (
                "by_jacrev = jacrev(spread)(x)\n",
                "by_jacrev = jacrev(spread)(x)\nsummed_grad = grad(lambda v: spread(v).sum())(x)\n",
            )
        ],
        [("    return (x**3).sum() + x.prod()\n", "    return torch.sin(x).sum() * x.prod()\n")],
    ],
    "17": [
        [("masked = torch.where(x > 0, root, 0.0)", "masked = torch.where(x >= 0, root, 0.0)")],
        [("torch.sqrt((v**2).sum()).backward()", "torch.sqrt((v**2).sum() + 1e-12).backward()")],
    ],
    "18": [
        [
            (
                "targets[:8].chunk(ACCUMULATE), strict=True):\n"
                "    (mse_loss(micro_model(micro_x), micro_y) / ACCUMULATE).backward()",
                "targets[:8].chunk(ACCUMULATE), strict=True):\n    mse_loss(micro_model(micro_x), micro_y).backward()",
            )
        ],
        [
            (
                "zip(inputs[:8].chunk(ACCUMULATE), targets[:8].chunk(ACCUMULATE), strict=True):\n"
                "    (mse_loss(micro_model(micro_x), micro_y) / ACCUMULATE)",
                "zip(inputs[:8].split([3, 3, 2]), targets[:8].split([3, 3, 2]), strict=True):\n"
                "    (mse_loss(micro_model(micro_x), micro_y) / 3)",
            )
        ],
    ],
    "19": [
        [
            (
                "sequences = [torch.randn(2), torch.randn(5), torch.randn(3)]",
                "sequences = [torch.randn(2), torch.randn(5), torch.randn(3), torch.randn(1)]",
            )
        ],
        [
            (
                'print("one level further:", node.name(), "->",'
                " [parent.name() for parent, _ in node.next_functions])\n",
                'print("one level further:", node.name(), "->",'
                " [parent.name() for parent, _ in node.next_functions])\n"
                "node = node.next_functions[0][0]\nnode = node.next_functions[0][0]\n",
            )
        ],
    ],
}

EXERCISES = [(number, n) for number in FILES for n in range(len(CHANGES[number]))]


def changed(source: str, replacements: list[tuple[str, str]]) -> str:
    """``source`` with each replacement made; each old text is in the lesson exactly once."""
    for old, new in replacements:
        assert source.count(old) == 1, f"{old!r} should occur once in the lesson"
        source = source.replace(old, new)
    return source


def run_with_checks(path: Path, checks: list[str]) -> list[dict[str, Any]]:
    """Run ``path`` through the engine to its end; the results of ``checks`` there."""
    ended, _ = run(path, checks)
    assert ended.status == "ok", ended
    return ended.checks


def check_expressions(number: str) -> list[str]:
    return [check.expression for check in parse_lesson(lesson_path(number)).checks]


@pytest.mark.parametrize("number", sorted(FILES))
def test_each_lesson_asks_three_predictions_and_checks_every_exercise_of_its_try_it(number):
    lesson = parse_lesson(lesson_path(number))
    assert len(lesson.predictions) >= 3
    assert [p.expression for p in lesson.predictions] == [expression for expression, _, _ in PREDICTIONS[number]]
    for prediction, (_, right, wrong) in zip(lesson.predictions, PREDICTIONS[number], strict=True):
        if prediction.choices:  # the answers tested here are ones the learner can pick
            assert right in prediction.choices and wrong in prediction.choices, prediction
    try_it = lesson.notes[-1]
    numbered = {lang: re.findall(r"^(\d+)\. ", try_it.text[lang], re.M) for lang in ("en", "zh")}
    assert numbered["en"] == numbered["zh"] == [str(n) for n in range(1, len(numbered["en"]) + 1)]
    checks = [check for check in lesson.checks if try_it.contains(check.line)]
    assert [check.exercise for check in checks] == list(range(1, len(numbered["en"]) + 1))
    assert checks == lesson.checks, "every check belongs to an exercise of the Try it cell"
    assert len(CHANGES[number]) == len(checks)


@pytest.fixture(scope="module")
def shipped_results(tmp_path_factory):
    """The check results of each lesson as shipped, run from a copy in a temporary folder (once per lesson)."""
    results: dict[str, list[dict[str, Any]]] = {}

    def results_of(number: str) -> list[dict[str, Any]]:
        if number not in results:
            path = tmp_path_factory.mktemp(f"shipped_{number}") / FILES[number]
            path.write_text(lesson_path(number).read_text(encoding="utf-8"), encoding="utf-8")
            results[number] = run_with_checks(path, check_expressions(number))
        return results[number]

    return results_of


@pytest.mark.timeout(600)
@pytest.mark.parametrize("number, exercise", EXERCISES, ids=[f"{n}-{e + 1}" for n, e in EXERCISES])
def test_a_check_is_false_as_shipped_and_true_once_its_exercise_is_done(number, exercise, tmp_path, shipped_results):
    checks = check_expressions(number)
    shipped = shipped_results(number)
    assert [(r["passed"], r["error"]) for r in shipped] == [(False, None)] * len(checks)
    source = changed(lesson_path(number).read_text(encoding="utf-8"), CHANGES[number][exercise])
    path = tmp_path / FILES[number]
    path.write_text(source, encoding="utf-8")
    assert check_expressions(number) == [c.expression for c in parse_lesson(path).checks]
    result = run_with_checks(path, checks)[exercise]
    assert (result["passed"], result["error"]) == (True, None), result


@pytest.mark.timeout(300)
@pytest.mark.parametrize("number", sorted(FILES))
def test_each_prediction_s_right_answer_is_judged_right_through_the_engine(number):
    """As the app asks: stop at the line, step over it, then ask the lesson to judge the answer."""
    path = lesson_path(number)
    lesson = parse_lesson(path)
    answers = {p.line: PREDICTIONS[number][n] for n, p in enumerate(lesson.predictions)}
    message, judged = run(path, [], {line: (expression, [right, wrong])
                                     for line, (expression, right, wrong) in answers.items()})
    assert message.status == "ok", message
    replies = [reply for by_answer in judged.values() for reply in by_answer.values()]
    assert all(reply["ok"] for reply in replies), replies
    verdicts = {answers[line][0]: (by_answer[answers[line][1]]["right"], by_answer[answers[line][2]]["right"])
                for line, by_answer in judged.items()}
    assert verdicts == {expression: (True, False) for expression, _, _ in PREDICTIONS[number]}
