"""What each lesson teaches, checked through the engine at the lines its notes point to.

Lines are found by searching the lesson for a marker (a piece of the line's code), never
by number, so editing a lesson does not break its test. A record is the state *before*
its line runs, so a fact about an assignment is checked at the line after it.

A test names the lines it reads with ``@pytest.mark.stops(lesson, *markers)`` and gets them
as the ``run`` fixture. The tests of one lesson share one engine run, stopping at every
line any of them names: a stop at one line does not change what the run is at another.
Likewise :func:`stepped` steps into each lesson once for all the tests that read the walk.
"""

from __future__ import annotations

import copy
import functools
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import warm_session

trace = pytest.importorskip("app.trace")

LESSONS = Path(__file__).resolve().parent.parent / "lessons"
LESSON_FILES = sorted(LESSONS.glob("[0-9][0-9]_*.py"))


def lesson_path(stem_prefix: str) -> Path:
    """The lesson whose file name starts with ``stem_prefix`` (``"07"``)."""
    (path,) = [p for p in LESSON_FILES if p.name.startswith(stem_prefix + "_")]
    return path


def marker_line(path: Path, marker: str, occurrence: int | None = None) -> int:
    """The line of ``path``'s code (not its notes) holding ``marker``.

    Without ``occurrence`` the marker must be unique, so an edited lesson fails loudly
    instead of checking the wrong line; with it, the ``occurrence``-th match (from 1).
    """
    hits = [
        number
        for number, text in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if marker in text and not text.lstrip().startswith("#")
    ]
    if occurrence is None:
        assert len(hits) == 1, f"{marker!r} should be on exactly one line of {path.name}: lines {hits}"
        return hits[0]
    assert len(hits) >= occurrence, f"{marker!r} found {len(hits)} times in {path.name}"
    return hits[occurrence - 1]


def last_code_line(path: Path) -> int:
    """The number of the last line that is neither blank nor a comment."""
    lines = path.read_text(encoding="utf-8").splitlines()
    return max(n for n, text in enumerate(lines, 1) if text.strip() and not text.lstrip().startswith("#"))


class Run:
    """One engine run of a lesson with breakpoints at the given markers."""

    def __init__(self, stem_prefix: str, *markers: str | tuple[str, int], graph: bool = False) -> None:
        self.path = lesson_path(stem_prefix)
        self.lines: dict[Any, int] = {}
        for marker in markers:
            text, nth = marker if isinstance(marker, tuple) else (marker, None)
            self.lines[marker] = marker_line(self.path, text, nth)
        # A pause carries the output printed since the previous one; a last stop on the
        # final line of code collects what the lesson printed after the markers.
        breaks = {*self.lines.values(), last_code_line(self.path)}
        records = trace.trace_records(str(self.path), breaks=sorted(breaks), timeout=120, graph=graph,
                                      session=warm_session())
        # Output printed after the last pause is only seen if the end record carries it.
        self.end = records[-1]
        self.pauses = records[:-1]
        assert self.end["status"] == "ok", self.end
        self.stdout = "".join(r.get("stdout") or "" for r in records)  # the end record's too, if any
        self.stderr = "".join(r.get("stderr") or "" for r in records)

    def hits(self, marker: str | tuple[str, int]) -> list[dict[str, Any]]:
        """Every pause at the marker's line, in order."""
        line = self.lines[marker]
        found = [r for r in self.pauses if r["line"] == line and r["file"] == str(self.path)]
        assert found, f"no pause at line {line} ({marker!r})"
        return found

    def at(self, marker: str | tuple[str, int]) -> dict[str, dict[str, Any]]:
        """The variables at the first pause on the marker's line."""
        return self.hits(marker)[0]["vars"]

    def answering(self, markers: tuple[str | tuple[str, int], ...]) -> Run:
        """This run, reading only the lines of ``markers``: a test reads only the lines it names."""
        view = copy.copy(self)
        view.lines = {marker: self.lines[marker] for marker in markers}
        return view


#: The shared run of each lesson, by its file name prefix.
_runs: dict[str, Run] = {}


@pytest.fixture(name="run")
def lesson_run(request: pytest.FixtureRequest) -> Run:
    """The run of the lesson the test's ``stops`` mark names, reading the markers the mark names.

    The first test of a lesson runs it once with breakpoints at the markers of every selected
    test of that lesson (and the graph, if one of them reads it); the others read that run.
    """
    stem, *markers = request.node.get_closest_marker("stops").args
    if stem not in _runs:
        marks = [mark for item in request.session.items
                 if (mark := item.get_closest_marker("stops")) and mark.args[0] == stem]
        every = dict.fromkeys(marker for mark in marks for marker in mark.args[1:])
        _runs[stem] = Run(stem, *every, graph=any(mark.kwargs.get("graph", False) for mark in marks))
    return _runs[stem].answering(tuple(markers))


@functools.cache
def stepped(path: Path) -> tuple[dict[str, Any], ...]:
    """Every pause of step-into mode from the lesson's first line to its end, then the end record.

    Cached: the test run steps into each lesson once, whichever test file asks first.
    """
    return tuple(trace.trace_records(str(path), timeout=300, session=warm_session()))


def values(summary: dict[str, Any]) -> np.ndarray:
    """A tensor summary's values as a float array."""
    return np.asarray(summary["values"], dtype=np.float64)


def scalar(summary: dict[str, Any]) -> Any:
    return summary["value"]


# ---- lesson by lesson ------------------------------------------------------------------------


@pytest.mark.stops(
    "01",
    "b = a * w",
    "c = torch.exp(b)",
    'print("b.grad_fn:"',
    'print("logged:"',
    'print("NaN first appears in:"',
    "product = left @ right.T",
)
def test_01_graph_appears_line_by_line_and_nan_is_not_an_error(run):
    before_b = run.at("b = a * w")
    assert before_b["a"]["is_leaf"] and before_b["a"]["grad_fn"] is None and before_b["a"]["requires_grad"]
    assert "b" not in before_b
    assert run.at("c = torch.exp(b)")["b"]["grad_fn"] == "MulBackward0"
    built = run.at('print("b.grad_fn:"')
    assert (built["c"]["grad_fn"], built["loss"]["grad_fn"]) == ("ExpBackward0", "SumBackward0")

    logged = values(run.at('print("logged:"')["logged"])
    assert np.isnan(logged).tolist() == [False, True, False, True]
    assert scalar(run.at('print("NaN first appears in:"')["first_nan"]) == "logged"

    assert "SqrtBackward0" in run.stdout and "returned nan values" in run.stdout
    assert "mat1 and mat2 shapes cannot be multiplied (2x3 and 2x3)" in run.stdout
    assert f"raised at line {marker_line(run.path, 'product = left @ right', 1)}:" in run.stdout


@pytest.mark.stops("01", 'print("NaN in safe_root?"')
def test_01_anomaly_mode_names_the_safe_root_line_and_safe_root_has_no_nan(run):
    safe_root = run.at('print("NaN in safe_root?"')["safe_root"]
    assert safe_root["nan"] == 0 and not np.isnan(values(safe_root)).any()
    assert "NaN in safe_root? False" in run.stdout
    line = marker_line(run.path, "safe_root = torch.where(")
    assert f"line {line}, in <module> -> safe_root = torch.where(" in run.stdout


@pytest.mark.stops(
    "02", "y = torch.sin(x)", "y = torch.cos(x)", 'print("mean of x_high:"', 'print("x_high.grad == cos(x_high):"'
)
def test_02_each_branch_records_its_own_graph(run):
    sin_hits, cos_hits = run.hits("y = torch.sin(x)"), run.hits("y = torch.cos(x)")
    # branchy(x_high) ran the sin line first, branchy(x_low) the cos line next.
    assert sin_hits[0]["step"] < cos_hits[0]["step"]
    graphs = run.at('print("mean of x_high:"')
    assert (graphs["y_high"]["grad_fn"], graphs["y_low"]["grad_fn"]) == ("SinBackward0", "CosBackward0")
    grads = run.at('print("x_high.grad == cos(x_high):"')
    x_high, x_low = grads["x_high"], grads["x_low"]
    assert np.allclose(values(x_high["grad"]), np.cos(values(x_high)), atol=1e-6)
    assert np.allclose(values(x_low["grad"]), -np.sin(values(x_low)), atol=1e-6)
    assert "step 3: mean=0.45 graph=CosBackward0" in run.stdout


@pytest.mark.stops("02", 'print("decision:"')
def test_02_the_comparison_is_outside_the_graph_and_the_means_are_exactly_one(run):
    seen = run.at('print("decision:"')
    decision = seen["decision"]
    assert decision["dtype"] == "bool" and decision["shape"] == []
    assert decision["requires_grad"] is False and decision["grad_fn"] is None
    assert seen["x_high"]["requires_grad"] is True
    assert "bool(decision): True" in run.stdout
    # .item() of the float32 mean, printed: exactly 1.0 and -1.0, not merely close.
    assert "mean of x_high: 1.0 -> SinBackward0" in run.stdout
    assert "mean of x_low:  -1.0 -> CosBackward0" in run.stdout


@pytest.mark.stops(
    "03",
    'print(f"step {t}:',
    'print("every input step got a gradient:"',
    'print("nn.RNN final state matches the loop:"',
)
def test_03_loop_grows_the_graph_and_backward_reaches_every_step(run):
    steps = run.hits('print(f"step {t}:')
    assert [scalar(r["vars"]["t"]) for r in steps] == [0, 1, 2, 3, 4]
    assert all(r["vars"]["h_t"]["grad_fn"] == "TanhBackward0" for r in steps)
    counts = [int(line.rsplit(" ", 1)[1]) for line in run.stdout.splitlines() if "nodes in graph so far" in line]
    assert len(set(np.diff(counts))) == 1 and counts[1] > counts[0]
    after = run.at('print("every input step got a gradient:"')
    assert (np.abs(values(after["inputs"]["grad"])).sum(axis=1) > 0).all()
    final = run.at('print("nn.RNN final state matches the loop:"')
    assert scalar(final["same_state"]) is True and scalar(final["same_grad"]) is True
    assert np.allclose(values(final["h_n"]).reshape(-1), values(final["h_t"]), atol=1e-6)


@pytest.mark.stops("03", 'print("every input step got a gradient:"')
def test_03_ten_nodes_per_step_and_w_hh_grad_sums_the_steps(run):
    counts = [int(line.rsplit(" ", 1)[1]) for line in run.stdout.splitlines() if "nodes in graph so far" in line]
    # Step 0: nine nodes of its own plus the four AccumulateGrad nodes; ten more per step after.
    assert counts == [13, 23, 33, 43, 53]
    after = run.at('print("every input step got a gradient:"')
    W_hh = values(after["W_hh"])
    states = [values(item) for item in after["hidden_states"]["items"]]
    grads = [values(item["grad"]) for item in after["hidden_states"]["items"]]
    # The loss is h_4.sum(), so the last retained gradient is all ones.
    assert grads[-1].tolist() == [1.0] * len(grads[-1])
    through_tanh = [g * (1 - h**2) for g, h in zip(grads, states, strict=True)]
    # Each earlier retained gradient is the next one carried back through tanh and W_hh.
    for t in range(len(states) - 1):
        assert np.allclose(grads[t], through_tanh[t + 1] @ W_hh.T, atol=1e-5)
    # W_hh.grad is the sum of one outer product per step (h before the step is 0 at step 0).
    previous = [np.zeros_like(states[0])] + states[:-1]
    per_step = sum(np.outer(h, d) for h, d in zip(previous, through_tanh, strict=True))
    assert np.allclose(values(after["W_hh"]["grad"]), per_step, atol=1e-5)


@pytest.mark.stops("04", 'print("padded shape:"', 'print("batch_sizes:"', 'print("gradient per step of sequence 1:"')
def test_04_packing_skips_the_padding(run):
    padded = run.at('print("padded shape:"')
    assert padded["padded"]["shape"] == [3, 5, 3]
    assert values(padded["mask"]).sum(axis=1).tolist() == [4, 2, 5]
    packed = run.at('print("batch_sizes:"')["packed"]
    assert packed["type"] == "PackedSequence"
    assert values(packed["batch_sizes"]).tolist() == [3, 3, 2, 2, 1]
    assert packed["data"]["shape"][0] == 11
    grad = values(run.at('print("gradient per step of sequence 1:"')["padded"]["grad"])
    per_step = np.abs(grad[1]).sum(axis=1)
    assert (per_step[:2] > 0).all() and (per_step[2:] == 0).all()
    assert "h_n equals the output at each last real step: True" in run.stdout


@pytest.mark.stops("04", 'print("row 1, masked mean:"', 'print("final state changed by padding:"')
def test_04_masked_mean_ignores_padding_and_padding_moves_only_the_shorter_final_states(run):
    means = run.at('print("row 1, masked mean:"')
    padded, lengths = values(means["padded"]), values(means["lengths"]).astype(int)
    masked, naive = values(means["masked_mean"]), values(means["naive_mean"])
    for row, length in enumerate(lengths):
        assert np.allclose(masked[row], padded[row, :length].mean(axis=0), atol=1e-6)
        assert np.allclose(naive[row], padded[row].mean(axis=0), atol=1e-6)
    # Row 1 has two real steps of five: the naive mean is the masked one scaled by 2/5.
    assert np.allclose(naive[1], masked[1] * 2 / 5, atol=1e-6)
    assert not np.allclose(naive[1], masked[1]) and np.allclose(naive[2], masked[2], atol=1e-6)
    states = run.at('print("final state changed by padding:"')
    moved = np.abs(values(states["h_unpacked"])[0] - values(states["h_n"])[0]).sum(axis=1)
    assert lengths.tolist() == [4, 2, 5]
    assert moved[0] > 1e-3 and moved[1] > 1e-3 and moved[2] < 1e-6


@pytest.mark.stops(
    "05",
    'print("y.requires_grad before:"',
    'print("y.requires_grad after: "',
    'print("z:"',
    'print("plain.is_leaf:"',
    'print("x.grad:"',
    'print("frozen:"',
)
def test_05_leaves_requires_grad_and_detach(run):
    start = run.at('print("y.requires_grad before:"')
    assert (start["x"]["requires_grad"], start["x"]["is_leaf"], start["x"]["grad_fn"]) == (True, True, None)
    assert start["y"]["requires_grad"] is False
    assert run.at('print("y.requires_grad after: "')["y"]["requires_grad"] is True
    made = run.at('print("z:"')
    assert made["layer"]["module"] and all(p["requires_grad"] for p in made["layer"]["parameters"])
    assert (made["z"]["requires_grad"], made["z"]["is_leaf"], made["z"]["grad_fn"]) == (True, False, "AddBackward0")
    plain = run.at('print("plain.is_leaf:"')
    assert plain["plain"]["is_leaf"] and not plain["plain"]["requires_grad"] and plain["scaled"]["grad_fn"] is None
    grads = run.at('print("x.grad:"')
    assert values(grads["x"]["grad"]).tolist() == values(grads["y"]).tolist()
    assert values(grads["y"]["grad"]).tolist() == values(grads["x"]).tolist()
    frozen = run.at('print("frozen:"')["frozen"]
    assert (frozen["requires_grad"], frozen["grad_fn"], frozen["is_leaf"]) == (False, None, True)
    assert "Only Tensors of floating point and complex dtype can require gradients" in run.stdout


@pytest.mark.stops("05", 'print("shares memory with z:"', 'print("clone shares memory:"')
def test_05_detach_shares_memory_and_clone_does_not(run):
    shared = run.at('print("shares memory with z:"')
    assert scalar(shared["shares_memory"]) is True
    assert values(shared["frozen"]).tolist() == values(shared["z"]).tolist()
    cloned = run.at('print("clone shares memory:"')
    assert scalar(cloned["clone_shares_memory"]) is False
    assert values(cloned["independent"]).tolist() == values(cloned["z"]).tolist()
    assert "shares memory with z: True" in run.stdout and "clone shares memory: False" in run.stdout


@pytest.mark.stops(
    "06",
    "doubled = x * 2",
    'print("doubled.requires_grad:"',
    'print("after the block, tracked',
    "fast = x * 2",
    'print("fast * x:", err)',
)
def test_06_no_grad_keeps_inputs_and_untracks_results(run):
    entering = run.hits("doubled = x * 2")[0]
    assert entering["grad_enabled"] is False
    inside = run.hits('print("doubled.requires_grad:"')[0]
    assert inside["grad_enabled"] is False
    assert inside["vars"]["x"]["requires_grad"] is True
    assert inside["vars"]["doubled"]["requires_grad"] is False and inside["vars"]["doubled"]["grad_fn"] is None
    after = run.hits('print("after the block, tracked')[0]
    assert after["grad_enabled"] is True and after["vars"]["tracked"]["grad_fn"] == "MulBackward0"
    assert run.hits("fast = x * 2")[0]["inference_mode"] is True
    assert "is_training=False: out.requires_grad=False" in run.stdout
    assert "prediction.requires_grad: False" in run.stdout
    refused = run.at('print("fast * x:", err)')["err"]
    assert "Inference tensors cannot be saved for backward" in refused["repr"]


@pytest.mark.stops(
    "06",
    'print(f"is_training={is_training}',
    'print("fast.is_inference():"',
    'print("fast + x is fine',
    'print("fast * x:", err)',
    'print("fast.add_(1):", err)',
    'print("fast.requires_grad_():", err)',
    'print("normal.is_inference():"',
)
def test_06_set_grad_enabled_follows_the_flag_and_inference_tensors_have_limits(run):
    flags = run.hits('print(f"is_training={is_training}')
    assert [(scalar(r["vars"]["is_training"]), r["vars"]["out"]["requires_grad"]) for r in flags] == [
        (True, True),
        (False, False),
    ]
    assert flags[0]["vars"]["out"]["grad_fn"] == "SumBackward0" and flags[1]["vars"]["out"]["grad_fn"] is None
    fast = run.at('print("fast.is_inference():"')["fast"]
    assert fast["is_inference"] is True and fast["requires_grad"] is False
    assert "fast.is_inference(): True" in run.stdout
    added = run.at('print("fast + x is fine')
    assert values(added["x"]["grad"]).tolist() == [1.0, 1.0, 1.0]
    refused = {
        'print("fast * x:", err)': "Inference tensors cannot be saved for backward",
        'print("fast.add_(1):", err)': "Inplace update to inference tensor outside InferenceMode",
        'print("fast.requires_grad_():", err)': "Setting requires_grad=True on inference tensor outside InferenceMode",
    }
    for marker, message in refused.items():
        err = run.at(marker)["err"]
        assert err["type"] == "RuntimeError" and message in err["repr"], marker
    normal = run.at('print("normal.is_inference():"')["normal"]
    assert normal["is_inference"] is False
    assert "(normal * x).grad_fn: MulBackward0" in run.stdout


@pytest.mark.stops(
    "07",
    "expected = 2 * w.detach() * x**2",
    'print("v.grad:"',
    'print(f"after backward {step + 1}',
    'print("after w.grad.zero_():"',
)
def test_07_backward_fills_leaf_grad_with_the_analytic_gradient(run):
    state = run.at("expected = 2 * w.detach() * x**2")
    x, w = values(state["x"]), values(state["w"])
    assert np.allclose(values(state["w"]["grad"]), 2 * w * x**2)
    assert state["x"]["grad"] is None and state["h"]["is_leaf"] is False
    vjp = run.at('print("v.grad:"')
    assert np.allclose(values(vjp["v"]["grad"]), values(vjp["u"]) @ values(vjp["A"]))
    passes = run.hits('print(f"after backward {step + 1}')
    single = 2 * w * x**2
    for k, record in enumerate(passes, 1):
        assert np.allclose(values(record["vars"]["w"]["grad"]), k * single)
    zeroed = run.at('print("after w.grad.zero_():"')
    assert np.allclose(values(zeroed["accumulated"]), 3 * single)
    assert not values(zeroed["w"]["grad"]).any()
    assert "not a leaf Tensor is being accessed" in run.stdout
    assert "grad can be implicitly created only for scalar outputs" in run.stdout


@pytest.mark.stops("07", 'print("h2.grad:"')
def test_07_retained_non_leaf_grad_and_a_second_backward_doubles_w_grad(run):
    state = run.at('print("h2.grad:"')
    h2 = state["h2"]
    assert h2["retains_grad"] is True and h2["is_leaf"] is False
    assert np.allclose(values(h2["grad"]), 2 * values(h2))
    x, w = values(state["x"]), values(state["w"])
    # loss and loss2 are the same computation: the second backward added the same gradient again.
    assert np.allclose(values(state["w"]["grad"]), 2 * (2 * w * x**2))
    assert np.allclose(values(state["w"]["grad"]), 2 * values(state["expected"]))


@pytest.mark.stops(
    "08",
    'print("dz/dx:"',
    'print("dz/dy:"',
    'print("first derivative:"',
    'print("number of results:"',
    'print("one gradient per input:"',
)
def test_08_autograd_grad_returns_one_gradient_per_input(run):
    first = run.at('print("dz/dx:"')
    x = values(first["x"])
    assert np.allclose(values(first["grad_x"]), 2 * x / 3) and first["x"]["grad"] is None
    assert np.allclose(values(run.at('print("dz/dy:"')["grad_y"]), 1 / 3)
    higher = run.at('print("first derivative:"')
    assert higher["first"]["grad_fn"] is not None
    assert np.allclose(values(higher["first"]), 3 * x**2) and np.allclose(values(higher["second"]), 6 * x)
    combined = run.at('print("number of results:"')["combined"]
    assert combined["type"] == "tuple" and combined["length"] == 1
    assert np.allclose(values(combined["items"][0]), 2 * x + 2 * x / 3)
    per_input = run.at('print("one gradient per input:"')["per_input"]
    assert per_input["length"] == 2
    assert np.allclose(values(per_input["items"][0]), 2 + 4 * x)
    assert np.isclose(values(per_input["items"][1]), x.sum() + (x**2).sum())


@pytest.mark.stops("09", 'print("x.grad:", x.grad, "| 2 * exp(x):"', 'print("two passes without retain_graph')
def test_09_second_backward_fails_unless_the_graph_is_retained(run):
    assert "second backward: Trying to backward through the graph a second time" in run.stdout
    assert "retain_graph=True" in run.stdout
    retained = run.at('print("x.grad:", x.grad, "| 2 * exp(x):"')
    assert np.allclose(values(retained["x"]["grad"]), 2 * np.exp(values(retained["x"])), rtol=1e-5)
    assert "saved by the graph: 4.0 MB" in run.stdout
    assert "after backward(retain_graph=True): 4.0 MB" in run.stdout
    assert "after a plain backward: 0.0 MB" in run.stdout
    twice = run.at('print("two passes without retain_graph')
    assert values(twice["x"]["grad"]).tolist() == [2.0, 2.0, 2.0]


@pytest.mark.stops("09", 'print("saved tensor after backward:"')
def test_09_backward_frees_the_saved_result(run):
    assert "saved before backward: tensor(" in run.stdout
    err = run.at('print("saved tensor after backward:"')["err"]
    assert err["type"] == "RuntimeError"
    assert "directly access saved tensors after they have already been freed" in err["repr"]
    assert "saved tensor after backward: Trying to backward through the graph a second time" in run.stdout


@pytest.mark.stops(
    "10",
    'print("traced matches eager on negative input:"',
    'print("scripted matches eager on negative input:"',
    'print("exported matches eager on negative input:"',
)
def test_10_trace_bakes_in_the_branch_and_script_and_export_keep_it(run):
    assert run.stderr == ""
    assert "TracerWarning: Converting a tensor to a Python boolean" in run.stdout
    traced = run.at('print("traced matches eager on negative input:"')
    # The trace kept the positive branch, so for the negative input the sign is flipped.
    assert np.allclose(values(traced["traced_out"]), -values(traced["expected"]))
    scripted = run.at('print("scripted matches eager on negative input:"')
    assert np.allclose(values(scripted["scripted_out"]), values(scripted["expected"]))
    assert "if bool(" in run.stdout
    exported = run.at('print("exported matches eager on negative input:"')
    assert np.allclose(values(exported["exported_out"]), values(exported["expected"]))
    assert "torch.ops.higher_order.cond" in run.stdout
    assert "exporting the plain if:" in run.stdout


@pytest.mark.stops("10", 'print("exporting the plain if:"')
def test_10_traced_code_has_no_if_and_plain_export_fails_on_the_data_dependent_if(run):
    traced_code = run.stdout.split("traced code:", 1)[1].split("traced matches eager", 1)[0]
    assert "linear" in traced_code and "if " not in traced_code and "neg" not in traced_code
    assert "while tracing: DeprecationWarning: `torch.jit.trace` is deprecated" in run.stdout
    err = run.at('print("exporting the plain if:"')["err"]
    # The data-dependent guard, not just any failure.
    assert err["type"] == "GuardOnDataDependentSymNode"
    assert "Could not guard on data-dependent expression" in err["repr"]
    assert "exporting the plain if: GuardOnDataDependentSymNode - Could not guard on data-dependent" in run.stdout


@pytest.mark.stops("10", 'print("graphs:"', 'print("compiled matches eager on negative input:"')
def test_10_compile_makes_two_graphs_with_one_break_at_the_if(run):
    compiled = run.at('print("compiled matches eager on negative input:"')
    assert np.allclose(values(compiled["compiled_out"]), values(compiled["expected"]))
    explained = run.at('print("graphs:"')
    assert scalar(explained["graph_count"]) == 2 and scalar(explained["break_count"]) == 1
    if_line = marker_line(run.path, "if x.mean() > 0:")
    assert f"graph break at line {if_line}: if x.mean() > 0:" in run.stdout
    assert "compiled matches eager on negative input: True" in run.stdout

    # Stepping into the compiled call: forward, then Dynamo's resume function for the code
    # after the break; the return lines never run as Python.
    path = str(run.path)
    records = stepped(run.path)
    assert records[-1]["status"] == "ok"
    steps = records[:-1]
    call = marker_line(run.path, "compiled_out = compiled(negative)")
    start = next(n for n, r in enumerate(steps) if r["file"] == path and r["line"] == call)
    stop = next(n for n, r in enumerate(steps) if n > start and r["file"] == path and r["function"] == "<module>")
    inside = steps[start + 1 : stop]
    functions = [r["function"] for r in inside]
    assert "forward" in functions and f"torch_dynamo_resume_in_forward_at_{if_line}" in functions
    returns = {marker_line(run.path, "return self.linear(x)"), marker_line(run.path, "return -self.linear(x)")}
    assert not returns & {r["line"] for r in inside if r["file"] == path}


@pytest.mark.stops(
    "11",
    "b.add_(1)",
    "b.mul_(3)",
    'print("b._version after c = b + 1:"',
    'print("x.grad:"',
    'print("s._version:"',
    "version_before = w._version",
    'print("w:"',
)
def test_11_inplace_bumps_the_version_and_breaks_saved_tensors(run):
    assert run.at("b.add_(1)")["b"]["version"] == 0
    assert run.at("b.mul_(3)")["b"]["version"] == 1
    assert run.at('print("b._version after c = b + 1:"')["b"]["version"] == 2
    assert values(run.at('print("x.grad:"')["x"]["grad"]).tolist() == [6.0, 6.0, 6.0]
    assert run.at('print("s._version:"')["s"]["version"] == 1
    assert "has been modified by an inplace operation" in run.stdout
    assert "a leaf Variable that requires grad is being used in an in-place operation" in run.stdout
    assert run.at("version_before = w._version")["w"]["version"] == 0
    updated = run.at('print("w:"')["w"]
    assert updated["version"] == 1 and values(updated).tolist() == [2.0, 2.0, 2.0]


@pytest.mark.stops("11", 'print("out-of-place gradient is right:"')
def test_11_the_out_of_place_gradient_is_right(run):
    state = run.at('print("out-of-place gradient is right:"')
    x = values(state["x"])
    sigmoid = 1 / (1 + np.exp(-x))
    assert np.allclose(values(state["s_ok"]), sigmoid, atol=1e-6) and state["s_ok"]["version"] == 0
    # d/dx of 2 * sigmoid(x) is 2 * s * (1 - s).
    assert np.allclose(values(state["x"]["grad"]), 2 * sigmoid * (1 - sigmoid), atol=1e-6)
    assert "out-of-place gradient is right: True" in run.stdout


@pytest.mark.stops(
    "12",
    ("ctx.save_for_backward(x)", 1),
    "return grad_output * 3 * x**2",
    'print("y.grad_fn:"',
    'print("gradcheck(Cube):"',
    'print("gradcheck(WrongCube) failed:", err)',
)
def test_12_custom_function_has_its_own_node_and_passes_gradcheck(run):
    forward = run.hits(("ctx.save_for_backward(x)", 1))[0]
    assert forward["function"] == "forward" and forward["grad_enabled"] is False
    assert run.at('print("y.grad_fn:"')["y"]["grad_fn"] == "CubeBackward"
    backward = run.hits("return grad_output * 3 * x**2")[0]
    assert backward["function"] == "backward"
    assert values(backward["vars"]["grad_output"]).tolist() == [1.0, 1.0, 1.0]
    checked = run.at('print("gradcheck(Cube):"')
    x = values(checked["x"])
    assert np.allclose(values(checked["x"]["grad"]), 3 * x**2)
    assert scalar(checked["cube_ok"]) is True
    failed = run.at('print("gradcheck(WrongCube) failed:", err)')["err"]
    assert failed["type"] == "GradcheckError" and "Jacobian mismatch" in failed["repr"]


#: Lesson 13's manual update (its first occurrence) and its forward pass.
MANUAL_UPDATE = ("w -= LEARNING_RATE * w.grad", 1)
FORWARD = "loss = ((model(inputs) - targets) ** 2).mean()"


@pytest.mark.stops(
    "13",
    MANUAL_UPDATE,
    "w.grad.zero_()",
    'print(f"manual loop learned',
    'print(f"without zeroing:',
    'print("same result as the manual loop:"',
)
def test_13_training_updates_under_no_grad_and_matches_torch_optim(run):
    assert all(r["grad_enabled"] is False for r in run.hits(MANUAL_UPDATE))
    assert all(r["grad_enabled"] is True for r in run.hits("w.grad.zero_()"))
    learned = run.at('print(f"manual loop learned')
    assert abs(scalar(learned["manual_w"]) - 2) < 0.05 and abs(scalar(learned["manual_b"]) + 1) < 0.05
    final_loss = float(values(learned["loss"]))
    forgetful = scalar(run.at('print(f"without zeroing:')["forgetful_loss"])
    assert forgetful > 10 * final_loss
    assert scalar(run.at('print("same result as the manual loop:"')["same"]) is True


@pytest.mark.stops("13", FORWARD, "optimizer.step()")
def test_13_zero_grad_sets_the_gradients_to_none(run):
    passes = run.hits(FORWARD)
    assert len(passes) == scalar(passes[0]["vars"]["STEPS"])
    after_zero_grad = passes[1:]  # the first pass has had no backward yet
    for record in after_zero_grad:
        parameters = record["vars"]["model"]["parameters"]
        assert [p["has_grad"] for p in parameters] == [False, False]
        assert all(p["summary"]["grad"] is None for p in parameters)
    for record in run.hits("optimizer.step()"):
        assert all(p["has_grad"] for p in record["vars"]["model"]["parameters"])


def test_03_one_matmul_makes_three_nodes_stepped_by_expression(session, events):
    """Alt+F11 on the RNN line: x_t @ W_xh makes three nodes on every pass, h_t @ W_hh two on the first."""
    path = str(lesson_path("03"))
    line = marker_line(lesson_path("03"), "h_t = torch.tanh(")
    session.set_breakpoints(path, {line: None})
    session.start(path, stop_on_entry=False)
    made = []
    for turn in range(2):
        if turn:
            session.resume()
        assert events.pause()["line"] == line
        session.step_expression()
        nodes = {}
        while (snap := events.pause())["event"] == "op":
            names = {node["id"]: node["name"] for node in snap["graph"]["added"]}
            nodes[snap["op"]["text"]] = sorted(names[nid] for nid in snap["op"]["nodes"])
            session.step_expression()
        made.append(nodes)
    three = ["MmBackward0", "SqueezeBackward4", "UnsqueezeBackward0"]
    assert made[0]["x_t @ W_xh"] == made[1]["x_t @ W_xh"] == made[1]["h_t @ W_hh"] == three
    assert made[0]["h_t @ W_hh"] == ["MmBackward0", "SqueezeBackward4"]
    notes = lesson_path("03").read_text(encoding="utf-8")
    assert "one `@` made three nodes" in notes and "On the first pass it makes only two nodes" in notes


# ---- what the article gets wrong: each correction holds in this PyTorch, and its lesson shows it ----


@pytest.mark.stops("05", 'print("made under no_grad, is_leaf:"', 'print("x.grad:"')
def test_05_a_leaf_is_a_tensor_without_grad_fn_not_one_made_from_nothing(run):
    import torch

    x = torch.ones(3, requires_grad=True)
    with torch.no_grad():
        untracked = x * 2
    assert (torch.ones(3) * 2).is_leaf and untracked.is_leaf and (x * 2).detach().is_leaf
    assert not (x * 2).is_leaf
    made = run.at('print("x.grad:"')  # after the cell that makes them
    assert made["scaled"]["is_leaf"] is True and made["scaled"]["grad_fn"] is None
    assert made["untracked"]["is_leaf"] is True and made["untracked"]["requires_grad"] is False
    assert "made under no_grad, is_leaf: True | z.detach().is_leaf: True" in run.stdout


@pytest.mark.stops("05", 'print("t.grad:"')
def test_05_detach_inside_a_computation_stops_the_gradient(run):
    import torch

    t = torch.arange(4.0, requires_grad=True)
    u = (t * t).detach()
    (u * t).sum().backward()
    assert torch.equal(t.grad, u) and not torch.equal(t.grad, 3 * t.detach() ** 2)
    state = run.at('print("t.grad:"')
    assert values(state["t"]["grad"]).tolist() == values(state["u"]).tolist() == [0.0, 1.0, 4.0, 9.0]


@pytest.mark.stops("06", 'print("backward() inside no_grad')
def test_06_backward_inside_no_grad_still_fills_grad(run):
    import torch

    w = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    loss = (w**2).sum()
    with torch.no_grad():
        loss.backward()
    assert torch.equal(w.grad, 2 * w.detach())
    state = run.at('print("backward() inside no_grad')
    assert values(state["w"]["grad"]).tolist() == [2.0, 4.0, 6.0]


@pytest.mark.stops("11", "right = s_data.detach()")
def test_11_data_gives_a_silently_wrong_gradient_where_detach_raises(run):
    import torch

    x = torch.randn(3, requires_grad=True)
    s = torch.sigmoid(x)
    s.detach().mul_(2)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        s.sum().backward()
    s = torch.sigmoid(x)
    right = s.detach() * (1 - s.detach())
    s.data.mul_(2)
    s.sum().backward()  # no error
    assert not torch.allclose(x.grad, right)
    assert torch.allclose(x.grad, s.detach() * (1 - s.detach()))  # s(1 - s) of the doubled s it found
    state = run.at("right = s_data.detach()")
    assert state["x"]["grad"] is not None and state["s_data"]["version"] == 0
    doubled = values(state["s_data"])  # the node's saved output, now 2s
    assert np.allclose(values(state["x"]["grad"]), doubled * (1 - doubled))
    assert "after detach().mul_(2): one of the variables needed for gradient computation" in run.stdout


@pytest.mark.stops("13", 'print("same result as the manual loop:"')
def test_13_adding_loss_tensors_keeps_every_iteration_graph_and_item_does_not(run):
    import re

    import torch

    w = torch.ones(1, requires_grad=True)
    running, logged, sizes = 0.0, 0.0, []
    for _ in range(3):
        loss = (w * 3).sum()
        running, logged = running + loss, logged + loss.item()
        nodes, stack = set(), [running.grad_fn]
        while stack:
            node = stack.pop()
            if node is not None and node not in nodes:
                nodes.add(node)
                stack.extend(parent for parent, _ in node.next_functions)
        sizes.append(len(nodes))
    assert sizes[0] < sizes[1] < sizes[2] and isinstance(logged, float)
    counts = [int(n) for n in re.findall(r"with (\d+) nodes behind it", run.stdout)]
    assert len(counts) == 3 and counts[0] < counts[1] < counts[2]
    assert counts[2] - counts[1] == counts[1] - counts[0] > 0  # one more iteration's graph each time
