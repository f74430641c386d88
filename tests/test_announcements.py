"""What a screen reader hears after each step: the line that ran, the nodes it made, what changed."""

from __future__ import annotations

from app import i18n
from app.announcements import step_announcement
from app.graph_model import GraphModel
from app.shown_step import Step


def tensor(**flags) -> dict:
    return {"type": "Tensor", **flags}


def test_a_step_says_the_line_that_ran_the_nodes_it_made_and_the_grad_state_that_changed():
    graph = GraphModel()
    graph.set_graph({"nodes": [{"id": 1, "name": "AccumulateGrad", "next": []},
                               {"id": 2, "name": "MulBackward0", "next": [[1, 0]]},
                               {"id": 3, "name": "AddBackward0", "next": [[2, 0]]}], "roots": {}}, new=[2, 3])
    before = {"line": 4, "vars": {"x": tensor(requires_grad=False), "w": tensor(requires_grad=True)}}
    step = Step("live", {"line": 5}, {"x": tensor(requires_grad=True), "w": tensor(requires_grad=True),
                                      "y": tensor(requires_grad=True, grad_fn="AddBackward0")}, {}, before, 6,
                previous_line=5, off=None)
    assert step_announcement(step, graph) == ("Line 5 ran; paused on line 6; 2 new node(s): MulBackward0 and "
                                              "AddBackward0; x requires grad; y is new, requires grad.")
    i18n.set_language("zh")
    try:
        assert step_announcement(step, graph) == ("第 5 行已运行；暂停在第 6 行；2 个新节点：MulBackward0 和 "
                                                  "AddBackward0；x 需要梯度；y 是新的，需要梯度。")
    finally:
        i18n.set_language("en")


def test_a_past_step_and_the_end_say_where_the_learner_is():
    graph = GraphModel()
    past = Step("past", {"line": 9}, index=2, off="past")
    assert step_announcement(past, graph) == "Step 3, line 9, as it was."
    assert step_announcement(Step("ended", {"line": 9}, off="ended"), graph) == "The run ended."
    assert step_announcement(Step(), graph) == ""


def test_a_grad_that_changed_is_said_and_values_are_never_compared_as_arrays():
    import numpy as np

    grad = {"type": "Tensor", "id": 7, "version": 0, "values": np.arange(3.0)}
    before = {"vars": {"w": tensor(requires_grad=True, grad=grad)}}
    same = Step("live", {"line": 2}, {"w": tensor(requires_grad=True, grad={**grad, "values": np.arange(3.0)})},
                {}, before, 3, off=None)
    assert step_announcement(same, GraphModel()) == "Paused on line 3."
    bumped = Step("live", {"line": 2}, {"w": tensor(requires_grad=True, grad={**grad, "version": 1})}, {}, before, 3,
                  off=None)
    assert step_announcement(bumped, GraphModel()) == "Paused on line 3; w.grad changed."


def test_the_window_announces_each_step(qtbot, window_on):
    from test_main_window import wait_paused

    source = "import torch\n\nx = torch.ones(2, requires_grad=True)\ny = x * 2\nprint(y)\n"
    window = window_on(source)
    window.commands.step_over()
    wait_paused(qtbot, window)
    line = source.splitlines().index("y = x * 2") + 1
    window.code_view.go_to_line(line)
    window.commands.run_to_cursor()
    qtbot.waitUntil(lambda: window.run.live["line"] == line and window.session.state == "paused")
    window.commands.step_over()
    qtbot.waitUntil(lambda: window.run.live["line"] == line + 1 and window.session.state == "paused")
    assert window.status.announcement == (f"Line {line} ran; paused on line {line + 1}; 2 new node(s): "
                                          "MulBackward0 and AccumulateGrad; y is new, requires grad.")
    assert window.status.accessibleDescription() == window.status.announcement
