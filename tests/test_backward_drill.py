"""The backward drill without Qt: questions from real replays, answers parsed and judged, progress kept."""

from __future__ import annotations

import pytest
import torch

from app import i18n
from app.backward_drill import (
    AnswerError,
    BackwardDrill,
    judge,
    parse_answer,
    question_for,
    question_lines,
    verdict_text,
)
from app.lesson.autograd_actions import AutogradActions
from app.lesson.autograd_graph import GraphTracker
from app.lesson.summaries import Summarizer
from app.progress import LessonProgress, Progress


def replay_of(**values):
    """The replay of ``loss.backward()`` over real tensors, with the graph's nodes read before it ran."""
    namespace = {"torch": torch, **values}
    tracker = GraphTracker(Summarizer().tensors)
    tracker.update(namespace)
    nodes = {node["id"]: node for node in tracker.full()["nodes"]}
    result = AutogradActions(namespace, namespace, Summarizer()).run_backward("loss")
    assert result["ok"], result["error"]
    return result["replay"], nodes


def questions_of(**values):
    replay, nodes = replay_of(**values)
    return [question_for(entry, position, nodes.get(entry["id"]), root="loss")
            for position, entry in enumerate(replay)], replay


def product():
    """loss = (x * w).sum(): MulBackward0 sends [3, 4] to x and [1, 2] to w."""
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    w = torch.tensor([3.0, 4.0], requires_grad=True)
    return questions_of(x=x, w=w, loss=(x * w).sum())


def mul_question():
    questions, _ = product()
    return next(q for q in questions if q is not None and q.name == "MulBackward0")


@pytest.fixture
def english():
    yield
    i18n.set_language("en")


def test_backward_functions_are_asked_and_accumulate_grad_leaves_are_not():
    questions, replay = product()
    assert [e["name"] for e in replay] == ["SumBackward0", "MulBackward0", "AccumulateGrad", "AccumulateGrad"]
    assert [q is not None for q in questions] == [True, True, False, False]
    total, mul = questions[0], questions[1]
    assert total.position == 0 and total.count == 1 and total.key == "loss:0:SumBackward0"
    assert [g.tolist() for g in total.grad_outputs] == [1.0]
    assert mul.position == 1 and mul.count == 2 and mul.key == "loss:1:MulBackward0"
    assert [g.tolist() for g in mul.grad_outputs] == [[1.0, 1.0]]
    assert mul.answer_text() == "[3, 4], [1, 2]"


def test_a_node_that_sends_nothing_is_not_asked():
    entry = {"id": 1, "name": "MulBackward0", "kind": "op", "grads_in": [None], "grads_out": []}
    assert question_for(entry, 0) is None


def test_the_question_names_what_the_node_receives_saved_and_sends():
    lines = question_lines(mul_question())
    assert lines[0] == "Before MulBackward0 fires: it receives grad_output = [1, 1]. What does it send to its inputs?"
    assert lines[1] == "Saved for backward: _saved_other = [3, 4] (w); _saved_self = [1, 2] (x)"
    assert lines[2] == "2 input gradients: grad_input[0] and grad_input[1]"
    x = torch.ones(2, requires_grad=True)
    replay, _ = replay_of(x=x, loss=(x * 2).sum())
    unknown = question_for(replay[0], 0, None)  # no graph: the saved tensors are not known, and it says so
    assert "not known" in question_lines(unknown)[1]


def test_the_targets_are_named_when_every_input_has_a_node():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    w = torch.tensor([3.0, 4.0], requires_grad=True)
    replay, nodes = replay_of(x=x, w=w, loss=(x * w).sum())
    question = question_for(replay[1], 1, nodes[replay[1]["id"]], ["x", "w"])
    assert question_lines(question)[2] == "2 input gradients: grad_input[0] → x and grad_input[1] → w"
    assert question_for(replay[1], 1, nodes[replay[1]["id"]], ["x"]).targets == ()  # not one per input: not paired


def test_the_right_answer_is_right_within_the_tolerance():
    question = mul_question()
    for answer in ("[3, 4], [1, 2]", " [3.0, 4.0] , [1., 2.] ", "[3.001, 4], [1, 2.0001]", "(3, 4), [1, 2]",
                   "tensor([3., 4.]), tensor([1., 2.])"):
        verdict = judge(question, answer)
        assert verdict.right, answer
        assert verdict_text(verdict) == "✓ Right: MulBackward0 sends [3, 4], [1, 2]."


@pytest.mark.parametrize(("answer", "why"), [
    ("[3, 5], [1, 2]", "grad_input[0] is [3, 4], not [3, 5]"),
    ("[3.01, 4], [1, 2]", "grad_input[0] is [3, 4], not [3.01, 4]"),  # outside rtol 1e-3
    ("[1, 2], [3, 4]", "the right gradients in the wrong order"),
    ("[[3, 4]], [1, 2]", "grad_input[0] has the shape of its input, [2]; yours has [1, 2]"),
    ("[3, 4, 0], [1, 2]", "grad_input[0] has the shape of its input, [2]; yours has [3]"),
    ("7, [1, 2]", "grad_input[0] has the shape of its input, [2]; yours has []"),
    ("[3, 4]", "you gave 1 gradient(s) for its 2 input(s)"),
    ("[3, 4], [1, 2], 0", "you gave 3 gradient(s) for its 2 input(s)"),
    ("None, [1, 2]", "grad_input[0] is a gradient, not None"),
])
def test_a_wrong_answer_is_wrong_and_the_verdict_shows_the_right_values(answer, why):
    verdict = judge(mul_question(), answer)
    assert not verdict.right
    text = verdict_text(verdict)
    assert text.startswith("✗ Not quite: MulBackward0 sends [3, 4], [1, 2]; ")
    assert why in text


def test_a_none_gradient_is_answered_as_none():
    """c needs no gradient: MulBackward0 of x * c sends None for it."""
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    c = torch.tensor([5.0, 6.0])
    questions, _ = questions_of(x=x, c=c, loss=(x * c).sum())
    question = questions[1]
    assert question.answer_text() == "[5, 6], None"
    assert judge(question, "[5, 6], None").right
    assert not judge(question, "[5, 6], [0, 0]").right
    assert "no gradient flows to input 1: grad_input[1] is None" in verdict_text(judge(question, "[5, 6], [0, 0]"))
    assert not judge(question, "[5, 6]").right  # the None must be given too


@pytest.mark.parametrize(("answer", "says"), [
    ("", "type the gradients it sends"),
    ("   ", "type the gradients it sends"),
    ("[3, 4", "cannot be read"),
    ("2*x, [1, 2]", "is not a number"),
    ("x", "x is not a number"),
    ("'3', 4", "is not a number"),
    ("True", "is not a number"),
    ("[[1], [2, 3]]", "every row needs as many values"),
    ("[3, 4],, [1, 2]", "an empty gradient between two commas"),
])
def test_an_unreadable_answer_is_explained_not_judged(answer, says):
    with pytest.raises(AnswerError) as raised:
        judge(mul_question(), answer)
    assert says in str(raised.value)


def test_answers_parse_to_arrays_and_none():
    parsed = parse_answer("[2, 4], 3, None, [[1, -2.5e-1]], nan")
    assert [None if p is None else p.tolist() for p in parsed[:4]] == [[2.0, 4.0], 3.0, None, [[1.0, -0.25]]]
    assert parsed[4].shape == () and parsed[4] != parsed[4]  # NaN, as a NaN gradient prints


def test_texts_follow_the_language(english):
    question = mul_question()
    i18n.set_language("zh")
    assert question_lines(question)[0].startswith("MulBackward0 执行之前")
    assert verdict_text(judge(question, "[3, 4], [1, 2]")) == "✓ 答对了：MulBackward0 发送 [3, 4], [1, 2]。"
    assert "不是 [3, 5]" in verdict_text(judge(question, "[3, 5], [1, 2]"))
    with pytest.raises(AnswerError) as raised:
        judge(question, "[3, 4")
    assert "无法读取" in str(raised.value)


def test_nodes_with_too_many_values_to_work_out_are_not_asked():
    x = torch.ones(5, 5, requires_grad=True)
    questions, replay = questions_of(x=x, loss=x.sum() * 3)
    assert [e["name"] for e in replay[:2]] == ["MulBackward0", "SumBackward0"]
    assert not questions[0].too_big and questions[1].too_big  # SumBackward0 sends 25 values
    drill = BackwardDrill(enabled=True)
    drill.load([q for q in questions if q is not None])
    assert drill.question_at(0) is not None and drill.question_at(1) is None


def test_the_drill_asks_once_records_answers_and_skips_nothing(tmp_path):
    progress = Progress(tmp_path / "progress.json")
    questions, _ = product()
    drill = BackwardDrill(progress, lambda: "07_backward")
    drill.load([q for q in questions if q is not None])
    assert drill.question_at(0) is None  # off until ticked
    drill.enabled = True
    assert drill.question_at(2) is None  # a leaf
    assert drill.question_at(0).name == "SumBackward0"
    with pytest.raises(AnswerError):
        drill.answer("[1, 1")  # unreadable: still open, nothing recorded
    assert drill.asking is not None and progress.of("07_backward") == LessonProgress(0, 0, 0)
    assert drill.answer("[1, 1]").right
    assert drill.question_at(0) is None  # answered: not asked again on the way back and forth
    assert drill.question_at(1).name == "MulBackward0"
    assert not drill.answer("[1, 2], [3, 4]").right
    stored = Progress(tmp_path / "progress.json").of("07_backward")
    assert (stored.drills_right, stored.drills_answered) == (1, 2)
    assert (stored.right, stored.answered, stored.passed) == (0, 0, 0)  # predictions and exercises untouched

    drill.rearm()  # the replay restarts: asked again, the last answer counts
    drill.question_at(1)
    assert drill.skip().name == "MulBackward0"
    assert drill.question_at(1) is None and drill.asking is None
    assert Progress(tmp_path / "progress.json").of("07_backward").drills_answered == 2  # a skip records nothing
    drill.question_at(0)
    drill.cancel()  # the replay moved elsewhere: asked again next time
    assert drill.question_at(0) is not None


def test_drill_progress_is_kept_per_lesson_apart_from_predictions_and_reset_with_the_lesson(tmp_path):
    path = tmp_path / "progress.json"
    progress = Progress(path)
    progress.record_prediction("07_backward", "p1", True)
    progress.record_drill("07_backward", "loss:1:MulBackward0", False)
    progress.record_drill("07_backward", "loss:1:MulBackward0", True)  # the last answer counts
    progress.record_drill("07_backward", "loss:0:SumBackward0", False)
    progress.record_drill("08_autograd_grad", "z:0:MulBackward0", True)
    again = Progress(path)
    assert again.of("07_backward") == LessonProgress(right=1, answered=1, passed=0, drills_right=1, drills_answered=2)
    assert again.of("08_autograd_grad").drills_answered == 1
    again.reset("07_backward")
    assert Progress(path).of("07_backward") == LessonProgress(0, 0, 0)
    assert Progress(path).of("08_autograd_grad").drills_right == 1


def test_without_a_lesson_nothing_is_recorded(tmp_path):
    progress = Progress(tmp_path / "progress.json")
    questions, _ = product()
    drill = BackwardDrill(progress, lambda: None, enabled=True)
    drill.load([q for q in questions if q is not None])
    drill.question_at(0)
    assert drill.answer("[1, 1]").right
    assert not (tmp_path / "progress.json").exists()
