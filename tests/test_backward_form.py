"""The Backward panel's model: requests, the result and when it goes stale, and the replay; no Qt."""

from __future__ import annotations

import textwrap
from unittest.mock import Mock

import pytest
import torch

from app.backward_drill import BackwardDrill, split_commas
from app.backward_form import EXPRESSION, ONES_LIKE, BackwardForm, GradRequest
from app.backward_replay import position_text
from app.graph_model import GraphModel
from app.lesson.autograd_actions import AutogradActions
from app.lesson.autograd_graph import GraphTracker
from app.lesson.summaries import Summarizer

LESSON_07 = """
    x = torch.tensor([1.0, 2.0, 3.0])
    w = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
    h = x * w
    loss = (h**2).sum()
"""


class Lesson:
    """A paused frame of real tensors, told to the models as the main window does: graph first, then variables."""

    def __init__(self, source: str = LESSON_07, form: BackwardForm | None = None) -> None:
        self.namespace: dict = {"torch": torch}
        self.actions = AutogradActions(self.namespace, self.namespace, Summarizer())
        self.tracker = GraphTracker(Summarizer().tensors)
        self.form = form or BackwardForm(GraphModel(), BackwardDrill())
        self.graph = self.form.graph
        exec(textwrap.dedent(source), self.namespace)
        self.pause()

    def vars(self) -> dict:
        summarize = Summarizer().summarize
        return {name: summarize(value) for name, value in self.namespace.items()
                if name not in ("torch", "__builtins__")}

    def pause(self) -> None:
        self.graph.apply_diff(self.tracker.update(self.namespace))
        self.form.set_variables(self.vars())
        self.form.set_state(True)

    def step(self, line: str) -> None:
        """Resume, run one line, pause after it."""
        self.form.set_state(False)
        exec(line, self.namespace)
        self.pause()

    def backward(self, retain_graph: bool = True) -> None:
        """Run backward() on the form's root, as the window shows its reply."""
        params = self.form.backward_params()
        result = self.actions.run_backward(params["root"], params["gradient"], retain_graph or None)
        self.form.show_result("backward", result)
        self.form.set_variables(self.vars())
        self.graph.apply_diff(self.tracker.update(self.namespace))

    def preview(self) -> None:
        self.form.show_result("preview", self.actions.preview_gradients(self.form.backward_params()["root"]))


def listened(model, *names: str) -> dict[str, Mock]:
    mocks = {name: Mock() for name in names}
    for name, mock in mocks.items():
        getattr(model, name).connect(mock)
    return mocks


# ---- the requests -----------------------------------------------------------------------------


def test_the_roots_offered_follow_the_newest_loss_unless_the_learner_chose_one():
    lesson = Lesson()
    form = lesson.form
    told = listened(form, "variables_changed", "request_changed")
    assert form.roots == ["w", "h", "loss"] and form.root == "loss"  # x needs no grad
    form.set_root("h", chosen=True)
    told["request_changed"].assert_called_once_with()
    assert form.backward.gradient == ONES_LIKE  # h is not a scalar
    lesson.step("loss2 = (h**3).sum()")
    assert form.root == "h"  # the learner's choice stays
    told["variables_changed"].assert_called_once_with()
    form.forget_expressions()
    lesson.step("loss3 = h.sum()")
    assert form.root == "loss3"


def test_the_backward_request_carries_the_gradient_the_root_needs():
    form = Lesson().form
    assert form.backward_params() == {"root": "loss", "gradient": None, "retain_graph": None, "create_graph": False}
    form.set_root("h")
    assert form.backward_params()["gradient"] == "torch.ones_like(h)"
    form.set_backward(gradient=EXPRESSION, expression=" torch.tensor([1., 0., 0.]) ", retain_graph=True)
    assert form.backward_params() == {"root": "h", "gradient": "torch.tensor([1., 0., 0.])", "retain_graph": True,
                                      "create_graph": False}
    form.set_root("loss")
    assert form.backward.gradient is None  # a scalar: automatic again


def test_the_grad_request_splits_expressions_and_says_when_it_frees_the_graph():
    request = GradRequest(outputs="y", inputs="x, torch.ones(2, 3), ", grad_outputs="")
    assert request.params() == {"outputs": ["y"], "inputs": ["x", "torch.ones(2, 3)"], "grad_outputs": None,
                                "retain_graph": True, "create_graph": False, "allow_unused": False}
    assert not request.frees_graph
    assert GradRequest(retain_graph=False).frees_graph
    assert not GradRequest(retain_graph=False, create_graph=True).frees_graph
    form = Lesson().form
    told = listened(form, "request_changed")
    form.set_grad(outputs="loss", retain_graph=False)
    form.set_grad(outputs="loss")  # no change: nothing told
    assert told["request_changed"].call_count == 1
    form.forget_expressions()
    assert form.grad == GradRequest()


def test_one_comma_splitter_for_expressions_and_drill_answers():
    assert split_commas("[1, 2], None, {'a': 1, 'b': 2}") == ["[1, 2]", "None", "{'a': 1, 'b': 2}"]
    assert split_commas("1, , 2") == ["1", "", "2"]  # an answer with a gap is not read as [1, 2]


# ---- the result and its staleness ----------------------------------------------------------------


def test_a_result_is_shown_and_its_replay_starts_before_the_first_node():
    lesson = Lesson()
    form, graph = lesson.form, lesson.graph
    told = listened(form, "result_changed", "freshness_changed")
    loaded = listened(form.replay, "loaded")["loaded"]
    lesson.backward()
    told["result_changed"].assert_called_once_with()
    loaded.assert_called_once_with()
    assert form.shown[0] == "backward" and form.basis.kind == "backward"
    assert [e["name"] for e in form.replay.entries] == ["SumBackward0", "PowBackward0", "MulBackward0",
                                                        "AccumulateGrad"]
    assert form.replay.position == -1 and graph.active is None
    assert form.freshness is None  # its own changes (w.grad, the graph's diff) do not make it stale


def test_a_rebuilt_graph_drops_the_result_and_the_graphs_mark():
    lesson = Lesson()
    form, graph = lesson.form, lesson.graph
    lesson.backward()
    form.replay.step_forward()
    assert graph.active == form.replay.entries[0]["id"]
    told = listened(form, "result_changed", "freshness_changed")
    lesson.step("h = x * w; loss = (h**2).sum()")
    assert form.shown is None and form.basis is None and form.replay.entries == []
    assert graph.active is None
    assert form.freshness[0] == "stale" and "3 nodes it walked are no longer in it" in form.freshness[1]
    assert form.stale_kind == "backward"
    told["result_changed"].assert_called_once_with()
    told["freshness_changed"].assert_called_once_with()


def test_a_changed_grad_in_the_frames_variables_drops_the_result():
    lesson = Lesson()
    lesson.backward()
    lesson.form.set_state(False)
    lesson.namespace["w"].grad.zero_()  # the graph does not change: only the variables say it
    lesson.form.set_variables(lesson.vars())
    assert lesson.form.shown is None
    assert lesson.form.freshness[1].startswith("w.grad changed since this backward().")


def test_a_whole_graph_without_the_walked_nodes_drops_the_result_but_a_past_steps_graph_does_not():
    lesson = Lesson()
    form, graph = lesson.form, lesson.graph
    lesson.preview()
    walked = form.replay.entries
    form.show_past(0)
    graph.set_graph({"nodes": [], "edges": [], "roots": {}, "leaves": {}}, past=0)  # the past step's graph
    assert form.shown is not None
    form.show_past(None)
    graph.set_graph(lesson.tracker.full())  # the live graph again: still the one walked
    assert form.shown is not None and form.replay.entries == walked
    lesson.namespace.update(h=None, loss=None)
    graph.set_graph(GraphTracker(Summarizer().tensors).full())  # rebuilt without it
    assert form.shown is None and form.freshness[0] == "stale"


def test_a_result_that_still_matches_stays_marked_as_from_an_earlier_pause():
    lesson = Lesson()
    form = lesson.form
    lesson.preview()
    told = listened(form, "freshness_changed")
    lesson.step("other = (2 * w).sum()")  # a new graph beside the previewed one
    assert form.shown is not None and form.freshness == ("earlier", None)
    told["freshness_changed"].assert_called_once_with()
    lesson.preview()  # a fresh result is not from an earlier pause
    assert form.freshness is None


def test_the_reason_a_result_went_is_news_at_that_pause_only():
    lesson = Lesson()
    lesson.preview()
    lesson.step("loss.backward()")  # frees the previewed graph
    assert lesson.form.freshness[0] == "stale"
    assert "saved tensors were freed" in lesson.form.freshness[1]
    lesson.form.set_state(False)
    assert lesson.form.freshness is None


def test_a_step_before_the_result_hides_it_and_stops_its_replay():
    lesson = Lesson()
    form = lesson.form
    form.show_result("preview", lesson.actions.preview_gradients("loss"), step=3)
    form.replay.play()
    told = listened(form, "state_changed")
    form.show_past(2)
    assert form.hidden and not form.replay.playing
    told["state_changed"].assert_called_once_with()
    form.show_past(3)
    assert not form.hidden
    form.show_past(None)
    assert not form.hidden and form.shown is not None


def test_requests_wait_while_a_prediction_about_the_line_is_open():
    form = Lesson().form
    form.set_state(True)
    told = listened(form, "state_changed")
    form.set_predicting(True)
    assert form.paused and not form.open
    form.set_predicting(True)  # asked again (a verdict above the next question): no news
    form.set_predicting(False)
    assert form.open and told["state_changed"].call_count == 2
    form.set_predicting(True)
    form.set_state(False, "past")
    assert not form.open and form.why_off == "past"


# ---- the replay ---------------------------------------------------------------------------------


def test_the_replay_moves_node_by_node_and_marks_each_in_the_graph():
    lesson = Lesson()
    replay, graph = lesson.form.replay, lesson.graph
    lesson.backward()
    told = listened(replay, "moved", "playing_changed")
    marked = listened(graph, "active_changed")["active_changed"]
    replay.play()
    assert replay.playing
    for entry in replay.entries:
        replay.step_forward()  # the view's timer
        assert graph.active == entry["id"]
    replay.step_forward()
    assert replay.position == len(replay.entries) and graph.active is None and not replay.playing
    assert [c.args[0] for c in marked.call_args_list] == [e["id"] for e in replay.entries] + [None]
    assert told["playing_changed"].call_count == 2
    replay.step_back()
    assert replay.position == len(replay.entries) - 1 and graph.active == replay.entries[-1]["id"]
    replay.restart()
    assert replay.position == -1 and graph.active is None
    assert told["moved"].call_count == len(replay.entries) + 3


def test_the_drill_asks_before_a_function_fires_and_the_replay_plays_on_after_the_answer():
    lesson = Lesson()
    replay, graph = lesson.form.replay, lesson.graph
    lesson.backward()
    asked = listened(replay, "asked")["asked"]
    replay.set_drill(True)
    replay.play()
    replay.step_forward()
    question = asked.call_args.args[0]
    assert question.name == "SumBackward0" and replay.position == -1  # not fired yet
    assert graph.active == question.node_id and not replay.playing
    replay.step_forward()  # waits for the answer
    assert replay.position == -1
    replay.drill.skip()
    replay.fire(question.position)
    assert replay.position == 0 and replay.playing


def test_turning_the_drill_off_closes_the_question_and_marks_the_step_shown():
    lesson = Lesson()
    replay, graph = lesson.form.replay, lesson.graph
    lesson.backward()
    replay.step_forward()  # drill off: the first node fires
    replay.set_drill(True)
    closed = listened(replay, "question_closed")["question_closed"]
    replay.step_forward()
    assert graph.active == replay.entries[1]["id"] and replay.drill.asking is not None
    replay.set_drill(False)
    closed.assert_called_once_with()
    assert replay.drill.asking is None and graph.active == replay.entries[0]["id"] and replay.position == 0


def test_each_step_is_said_in_words_with_where_its_gradients_go():
    lesson = Lesson()
    replay = lesson.form.replay
    lesson.backward()
    assert position_text(replay) == ("4 nodes (3 backward functions, 1 AccumulateGrad) ran in this pass, "
                                             "from the root toward the leaves: press play or step forward.")
    replay.go_to(2)
    assert position_text(replay) == \
        "3/4 MulBackward0: receives grad [1, -4, 12] from its output, sends [1, -8, 36] to w"
    replay.go_to(4)
    assert position_text(replay) == ("Done: 4 nodes (3 backward functions, 1 AccumulateGrad) ran and every "
                                             "reachable leaf's .grad is filled in.")


@pytest.mark.parametrize("kind", ["preview", "grad"])
def test_a_preview_or_grad_result_is_not_judged_on_its_own_grads(kind):
    lesson = Lesson()
    result = lesson.actions.preview_gradients("loss") if kind == "preview" \
        else lesson.actions.autograd_grad("loss", "w", retain_graph=True)
    lesson.form.show_result(kind, result)
    lesson.step("scale = torch.tensor(2.0)")
    assert lesson.form.shown is not None and lesson.form.freshness == ("earlier", None)
