"""The step in view, the window's questions and the stepping rules, without Qt.

The order a learner relies on: a change made from outside the lesson (Run backward(), a
console statement) is in the run's record before any panel hears of it, and a step back
shows the step as recorded.
"""

from __future__ import annotations

from unittest.mock import Mock

from app import messages as m
from app.graph_model import GraphModel
from app.requests import Requests
from app.run import Run
from app.shown_step import ShownStep, Step, grad_leaves
from app.stepping_rules import WindowState, allowed_actions


def node(node_id: int, name: str, *inputs: int) -> dict:
    return {"id": node_id, "name": name, "kind": "op", "next": [[i, 0] for i in inputs], "variable": None,
            "variables": []}


def pause(line: int, added: tuple = (), **values) -> dict:
    variables = {name: {"type": "int", "repr": repr(value)} for name, value in values.items()}
    return {"step": line, "line": line, "event": "line", "file": "lesson.py", "function": "<module>", "depth": 0,
            "stack": [{"function": "<module>", "line": line}], "vars": variables, "globals": {},
            "graph": {"changed": bool(added), "added": list(added), "updated": [], "removed": [], "edges_added": [],
                      "roots": {}, "leaves": {}}}


def shown_run() -> tuple[ShownStep, Run, Mock]:
    shown = ShownStep(GraphModel())
    run = Run("lesson.py")
    shown.set_run(run)
    told = Mock()
    shown.changed.connect(told)
    return shown, run, told


def test_a_pause_is_shown_live_with_its_graph_and_the_line_a_step_ran():
    shown, run, told = shown_run()
    shown.resumed(stepped=True)
    run.add_pause(pause(1, a=1))
    shown.resumed(stepped=True)
    run.add_pause(pause(2, (node(7, "MulBackward0"),), a=2))
    step = told.call_args.args[0]
    assert step.where == "live" and step.is_live and step.line == 2 and step.previous_line == 1
    assert step.before["line"] == 1 and step.variables["a"]["repr"] == "2"
    assert shown.graph.new == {7} and list(shown.graph.nodes) == [7]


def test_after_a_continue_no_line_is_said_to_have_just_run():
    shown, run, told = shown_run()
    run.add_pause(pause(1))
    shown.resumed(stepped=False)
    run.add_pause(pause(5))
    assert told.call_args.args[0].previous_line is None


def test_while_the_lesson_runs_the_last_pause_stays_in_view_but_cannot_be_asked():
    shown, run, told = shown_run()
    run.add_pause(pause(3, a=1))
    shown.resumed(stepped=True)
    step = told.call_args.args[0]
    assert step.off == "running" and step.line == 3 and step.variables["a"]["repr"] == "1"


def test_a_backward_reply_is_recorded_before_the_panels_hear_of_it():
    shown, run, _ = shown_run()
    run.add_pause(pause(1, (node(1, "SumBackward0"),), loss=1))
    order: list[str] = []
    shown.changed.connect(lambda step: order.append(f"told {len(run.history)} {run.live.get('changed_by')}"))
    shown.graph.changed.connect(lambda diff: order.append(f"graph {len(run.history)}"))
    diff = {"changed": True, "added": [node(2, "AccumulateGrad")], "removed": [], "updated": [], "roots": {},
            "leaves": {}}
    assert shown.take_reply("backward", {"vars": {"loss": {"type": "int", "repr": "2"}}, "globals": {},
                                         "graph": diff})
    assert order == ["graph 2", "told 2 backward"]  # recorded (two steps) before graph and panels hear
    step = shown.step
    assert step.where == "live" and step.variables["loss"]["repr"] == "2" and step.before["line"] == 1
    assert run.history.snapshot(1)["graph_full"]["nodes"][-1]["id"] == 2


def test_a_preview_changes_the_graph_and_is_no_step():
    shown, run, told = shown_run()
    run.add_pause(pause(1))
    calls = told.call_count
    diff = {"changed": True, "added": [node(4, "MulBackward0")], "removed": [], "updated": [], "roots": {},
            "leaves": {}}
    assert not shown.take_reply("preview", {"ok": True, "graph": diff})
    assert len(run.history) == 1 and told.call_count == calls and 4 in shown.graph.nodes


def test_step_back_shows_the_recorded_step_and_its_graph_then_live_again():
    shown, run, told = shown_run()
    run.add_pause(pause(1, a=1))
    run.add_pause(pause(2, (node(3, "AddBackward0"),), a=2))
    run.step_back()
    step = told.call_args.args[0]
    assert step.where == "past" and step.off == "past" and step.index == 0 and step.line == 1
    assert shown.graph.nodes == {}
    run.go_live()
    step = told.call_args.args[0]
    assert step.where == "live" and list(shown.graph.nodes) == [3] and shown.graph.new == {3}


def test_the_end_shows_the_module_as_the_run_left_it_and_nothing_about_to_run():
    shown, run, told = shown_run()
    run.add_pause(pause(4, a=1))
    run.end(m.Ended("ok", variables={"a": {"type": "int", "repr": "9"}}))
    step = told.call_args.args[0]
    assert step.where == "ended" and step.over and step.off == "ended"
    assert step.line is None and step.stack == [] and step.variables["a"]["repr"] == "9"


def test_another_frame_shows_its_variables_with_nothing_to_compare():
    shown, run, told = shown_run()
    run.add_pause(pause(2, a=1))
    shown.show_frame(1, {"ok": True, "vars": {"b": {"type": "int", "repr": "5"}}, "globals": {}, "graph": {}})
    step = told.call_args.args[0]
    assert step.frame == 1 and step.before is None and list(step.variables) == ["b"]


def test_a_new_run_clears_the_step_and_the_graph():
    shown, run, told = shown_run()
    run.add_pause(pause(1, (node(1, "SumBackward0"),)))
    shown.set_run(Run("lesson.py"))
    assert told.call_args.args[0] == Step() and shown.graph.nodes == {}


def test_grad_leaves_name_leaves_and_parameters_that_require_grad():
    variables = {"w": {"type": "Tensor", "requires_grad": True}, "y": {"type": "Tensor", "requires_grad": True,
                                                                      "grad_fn": "MulBackward0"},
                 "model": {"module": True, "parameters": [{"name": "weight", "requires_grad": True},
                                                          {"name": "bias", "requires_grad": False}]}}
    assert grad_leaves(variables) == ["w", "model.weight"]
    assert grad_leaves(variables, used=True) == []  # none has a .grad yet
    variables["w"]["grad"] = {"type": "Tensor"}
    variables["model"]["parameters"][0]["has_grad"] = True
    assert grad_leaves(variables, used=True) == ["w", "model.weight"]


def test_questions_are_sent_only_when_the_lesson_can_be_asked_and_answered_once():
    can = [True]
    sent: list[tuple] = []
    requests = Requests(lambda kind, **params: sent.append((kind, params)) or len(sent), lambda: can[0])
    answer = Mock()
    assert requests.ask("evaluate", answer, expression="x")
    can[0] = False
    assert not requests.ask("evaluate", answer, expression="y")
    assert sent == [("evaluate", {"expression": "x"})]
    requests.answered(1, {"ok": True})
    requests.answered(1, {"ok": False})
    answer.assert_called_once_with({"ok": True})
    can[0] = True
    requests.ask("frame", answer, index=1)
    requests.forget()
    requests.answered(2, {})
    assert answer.call_count == 1 and len(requests) == 0


def test_the_stepping_rules():
    none = allowed_actions(WindowState())
    assert not any(none[name] for name in ("start", "step_over", "stop", "save", "toggle_bp"))
    idle = allowed_actions(WindowState("idle", has_file=True))
    assert idle["start"] and idle["run_to_end"] and idle["save"] and not idle["step_out"] and not idle["stop"]
    paused = allowed_actions(WindowState("paused", has_file=True, can_step_back=True))
    assert paused["step_out"] and paused["stop"] and paused["step_back"] and not paused["run_to_end"]
    assert not paused["save"]  # the file the lesson runs is not saved under it
    running = allowed_actions(WindowState("running", has_file=True, can_step_back=True))
    assert running["pause"] and not running["step_back"] and not running["step_over"]
    elsewhere = allowed_actions(WindowState("ended", has_file=True, edited_elsewhere=True, revertible=True))
    assert elsewhere["restart"] and not elsewhere["save"] and not elsewhere["revert"]
