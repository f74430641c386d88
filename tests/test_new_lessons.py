"""What lessons 14 to 23 teach, checked through the engine at the lines their notes point to.

As in ``test_lesson_facts.py``, lines are found by a marker (a piece of the line's code),
never by number, and a record is the state *before* its line runs, so a fact about an
assignment is checked at a later line; the tests of a lesson share one engine run (their
``stops`` marks). Each lesson is also stepped into from start to end once, which must take
at most ``MAX_PAUSES`` pauses so it stays short enough to step through by hand.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from test_lesson_facts import lesson_path, lesson_run, marker_line, scalar, stepped, values  # noqa: F401 - a fixture

LESSONS = Path(__file__).resolve().parent.parent / "lessons"
NEW_LESSONS = {
    "14": "14_hooks.py",
    "15": "15_eval_nograd_inference.py",
    "16": "16_torch_func.py",
    "17": "17_nan_gradients.py",
    "18": "18_accumulation_and_two_losses.py",
    "19": "19_variable_length_no_padding.py",
    "20": "20_be_the_engine.py",
    "21": "21_views_and_inplace.py",
    "22": "22_saved_tensors_checkpointing.py",
    "23": "23_forward_mode_ad.py",
}
#: Pauses a lesson may take when stepped into from its first line to its end.
MAX_PAUSES = 300


def item(summary: dict[str, Any], key: str) -> dict[str, Any]:
    """The summary stored under ``key`` in a dict's summary."""
    (found,) = [value for name, value in summary["items"] if name == repr(key)]
    return found


def parameter(module: dict[str, Any], name: str) -> dict[str, Any]:
    (found,) = [p for p in module["parameters"] if p["name"] == name]
    return found


def calls_while(records: tuple[dict[str, Any], ...], path: Path, line: int, function: str) -> int:
    """How many times ``function`` was called while the module-level ``line`` ran (its first run)."""
    start = next(n for n, r in enumerate(records) if r["function"] == "<module>" and r["line"] == line)
    stop = next(n for n in range(start + 1, len(records)) if records[n]["function"] == "<module>")
    return sum(1 for r in records[start:stop] if r["event"] == "call" and r["function"] == function)


def reachable(graph: dict[str, Any], root: int) -> set[int]:
    """The ids of the graph's nodes reachable from ``root`` along its edges."""
    children: dict[int, list[int]] = {}
    for source, target, _ in graph["edges"]:
        children.setdefault(source, []).append(target)
    seen, stack = set(), [root]
    while stack:
        node = stack.pop()
        if node not in seen:
            seen.add(node)
            stack.extend(children.get(node, []))
    return seen


# ---- every new lesson: stepped from start to end, within the pause budget ----------------------


@pytest.mark.parametrize("number", sorted(NEW_LESSONS))
def test_new_lesson_steps_to_the_end_within_the_pause_budget(number):
    records = stepped(lesson_path(number))
    assert records[-1]["status"] == "ok", records[-1]
    pauses = records[:-1]
    assert 10 < len(pauses) <= MAX_PAUSES
    assert "".join(r.get("stderr") or "" for r in records) == ""
    assert "torch.manual_seed(0)" in lesson_path(number).read_text(encoding="utf-8")


# ---- 14: hooks ----------------------------------------------------------------------------------


@pytest.mark.stops("14", "return grad * 2", 'print("h.grad (stored after the hook):"')
def test_14_tensor_hook_sees_and_doubles_the_gradient_and_retain_grad_keeps_the_doubled_one(run):
    inside = run.hits("return grad * 2")
    assert len(inside) == 1  # removed after one backward
    hook = inside[0]
    assert hook["function"] == "double_grad" and hook["depth"] == 1
    # The hook runs during backward, called from the loss.backward() line.
    assert hook["stack"][1]["line"] == marker_line(run.path, "loss.backward()")
    assert values(hook["vars"]["grad"]).tolist() == [4.0, 8.0, 12.0]
    after = run.at('print("h.grad (stored after the hook):"')
    assert after["h"]["retains_grad"] is True and after["h"]["is_leaf"] is False
    assert values(after["h"]["grad"]).tolist() == [8.0, 16.0, 24.0]
    assert values(after["x"]["grad"]).tolist() == [16.0, 32.0, 48.0]
    assert "gradient arriving at h: tensor([ 4.,  8., 12.])" in run.stdout


#: Lesson 14's prints inside its leaf hooks.
TENSOR_HOOK = 'print("tensor hook sees:"'
POST_HOOK = 'print("post-accumulate hook sees w.grad:"'


@pytest.mark.stops("14", TENSOR_HOOK, POST_HOOK)
def test_14_leaf_hook_sees_the_new_gradient_and_post_accumulate_hook_sees_the_sum(run):
    (before,) = run.hits(TENSOR_HOOK)
    assert values(before["vars"]["grad"]).tolist() == [1.0, 2.0]
    assert values(before["globals"]["w"]["grad"]).tolist() == [100.0, 100.0]
    (after,) = run.hits(POST_HOOK)
    assert values(after["vars"]["param"]["grad"]).tolist() == [101.0, 102.0]
    assert run.stdout.index("tensor hook sees:") < run.stdout.index("post-accumulate hook sees")


@pytest.mark.stops("14", 'print("grad_output equals weights:"')
def test_14_module_hooks_see_the_output_and_both_gradients(run):
    state = run.at('print("grad_output equals weights:"')
    seen = state["seen"]
    output, grad_in, grad_out = (values(item(seen, key)) for key in ("output", "grad_input", "grad_output"))
    assert np.allclose(output, np.tanh(values(state["z"])), atol=1e-6)
    assert grad_out.tolist() == values(state["weights"]).tolist()
    assert np.allclose(grad_in, grad_out * (1 - output**2), atol=1e-6)
    assert np.allclose(values(state["z"]["grad"]), grad_in, atol=1e-6)
    assert "grad_output equals weights: True" in run.stdout
    assert "grad_input == grad_output * (1 - tanh**2): True" in run.stdout


@pytest.mark.stops("14", 'print("hooks fired in this order:"', graph=True)
def test_14_hooks_fire_forward_first_then_from_the_output_back_to_the_input(run):
    record = run.hits('print("hooks fired in this order:"')[0]
    fired = [scalar(entry) for entry in record["vars"]["fired"]["items"]]
    assert fired == [
        "layer: forward pre-hook",
        "layer: forward hook",
        "backward() starts",
        "out: tensor hook",
        "layer: backward pre-hook",
        "weight: tensor hook",
        "weight: post-accumulate hook",
        "layer: backward hook",
        "inputs: tensor hook",
    ]
    assert "hooks fired in this order:\n  layer: forward pre-hook\n  layer: forward hook\n" in run.stdout
    # A full backward hook wraps the layer's output and input in a node of its own.
    assert record["vars"]["out"]["grad_fn"] == "BackwardHookFunctionBackward"
    names = [node["name"] for node in record["graph"]["nodes"]]
    assert names.count("BackwardHookFunctionBackward") == 2 and "AddmmBackward0" in names


# ---- 15: eval() against no_grad() against inference_mode() ------------------------------------


@pytest.mark.stops("15", 'print("training mode, same output twice:"', 'print("batches BatchNorm has counted:"')
def test_15_training_mode_drops_at_random_and_batchnorm_counts_batches(run):
    state = run.at('print("training mode, same output twice:"')
    assert state["model"]["training"] is True and state["norm"]["training"] is True
    assert scalar(state["same_twice"]) is False
    assert state["first"]["grad_fn"] == "AddmmBackward0"
    dropped = re.search(r"dropout in training mode: tensor\(\[([^\]]*)\]\)", run.stdout).group(1)
    entries = {float(v) for v in dropped.split(",")}
    assert entries == {0.0, 2.0}, "survivors are scaled by 1 / (1 - p) = 2"
    assert "batches BatchNorm has counted: 2" in run.stdout


@pytest.mark.stops("15", 'print("under no_grad:')
def test_15_no_grad_records_nothing_but_batchnorm_still_updates(run):
    state = run.at('print("under no_grad:')
    assert state["model"]["training"] is True
    assert state["quiet"]["requires_grad"] is False and state["quiet"]["grad_fn"] is None
    assert scalar(state["mean_moved"]) is True
    assert "batches counted: 3 | running mean moved: True" in run.stdout


@pytest.mark.stops(
    "15", 'print("model.training:"', 'print("backward in eval mode', 'print("same values as the eval output:"'
)
def test_15_eval_keeps_autograd_and_makes_the_layers_deterministic(run):
    switched = run.at('print("model.training:"')
    assert switched["model"]["training"] is False and switched["norm"]["training"] is False
    assert "model.training: False | BatchNorm: False | Dropout: False" in run.stdout
    evaluated = run.at('print("backward in eval mode')
    assert evaluated["evaluated"]["requires_grad"] is True
    assert evaluated["evaluated"]["grad_fn"] == "AddmmBackward0"
    assert scalar(evaluated["repeatable"]) is True
    assert "same output twice: True | batches counted: 3" in run.stdout  # eval() stopped the counting
    assert all(p["has_grad"] for p in evaluated["model"]["parameters"]), "backward works in eval mode"
    final = run.at('print("same values as the eval output:"')
    assert final["single"]["shape"] == [1, 1]
    prediction = final["prediction"]
    assert prediction["requires_grad"] is False and prediction["is_inference"] is True
    assert values(prediction).tolist() == values(final["evaluated"]).tolist()
    assert "same values as the eval output: True" in run.stdout


# ---- 16: torch.func ------------------------------------------------------------------------------


@pytest.mark.stops("16", 'print("backward():')
def test_16_one_gradient_three_ways_and_torch_func_leaves_x_alone(run):
    state = run.at('print("backward():')
    expected = [9.0, 15.0, 29.0]  # 3 x**2 + the product of the other two, at x = [1, 2, 3]
    for name in ("by_backward", "by_autograd_grad", "by_func"):
        assert values(state[name]).tolist() == expected, name
    assert state["x"]["requires_grad"] is False and state["x"]["grad"] is None
    assert state["by_func"]["grad_fn"] is None and state["by_func"]["requires_grad"] is False
    assert state["start"]["grad"] is None, "autograd.grad fills no .grad"
    path = lesson_path("16")
    assert calls_while(stepped(lesson_path("16")), path, marker_line(path, "by_func = grad(f)(x)"), "f") == 1


@pytest.mark.stops("16", 'print("same as autograd.functional:"')
def test_16_one_hessian_three_ways_and_the_create_graph_gradient_has_a_grad_fn(run):
    state = run.at('print("same as autograd.functional:"')
    expected = [[6.0, 3.0, 2.0], [3.0, 12.0, 1.0], [2.0, 1.0, 18.0]]
    for name in ("by_func_hessian", "by_functional", "by_create_graph"):
        assert values(state[name]).tolist() == expected, name
    assert state["first"]["grad_fn"] is not None and state["first"]["requires_grad"] is True
    assert state["by_autograd_grad"]["grad_fn"] is None
    assert "same as autograd.functional: True" in run.stdout and "same as create_graph=True:   True" in run.stdout


@pytest.mark.stops("16", 'print("per-sample gradients')
def test_16_jacrev_and_vmap_per_sample_gradients_with_one_call(run):
    state = run.at('print("per-sample gradients')
    assert values(state["by_jacrev"]).tolist() == [[7.0, 1.0, 1.0], [2.0, 8.0, 2.0], [3.0, 3.0, 9.0]]
    w, inputs, targets = values(state["w"]), values(state["inputs"]), values(state["targets"])
    by_hand = 2 * (inputs @ w - targets)[:, None] * inputs
    assert state["per_sample"]["shape"] == [5, 3]
    assert np.allclose(values(state["per_sample"]), by_hand, atol=1e-4)
    assert np.allclose(values(state["one_by_one"]), by_hand, atol=1e-4)
    assert "vmap == one by one: True" in run.stdout and "vmap == by hand:    True" in run.stdout
    path = lesson_path("16")
    records = stepped(lesson_path("16"))
    assert calls_while(records, path, marker_line(path, "per_sample = per_sample_grad("), "sample_loss") == 1
    assert calls_while(records, path, marker_line(path, "one_by_one = torch.stack("), "sample_loss") == 5


# ---- 17: NaN gradients ----------------------------------------------------------------------------


@pytest.mark.stops("17", 'print("at x ="')
def test_17_kinks_give_zero_and_sqrt_gives_inf_and_nan(run):
    state = run.at('print("at x ="')
    assert values(state["abs_grad"]).tolist() == [-1.0, 0.0, 1.0]
    assert values(state["relu_grad"]).tolist() == [0.0, 0.0, 1.0]
    sqrt_grad = state["sqrt_grad"]
    grad = values(sqrt_grad)
    assert np.isnan(grad[0]) and grad[1] == np.inf and grad[2] == 0.25
    assert (sqrt_grad["nan"], sqrt_grad["inf"]) == (1, 1)


@pytest.mark.stops("17", "masked.sum().backward()", 'print("masked:"', graph=True)
def test_17_where_outside_sqrt_has_a_clean_output_and_nan_gradients(run):
    before = run.hits("masked.sum().backward()")[0]
    names = {node["id"]: node["name"] for node in before["graph"]["nodes"]}
    edges = {(names[a], names[b]) for a, b, _ in before["graph"]["edges"]}
    assert ("WhereBackward0", "SqrtBackward0") in edges
    after = run.at('print("masked:"')
    assert after["masked"]["nan"] == 0 and values(after["masked"]).tolist() == [0.0, 0.0, 2.0]
    assert after["root"]["nan"] == 1, "sqrt was computed for every entry"
    grad = values(after["x"]["grad"])
    assert np.isnan(grad[:2]).all() and grad[2] == 0.25


@pytest.mark.stops("17", 'print("sqrt(where(x > 0, x, 0)):"')
def test_17_sqrt_of_where_is_already_safe_and_clamp_gives_inf_at_the_boundary(run):
    state = run.at('print("sqrt(where(x > 0, x, 0)):"')
    inner = state["inner_where_grad"]
    assert values(inner).tolist() == [0.0, 0.0, 0.25] and inner["nan"] == 0 and inner["inf"] == 0
    clamp = state["clamp_grad"]
    assert (clamp["nan"], clamp["inf"]) == (0, 1)
    assert values(clamp).tolist() == [0.0, np.inf, 0.25]


@pytest.mark.stops("17", 'print("double where for sqrt:', 'print("hand-written norm at 0:"')
def test_17_double_where_keeps_every_gradient_finite_and_the_library_norm_is_zero_at_zero(run):
    assert "fill=0.0: anomaly mode stopped backward: Function 'LogBackward0' returned nan values" in run.stdout
    assert "fill=1.0: backward finished, y.grad = tensor([0.0000, 0.0000, 0.2500])" in run.stdout
    safe = run.at('print("double where for sqrt:')
    assert values(safe["safe"]).tolist() == [0.0, 0.0, 2.0]
    assert values(safe["x"]["grad"]).tolist() == [0.0, 0.0, 0.25]
    assert values(safe["y"]["grad"]).tolist() == [0.0, 0.0, 0.25]  # the fill=1.0 pass
    norms = run.at('print("hand-written norm at 0:"')
    assert np.isnan(values(norms["hand_norm_grad"])).all()
    assert values(norms["library_norm_grad"]).tolist() == [0.0, 0.0, 0.0]


# ---- 18: accumulation, clipping, inputs=, two losses ---------------------------------------------


@pytest.mark.stops("18", 'print("full-batch gradient: "', 'print("same weights after two steps:"')
def test_18_accumulated_micro_batches_give_the_full_batch_gradient_and_training_run(run):
    grads = run.at('print("full-batch gradient: "')
    full, accumulated = values(grads["full_grad"]), values(grads["accumulated_grad"])
    assert np.allclose(full, accumulated, atol=1e-6) and np.abs(full).max() > 0.01
    trained = run.at('print("same weights after two steps:"')
    assert scalar(trained["same_weights"]) is True
    full_w = values(parameter(trained["full_model"], "weight")["summary"])
    micro_w = values(parameter(trained["micro_model"], "weight")["summary"])
    assert np.allclose(full_w, micro_w, atol=1e-6)
    # zero_grad() after the last step left no gradient behind.
    assert not any(p["has_grad"] for p in trained["micro_model"]["parameters"])


@pytest.mark.stops("18", 'print(f"norm before:')
def test_18_clip_grad_norm_returns_the_old_norm_and_rescales_to_max_norm(run):
    state = run.at('print(f"norm before:')
    before = float(values(state["norm_before"]))
    assert before > 0.5 and np.isclose(float(values(state["norm_after"])), 0.5, atol=1e-5)
    clipped = values(parameter(state["full_model"], "weight")["summary"]["grad"])
    assert np.allclose(clipped, values(state["grad_before"]) * 0.5 / before, atol=1e-6)
    assert "same direction: True" in run.stdout


@pytest.mark.stops("18", 'print("weight.grad:"')
def test_18_backward_inputs_fills_only_the_named_leaf(run):
    model = run.at('print("weight.grad:"')["micro_model"]
    assert parameter(model, "weight")["has_grad"] is False
    assert parameter(model, "bias")["has_grad"] is True
    assert "weight.grad: None | bias.grad: tensor([" in run.stdout


@pytest.mark.stops("18", 'print("same gradients:"', "w.grad = None  # breaks the cycle")
def test_18_two_losses_retain_graph_equals_the_sum_and_create_graph_keeps_the_graph(run):
    assert "second loss without retain_graph: Trying to backward through the graph a second time" in run.stdout
    state = run.at('print("same gradients:"')
    assert np.allclose(values(state["one_after_the_other"]), values(state["summed"]), atol=1e-6)
    kept = run.at("w.grad = None  # breaks the cycle")["w"]
    assert kept["grad"]["grad_fn"] is not None and kept["grad"]["requires_grad"] is True
    assert np.allclose(values(kept["grad"]), values(state["summed"]), atol=1e-6)
    assert "after create_graph=True the second backward worked; w.grad.grad_fn: CopyBackwards" in run.stdout
    assert "PyTorch warned: Using backward() with create_graph=True will create a reference cycle" in run.stdout


# ---- 19: variable length without padding, and pdb --------------------------------------------------


@pytest.mark.stops("19", "finals.append(h)", graph=True)
def test_19_each_sequence_builds_a_graph_as_long_as_itself(run):
    counts = [int(n) for n in re.findall(r"length \d+: (\d+) nodes", run.stdout)]
    lengths = [int(n) for n in re.findall(r"length (\d+):", run.stdout)]
    assert lengths == [2, 5, 3] and counts == [4 * length + 2 for length in lengths] == [10, 22, 14]
    hits = run.hits("finals.append(h)")
    assert len(hits) == 3
    for record, count in zip(hits, counts, strict=True):
        graph = record["graph"]
        assert len(reachable(graph, graph["roots"]["h"])) == count, "the engine's graph agrees with count_nodes"


@pytest.mark.stops("19", 'print("same final states as the loop:"')
def test_19_packing_with_nn_rnn_gives_the_loop_s_states_and_gradients(run):
    state = run.at('print("same final states as the loop:"')
    assert values(state["packed"]["batch_sizes"]).tolist() == [3, 3, 2, 1, 1]
    finals = [float(values(summary)) for summary in state["finals"]["items"]]
    assert np.allclose(values(state["h_n"]).reshape(-1), finals, atol=1e-6)
    assert scalar(state["same_states"]) is True and scalar(state["same_grads"]) is True
    rnn = state["rnn"]
    for weight, leaf in (("weight_ih_l0", "w_x"), ("weight_hh_l0", "w_h")):
        rnn_grad = values(parameter(rnn, weight)["summary"]["grad"]).item()
        assert np.isclose(rnn_grad, values(state[leaf]["grad"]).item()), weight


def test_19_pdb_stays_off_and_the_note_shows_the_session_it_would_give(tmp_path):
    path = lesson_path("19")
    source = path.read_text(encoding="utf-8")
    assert "USE_PDB = False" in source
    line = marker_line(path, "finals.append(h)")
    assert marker_line(path, "breakpoint()  # pdb") == line - 1
    assert f"19_variable_length_no_padding.py({line})<module>()" in source, "the note names the line pdb stops at"
    # The same lesson with the flag on, run with plain python and pdb commands on stdin.
    copy = tmp_path / path.name
    copy.write_text(source.replace("USE_PDB = False", "USE_PDB = True", 1), encoding="utf-8")
    shutil.copy(path.parent / "course.py", tmp_path / "course.py")  # the helpers the lesson imports
    env = {k: v for k, v in os.environ.items() if k != "PYTHONBREAKPOINT"}
    done = subprocess.run(
        [sys.executable, str(copy)],
        input="p h, h.requires_grad\np count_nodes(h)\nc\nc\nc\n",
        capture_output=True,
        encoding="utf-8",
        timeout=120,
        env=env,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("-> finals.append(h)") == 3
    assert "(Pdb) (tensor(-0.5760, grad_fn=<TanhBackward0>), True)" in done.stdout
    assert "(Pdb) 10\n" in done.stdout


# ---- 20: be the engine ---------------------------------------------------------------------------


@pytest.mark.stops("20", 'print("PyTorch\'s gradients:"')
def test_20_the_scalar_engine_gives_pytorchs_graph_and_gradients(run):
    state = run.at('print("PyTorch\'s gradients:"')
    assert scalar(state["all_match"]) is True
    assert "your engine's order: ['x', 'w', '*', 'b', '+', '*']" in run.stdout
    pytorch = "['MulBackward0', 'AddBackward0', 'AccumulateGrad', 'MulBackward0', 'AccumulateGrad', 'AccumulateGrad']"
    assert f"PyTorch's graph, output first: {pytorch}" in run.stdout  # six nodes, as the engine's order has
    assert "x.grad=0.5, w.grad=-2.0, b.grad=-1.0, z.grad=-1.0" in run.stdout
    assert "PyTorch's gradients: [0.5, -2.0, -1.0]" in run.stdout


def test_20_stepping_into_backward_calls_each_closure_once_every_user_of_its_value_has_sent_its_share():
    path = lesson_path("20")
    records = stepped(path)
    line = marker_line(path, "out.backward()  # predict")
    start = next(n for n, r in enumerate(records) if r["function"] == "<module>" and r["line"] == line)
    stop = next(n for n in range(start + 1, len(records)) if records[n]["function"] == "<module>")
    calls = [r for r in records[start:stop] if r["event"] == "call" and r["function"] in ("_backward", "<lambda>")]
    assert [r["function"] for r in calls].count("<lambda>") == 3  # the leaves' closures, which do nothing
    made = [re.match(r"Value\((.), data=\S+, grad=(\S+),", r["vars"]["out"]["repr"]).groups()
            for r in calls if r["function"] == "_backward"]
    # out = z * z first with the seed 1, then z = xw + b with both shares of z * z, then xw = x * w
    assert made == [("*", "1"), ("+", "-1"), ("*", "-1")]


@pytest.mark.stops("18", 'print("clipped again with max_norm=100, unchanged:"')
def test_18_clip_grad_norm_scales_by_max_norm_over_the_norm_plus_1e_6_and_never_lengthens(run):
    state = run.at('print("clipped again with max_norm=100, unchanged:"')
    before = float(values(state["norm_before"]))
    clipped = values(parameter(state["full_model"], "weight")["summary"]["grad"])
    assert np.allclose(clipped, values(state["grad_before"]) * 0.5 / (before + 1e-6), rtol=1e-6, atol=0)
    assert scalar(state["unchanged"]) is True  # a factor above 1 is clamped: a short gradient stays as it is
    assert "clipped again with max_norm=100, unchanged: True" in run.stdout


@pytest.mark.stops("20", 'print("what reached z_t, once per backward:"')
def test_20_pytorch_sums_the_two_shares_of_z_t_before_its_node_runs_and_z_t_is_not_a_leaf(run):
    state = run.at('print("what reached z_t, once per backward:"')
    assert [scalar(item) for item in state["arrivals"]["items"]] == [-1.0]
    assert state["z_t"]["is_leaf"] is False and state["z_t"]["grad_fn"] == "AddBackward0"
    assert "what reached z_t, once per backward: [-1.0] | z_t.is_leaf: False" in run.stdout



# ---- 21: views and in-place ---------------------------------------------------------------------


@pytest.mark.stops("21", "view.mul_(3)", 'print("base:"')
def test_21_a_view_shares_its_base_s_memory_and_version_counter(run):
    before = run.at("view.mul_(3)")  # after base.add_(1), which never touched view
    assert (before["base"]["version"], before["view"]["version"]) == (1, 1)
    after = run.at('print("base:"')
    assert values(after["base"]).tolist() == [1.0, 3.0, 3.0, 3.0, 1.0, 1.0]
    assert (after["base"]["version"], after["view"]["version"]) == (2, 2)
    assert "view._base is base: True" in run.stdout and "same storage: True" in run.stdout


@pytest.mark.stops("21", "y.sum().backward()", 'print("y.grad_fn:"', graph=True)
def test_21_in_place_on_a_view_of_a_non_leaf_rewrites_the_base_s_history_as_copyslices(run):
    record = run.hits("y.sum().backward()")[0]
    assert record["vars"]["y"]["grad_fn"] == "CopySlices" and record["vars"]["y"]["version"] == 1
    names = [node["name"] for node in record["graph"]["nodes"]]
    assert names[:2] == ["CopySlices", "MulBackward0"]  # the old node of y = x * 2 sits behind it
    assert values(run.at('print("y.grad_fn:"')["x"]["grad"]).tolist() == [20.0, 20.0, 2.0, 2.0]


@pytest.mark.stops("21", 'print("w:"', 'print("hidden._version after a change through hidden.data:"')
def test_21_a_leaf_s_view_refuses_in_place_outside_no_grad_and_data_hides_a_change(run):
    assert "in-place on a view of a leaf: a view of a leaf Variable that requires grad" in run.stdout
    leaf = run.at('print("w:"')["w"]
    assert values(leaf).tolist() == [1.5, 1.5, 1.0] and leaf["version"] == 1 and leaf["is_leaf"] is True
    assert "shown._version after a change through shown.detach(): 1" in run.stdout
    hidden = run.at('print("hidden._version after a change through hidden.data:"')["hidden"]
    assert hidden["version"] == 0 and hidden["max"] > 1  # doubled sigmoid values, the counter none the wiser


# ---- 22: saved tensors and checkpointing ----------------------------------------------------------


@pytest.mark.stops("22", 'print("ExpBackward0 saved its output:"', "plain_kib, plain_grads = measure(stack, inputs)")
def test_22_each_node_saves_what_its_derivative_needs(run):
    assert "ExpBackward0 saved its output: True" in run.stdout and "SinBackward0 saved its input: True" in run.stdout
    shapes = run.at("plain_kib, plain_grads = measure(stack, inputs)")["shapes"]
    assert [[scalar(n) for n in shape["items"]] for shape in shapes["items"]] == [[256, 256], [256, 256]]


@pytest.mark.stops("22", 'print(f"saved: {plain_kib', 'print(f"with store and load:')
def test_22_checkpointing_keeps_the_block_inputs_and_gives_the_same_gradients(run):
    state = run.at('print(f"saved: {plain_kib')
    assert (scalar(state["plain_kib"]), scalar(state["checkpointed_kib"])) == (768.0, 512.0)
    assert scalar(state["same"]) is True
    assert "saved: 768 KiB plain, 512 KiB checkpointed | same gradients: True" in run.stdout
    assert "with store and load: 768 KiB" in run.stdout


def test_22_backward_runs_a_checkpointed_block_again():
    path = lesson_path("22")
    line = marker_line(path, "checkpointed_kib, checkpointed_grads = measure(checkpointed, inputs)")
    assert calls_while(stepped(path), path, line, "layers") == 4  # two blocks, each forward and again in backward
    assert calls_while(stepped(path), path, marker_line(path, "plain_kib, plain_grads ="), "layers") == 1


# ---- 23: forward-mode AD ----------------------------------------------------------------------------


@pytest.mark.stops("23", 'print("value:"', 'print(f"spread, 2 inputs', 'print(f"loss, 6 inputs')
def test_23_a_tangent_rides_along_and_forward_and_reverse_passes_count_inputs_and_outputs(run):
    dual = run.at('print("value:"')
    assert (float(values(dual["value"])), float(values(dual["tangent"]))) == (8.0, 12.0)
    jacobians = run.at('print(f"spread, 2 inputs')
    assert (scalar(jacobians["forward_passes"]), scalar(jacobians["reverse_passes"])) == (2, 6)
    assert np.allclose(values(jacobians["by_columns"]), values(jacobians["by_rows"]))
    assert values(jacobians["by_columns"]).shape == (6, 2)
    assert "spread, 2 inputs and 6 outputs: 2 forward passes, 6 backward passes, same Jacobian: True" in run.stdout
    assert "loss, 6 inputs and 1 output: 6 forward passes, 1 backward pass" in run.stdout


def test_23_a_forward_pass_calls_the_function_once_per_input_and_a_vjp_once():
    path = lesson_path("23")
    forward = marker_line(path, "by_columns, forward_passes = jacobian_forward(spread, point)")
    reverse = marker_line(path, "by_rows, reverse_passes = jacobian_reverse(spread, point)")
    assert calls_while(stepped(path), path, forward, "spread") == 2
    assert calls_while(stepped(path), path, reverse, "spread") == 1  # one forward; the rows are pulled back
