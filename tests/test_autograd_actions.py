"""Autograd actions in a paused frame: results checked against PyTorch run directly, errors explained."""

from __future__ import annotations

import textwrap

import pytest
import torch

from app.lesson.autograd_actions import AutogradActions, explain
from app.lesson.autograd_graph import GraphTracker
from app.lesson.summaries import Summarizer, TensorSummarizer

SOURCE = """
    import torch
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    w = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
    b = torch.tensor([0.1, 0.2, 0.3], requires_grad=True)
    y = x * w + b
    loss = (y * y).sum()
"""


def frame(source: str = SOURCE) -> dict:
    """The namespace of a module-level frame paused after ``source``."""
    namespace: dict = {}
    exec(textwrap.dedent(source), namespace)
    return namespace


@pytest.fixture
def ns() -> dict:
    return frame()


@pytest.fixture
def actions(ns) -> AutogradActions:
    return AutogradActions(ns, ns, Summarizer())


def values(summary: dict | None) -> list | None:
    return None if summary is None else summary["values"].tolist()


def grads_by_name(result: dict, key: str = "grad") -> dict:
    return {row["name"]: values(row[key]) for row in result["grads"]}


def assert_close(actual: dict, expected: dict) -> None:
    assert actual.keys() == expected.keys()
    for name, grad in expected.items():
        assert actual[name] == pytest.approx(grad), name


def expected_grads(source: str, root: str, names: str) -> dict:
    """What a plain ``backward()`` on a fresh copy of the frame gives."""
    fresh = frame(source)
    fresh[root].backward()
    return {name: fresh[name].grad.tolist() for name in names}


# -- preview ----------------------------------------------------------------------------------


def test_preview_gives_the_gradients_of_every_leaf_and_changes_nothing(ns, actions):
    result = actions.preview_gradients("loss")
    assert result["ok"] and result["error"] is None
    assert result["vector_jacobian_product"] is False and result["gradient"] is None
    assert_close(grads_by_name(result), expected_grads(SOURCE, "loss", "xwb"))
    assert ns["x"].grad is None and ns["w"].grad is None
    ns["loss"].backward()  # the graph was retained
    assert ns["x"].grad.tolist() == pytest.approx(grads_by_name(result)["x"])


def test_preview_of_a_vector_root_is_a_vector_jacobian_product(ns, actions):
    ones = actions.preview_gradients("y")
    assert ones["vector_jacobian_product"] is True
    assert values(ones["gradient"]) == [1.0, 1.0, 1.0]
    assert grads_by_name(ones) == {"x": [0.5, -1.0, 2.0], "w": [1.0, 2.0, 3.0], "b": [1.0, 1.0, 1.0]}
    chosen = actions.preview_gradients("y", inputs=["w"], gradient="torch.tensor([1.0, 0.0, 2.0])")
    assert grads_by_name(chosen) == {"w": [1.0, 0.0, 6.0]}
    assert values(chosen["gradient"]) == [1.0, 0.0, 2.0]


def test_preview_leaves_the_grad_of_retaining_tensors_alone(ns, actions):
    ns["y"].retain_grad()
    assert actions.preview_gradients("loss")["ok"]
    assert ns["y"].grad is None
    ns["loss"].backward()
    assert ns["y"].grad.tolist() == pytest.approx((2 * ns["y"]).tolist())


# -- backward ---------------------------------------------------------------------------------


def test_backward_reports_each_leaf_before_and_after_and_frees_the_graph(ns, actions):
    tracker = GraphTracker(TensorSummarizer())
    graph = tracker.update(ns)
    result = actions.run_backward("loss")
    assert result["ok"]
    assert grads_by_name(result, "before") == {"x": None, "w": None, "b": None}
    assert_close(grads_by_name(result, "after"), expected_grads(SOURCE, "loss", "xwb"))
    assert ns["x"].grad.tolist() == pytest.approx(grads_by_name(result, "after")["x"])
    multiplications = {n["id"] for n in graph["added"] if n["name"] == "MulBackward0"}
    assert result["freed"] is True
    assert set(result["freed_nodes"]) == multiplications  # x * w and y * y saved tensors; + and sum did not
    freed = {n["id"] for n in tracker.update(ns)["updated"] if any(e["freed"] for e in n["saved"])}
    assert freed == multiplications


def test_a_second_backward_with_retain_graph_accumulates(ns, actions):
    first = actions.run_backward("loss", retain_graph=True)
    assert first["freed"] is False and first["freed_nodes"] == []
    second = actions.run_backward("loss")
    once = expected_grads(SOURCE, "loss", "x")["x"]
    assert grads_by_name(second, "before")["x"] == pytest.approx(once)
    assert grads_by_name(second, "after")["x"] == pytest.approx([2 * g for g in once])
    assert second["freed"] is True


def test_backward_with_inputs_and_gradient_touches_only_the_chosen_leaves(ns, actions):
    result = actions.run_backward("y", gradient="torch.tensor([1.0, 2.0, 3.0])", inputs=["w"])
    assert result["ok"] and [row["name"] for row in result["grads"]] == ["w"]
    assert grads_by_name(result, "after") == {"w": [1.0, 4.0, 9.0]}
    assert ns["x"].grad is None and ns["b"].grad is None


def test_backward_shows_the_grad_of_a_tensor_that_retains_it(ns, actions):
    assert actions.retain_grad("y")["summary"]["retains_grad"] is True
    result = actions.run_backward("loss")
    rows = {row["name"]: row for row in result["grads"]}
    assert rows["y"]["is_leaf"] is False
    assert values(rows["y"]["after"]) == pytest.approx((2 * ns["y"]).tolist())


@pytest.mark.filterwarnings("ignore:Using backward\\(\\) with create_graph=True")
def test_backward_with_create_graph_gives_a_differentiable_grad():
    source = """
        import torch
        x = torch.tensor([1.0, 2.0], requires_grad=True)
        y = (x ** 3).sum()
    """
    ns = frame(source)
    actions = AutogradActions(ns, ns, Summarizer())
    first = actions.run_backward("y", create_graph=True)
    assert grads_by_name(first, "after") == {"x": [3.0, 12.0]}
    assert first["grads"][0]["after"]["grad_fn"] is not None  # the grad is itself part of a graph
    second = actions.autograd_grad("x.grad.sum()", "x")
    assert grads_by_name(second) == {"x": [6.0, 12.0]}


# -- autograd.grad ----------------------------------------------------------------------------


def test_autograd_grad_gives_second_derivatives_through_its_kept_results():
    ns = frame("""
        import torch
        x = torch.tensor([1.0, 2.0], requires_grad=True)
        y = (x ** 3).sum()
    """)
    actions = AutogradActions(ns, ns, Summarizer())
    first = actions.autograd_grad("y", "x", create_graph=True)
    assert first["ok"] and grads_by_name(first) == {"x": [3.0, 12.0]}
    second = actions.autograd_grad("_grads[0].sum()", ["x"])
    assert grads_by_name(second) == {"x": [6.0, 12.0]}
    direct = torch.autograd.grad(torch.autograd.grad((ns["x"] ** 3).sum(), ns["x"], create_graph=True)[0].sum(),
                                 ns["x"])[0]
    assert grads_by_name(second)["x"] == direct.tolist()
    assert ns["x"].grad is None and "_grads" not in ns


def test_autograd_grad_with_grad_outputs_and_unused_inputs(ns, actions):
    ns["u"] = torch.ones(3, requires_grad=True)
    result = actions.autograd_grad(["x * w"], ["x", "u"], grad_outputs=["torch.tensor([1.0, 0.0, 1.0])"],
                                   allow_unused=True)
    assert grads_by_name(result) == {"x": [0.5, 0.0, 2.0], "u": None}


# -- grads ------------------------------------------------------------------------------------


def test_zero_grad_zeroes_in_place_and_clear_grad_sets_none(ns, actions):
    ns["loss"].backward()
    grad = ns["x"].grad
    before = grad.tolist()
    zeroed = actions.zero_grad(["x", "w"])
    assert zeroed["ok"]
    assert grads_by_name(zeroed, "before")["x"] == before
    assert grads_by_name(zeroed, "after") == {"x": [0.0, 0.0, 0.0], "w": [0.0, 0.0, 0.0]}
    assert ns["x"].grad is grad
    cleared = actions.clear_grad("x")
    assert grads_by_name(cleared, "after") == {"x": None} and ns["x"].grad is None


def test_zero_grad_of_a_module_covers_its_parameters():
    ns = frame("""
        import torch
        model = torch.nn.Linear(2, 1)
        model(torch.ones(1, 2)).sum().backward()
    """)
    result = AutogradActions(ns, ns, Summarizer()).zero_grad("model")
    assert grads_by_name(result, "after") == {"model.weight": [[0.0, 0.0]], "model.bias": [0.0]}


def test_evaluate_summarises_any_expression(actions):
    result = actions.evaluate("x * 2")
    assert result["ok"] and values(result["summary"]) == [2.0, 4.0, 6.0]
    assert result["summary"]["grad_fn"] == "MulBackward0" and result["warning"] is None
    assert actions.evaluate("len([1, 2])")["summary"]["value"] == 2


# -- errors -----------------------------------------------------------------------------------


def pytorch_message(source: str, statement: str) -> str:
    """The message PyTorch itself raises for ``statement`` in a fresh copy of the frame."""
    fresh = frame(source)
    with pytest.raises(RuntimeError) as raised:
        exec(statement, fresh)
    return str(raised.value)


def test_a_second_backward_through_a_freed_graph_is_explained(actions):
    assert actions.run_backward("loss")["ok"]
    result = actions.run_backward("loss")
    error = result["error"]
    assert result["ok"] is False
    assert error["message"] == pytorch_message(SOURCE, "loss.backward()\nloss.backward()")
    assert error["type"] == "RuntimeError" and error["lesson"] == "09_retain_graph"
    assert "retain_graph=True" in error["fix"] and "saved" in error["explanation"]
    assert actions.preview_gradients("x * 2", gradient="torch.ones(3)")["ok"]  # still usable


def test_a_vector_root_without_gradient_is_explained(ns, actions):
    result = actions.run_backward("y")
    assert result["error"]["message"] == pytorch_message(SOURCE, "y.backward()")
    assert result["error"]["lesson"] == "07_backward"
    assert "ones_like" in result["error"]["fix"]
    assert ns["x"].grad is None


def test_an_in_place_change_of_a_saved_tensor_shows_the_versions(ns, actions):
    source = SOURCE + "    a = x * 2\n    s = a.sin()\n    a.mul_(2)\n"
    ns = frame(source)
    result = AutogradActions(ns, ns, Summarizer()).run_backward("s.sum()")
    error = result["error"]
    assert error["message"] == pytorch_message(source, "s.sum().backward()")
    assert error["lesson"] == "11_inplace_version"
    assert error["versions"] == {"found": 1, "expected": 0}
    assert "was 0" in error["explanation"] and "now 1" in error["explanation"]


def test_a_tensor_that_does_not_require_grad_is_explained(actions):
    messages = [
        actions.run_backward("torch.ones(2).sum()")["error"],
        actions.preview_gradients("torch.ones(2).sum()")["error"],
        actions.autograd_grad("y.sum()", "torch.ones(3)")["error"],
        actions.retain_grad("torch.ones(2)")["error"],
    ]
    assert [m["lesson"] for m in messages] == ["05_requires_grad"] * 4
    assert messages[0]["message"] == "element 0 of tensors does not require grad and does not have a grad_fn"
    assert messages[3]["message"] == "can't retain_grad on Tensor that has requires_grad=False"


def test_the_grad_of_a_non_leaf_is_explained(ns, actions):
    ns["loss"].backward()
    watched = actions.evaluate("y.grad")
    assert watched["ok"] and watched["summary"]["value"] is None
    assert watched["warning"]["lesson"] == "07_backward" and "retain_grad" in watched["warning"]["fix"]
    refused = actions.zero_grad(["x", "y"])
    assert refused["ok"] is False and refused["error"]["type"] == "UserWarning"
    assert refused["error"]["message"] == watched["warning"]["message"]
    assert ns["x"].grad is not None and ns["x"].grad.abs().sum() > 0  # nothing was changed


def test_an_input_the_output_does_not_use_is_explained(ns, actions):
    ns["u"] = torch.ones(3, requires_grad=True)
    error = actions.autograd_grad("y.sum()", "u")["error"]
    assert "appears to not have been used in the graph" in error["message"]
    assert error["lesson"] == "08_autograd_grad" and "allow_unused=True" in error["fix"]


def test_other_errors_come_with_a_generic_explanation(actions):
    error = actions.evaluate("undefined_name + 1")["error"]
    assert error["type"] == "NameError" and "undefined_name" in error["message"]
    assert error["lesson"] is None and error["fix"] is None and error["explanation"]
    assert actions.run_backward("3")["error"]["message"] == "3 is a int, not a tensor"
    assert explain("plain text", "Note")["type"] == "Note"


# -- backward replay --------------------------------------------------------------------------


def assert_reverse_topological(steps: list[dict], edges: list[list[int]]) -> None:
    """Each node runs after every node that sends it a gradient."""
    position = {step["id"]: i for i, step in enumerate(steps)}
    assert len(position) == len(steps)
    for source, target, _ in edges:
        if source in position and target in position:
            assert position[source] < position[target]


def rnn_frame(steps: int) -> dict:
    return frame(f"""
        import torch
        torch.manual_seed(0)
        W_xh = torch.randn(2, 3, requires_grad=True)
        W_hh = torch.randn(3, 3, requires_grad=True)
        b = torch.zeros(3, requires_grad=True)
        h = torch.zeros(1, 3)
        for t in range({steps}):
            h = torch.tanh(torch.randn(1, 2) @ W_xh + h @ W_hh + b)
        loss = h.sum()
    """)


def test_replay_runs_every_node_after_those_feeding_it_with_the_trackers_ids():
    ns = rnn_frame(6)
    tracker = GraphTracker(TensorSummarizer())
    tracker.update(ns)
    full = tracker.full()
    result = AutogradActions(ns, ns, Summarizer()).run_backward("loss")
    steps = result["replay"]
    assert {s["id"] for s in steps} == {n["id"] for n in full["nodes"]}
    assert_reverse_topological(steps, full["edges"])
    assert steps[0]["name"] == "SumBackward0" and steps[0]["id"] == full["roots"]["loss"]
    leaves = {s["variable"]: s for s in steps if s["kind"] == "leaf"}
    assert sorted(leaves) == ["W_hh", "W_xh", "b"]
    assert values(leaves["b"]["grad"]) == pytest.approx(ns["b"].grad.tolist())


def test_replay_shows_the_gradients_flowing_through_each_node(actions):
    result = actions.run_backward("(x * w).sum()")
    names = [s["name"] for s in result["replay"]]
    assert names[:2] == ["SumBackward0", "MulBackward0"] and names.count("AccumulateGrad") == 2
    mul = result["replay"][1]
    assert [values(g) for g in mul["grads_in"]] == [[1.0, 1.0, 1.0]]
    assert [values(g) for g in mul["grads_out"]] == [[0.5, -1.0, 2.0], [1.0, 2.0, 3.0]]
    x_step = next(s for s in result["replay"] if s["variable"] == "x")
    assert values(x_step["grads_in"][0]) == values(x_step["grad"]) == [0.5, -1.0, 2.0]
    assert x_step["grads_out"] == []


LESSON_01 = """
    import torch
    torch.manual_seed(0)
    a = torch.randn(3, requires_grad=True)
    w = torch.randn(3, requires_grad=True)
    b = a * w
    c = torch.exp(b)
    loss = c.sum()
"""


def test_preview_and_backward_of_one_graph_walk_the_same_nodes():
    """Lesson 01 said "3 nodes ran" for a preview and "5 nodes ran" for a backward of the same loss:
    autograd.grad hands the leaves' gradients back without running their AccumulateGrad nodes."""
    ns = frame(LESSON_01)
    actions = AutogradActions(ns, ns, Summarizer())
    preview = actions.preview_gradients("loss")
    assert ns["a"].grad is None and ns["w"].grad is None
    run = actions.run_backward("loss")
    assert [s["name"] for s in preview["replay"]] == ["SumBackward0", "ExpBackward0", "MulBackward0",
                                                      "AccumulateGrad", "AccumulateGrad"]
    assert [(s["id"], s["name"]) for s in preview["replay"]] == [(s["id"], s["name"]) for s in run["replay"]]
    handed_back = {s["variable"]: s for s in preview["replay"] if s["kind"] == "leaf"}
    stored = {s["variable"]: s for s in run["replay"] if s["kind"] == "leaf"}
    assert sorted(handed_back) == sorted(stored) == ["a", "w"]
    for name in "aw":
        assert handed_back[name]["stored"] is False and handed_back[name]["grad"] is None
        assert stored[name]["stored"] is True and values(stored[name]["grad"]) == ns[name].grad.tolist()
        assert values(handed_back[name]["grads_in"][0]) == values(stored[name]["grads_in"][0])
        assert values(handed_back[name]["grads_in"][0]) == grads_by_name(preview)[name]


def test_replay_of_autograd_grad_and_preview_and_hooks_are_removed(ns, actions):
    tracker = GraphTracker(TensorSummarizer())
    tracker.update(ns)
    preview = actions.preview_gradients("loss")
    operations = ["SumBackward0", "MulBackward0", "AddBackward0", "MulBackward0"]
    assert [s["name"] for s in preview["replay"] if s["kind"] != "leaf"] == operations
    assert sorted(s["variable"] for s in preview["replay"] if s["kind"] == "leaf") == ["b", "w", "x"]
    assert_reverse_topological(preview["replay"], tracker.full()["edges"])
    grads = actions.autograd_grad("loss", "x", retain_graph=True)
    assert [s["name"] for s in grads["replay"] if s["kind"] != "leaf"] == operations
    assert [s["variable"] for s in grads["replay"] if s["kind"] == "leaf"] == ["x"]  # the only input
    recorded = len(grads["replay"]), len(preview["replay"])
    ns["loss"].backward()  # the lesson's own backward: no hook of ours is left to record it
    assert (len(grads["replay"]), len(preview["replay"])) == recorded
