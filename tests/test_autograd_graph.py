"""The autograd graph the engine reports at each pause, on small programs whose graphs PyTorch builds as stated."""

from __future__ import annotations

import gc
import weakref

import numpy as np
import pytest
import torch
from torch.nn.utils.rnn import pack_sequence

from app.lesson.autograd_graph import GraphBasis, GraphTracker, find_tensors
from app.lesson.autograd_nodes import METADATA_KEY
from app.lesson.summaries import Summarizer, TensorSummarizer


@pytest.fixture
def tracker() -> GraphTracker:
    return GraphTracker(TensorSummarizer())


def by_name(nodes: list[dict]) -> dict[str, dict]:
    """Node dicts by ``name`` (leaves by their variable), for graphs where each appears once."""
    return {node["variable"] if node["kind"] == "leaf" else node["name"]: node for node in nodes}


def saved(node: dict) -> dict[str, dict]:
    return {entry["name"]: entry for entry in node["saved"]}


def leaf_inputs() -> dict[str, torch.Tensor]:
    return {
        "x": torch.tensor([1.0, 2.0, 3.0], requires_grad=True),
        "w": torch.tensor([0.5, -1.0, 2.0], requires_grad=True),
        "b": torch.tensor([0.1, 0.2, 0.3], requires_grad=True),
    }


def test_y_equals_x_times_w_plus_b_is_the_graph_pytorch_builds(tracker):
    frame = leaf_inputs()
    x, w, b = frame["x"], frame["w"], frame["b"]
    frame["y"] = y = x * w + b
    diff = tracker.update(frame)

    nodes = by_name(diff["added"])
    assert sorted(nodes) == ["AddBackward0", "MulBackward0", "b", "w", "x"]
    add, mul = nodes["AddBackward0"], nodes["MulBackward0"]
    assert add["id"] == y.grad_fn.metadata[METADATA_KEY]
    assert diff["roots"] == {"y": add["id"]}
    assert diff["leaves"] == {nodes[v]["id"]: v for v in "xwb"}
    assert diff["edges_added"] == [
        [add["id"], mul["id"], 0], [add["id"], nodes["b"]["id"], 0],
        [mul["id"], nodes["x"]["id"], 0], [mul["id"], nodes["w"]["id"], 0],
    ]
    assert add["next"] == [[mul["id"], 0], [nodes["b"]["id"], 0]]
    assert (add["kind"], mul["kind"], nodes["x"]["kind"]) == ("op", "op", "leaf")
    assert add["variables"] == ["y"] and mul["variables"] == []
    assert nodes["x"]["name"] == "AccumulateGrad" and nodes["x"]["seq"] is None
    assert mul["seq"] == y.grad_fn.next_functions[0][0]._sequence_nr() < add["seq"] == y.grad_fn._sequence_nr()
    assert add["shape"] == mul["shape"] == [3]
    assert nodes["w"]["leaf"]["values"].tolist() == [0.5, -1.0, 2.0]

    assert saved(add)["_saved_alpha"]["value"] == 1
    self_entry, other_entry = saved(mul)["_saved_self"], saved(mul)["_saved_other"]
    assert self_entry["value"]["variable"] == "x" and other_entry["value"]["variable"] == "w"
    assert other_entry["value"]["values"].tolist() == [0.5, -1.0, 2.0]
    assert not self_entry["freed"] and self_entry["error"] is None


def test_the_first_pause_of_a_frame_without_tensors_reports_an_empty_graph(tracker):
    diff = tracker.update({"n": 3, "text": "hello"})
    assert diff == {"changed": False, "added": [], "updated": [], "removed": [], "edges_added": [],
                    "roots": {}, "leaves": {}}


def test_leaves_are_named_inside_modules_lists_dicts_and_packed_sequences(tracker):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(3, 2))
    x = torch.ones(1, 3)
    w = torch.ones(3, requires_grad=True)
    frame = {
        "model": model,
        "params": [w],
        "out": model(x),
        "d": {"k": (x * w).sum()},
        "packed": pack_sequence([torch.ones(2, 1) * w[0], torch.ones(1, 1)]),
    }
    diff = tracker.update(frame)

    assert sorted(diff["leaves"].values()) == ["model.0.bias", "model.0.weight", "params[0]"]
    assert sorted(diff["roots"]) == ["d['k']", "out", "packed.data"]
    assert diff["roots"]["out"] == frame["out"].grad_fn.metadata[METADATA_KEY]
    assert by_name(diff["added"])["model.0.weight"]["shape"] == [2, 3]
    names = [name for name, _ in find_tensors(frame)]
    assert names[:2] == ["out", "model.0.weight"]  # the frame's own names first


def test_a_tensor_under_two_names_takes_the_plainest(tracker):
    w = torch.ones(2, requires_grad=True)
    diff = tracker.update({"ws": [w], "w": w, "y": w * 2})
    assert list(diff["leaves"].values()) == ["w"]


def test_a_custom_function_is_a_custom_node_with_its_saved_tensors():
    class Square(torch.autograd.Function):
        @staticmethod
        def forward(ctx, t):
            ctx.save_for_backward(t)
            ctx.power = 2
            return t * t

        @staticmethod
        def backward(ctx, grad):
            (t,) = ctx.saved_tensors
            return 2 * t * grad

    x = torch.tensor([1.0, 2.0], requires_grad=True)
    z = Square.apply(x)
    tracker = GraphTracker(TensorSummarizer())
    node = by_name(tracker.update({"x": x, "z": z})["added"])["SquareBackward"]
    assert node["kind"] == "custom" and node["variables"] == ["z"]
    entries = saved(node)
    assert entries["saved_tensors[0]"]["value"]["variable"] == "x"
    assert entries["saved_tensors[0]"]["value"]["values"].tolist() == [1.0, 2.0]
    assert entries["ctx.power"]["value"] == 2

    z.sum().backward()
    updated = tracker.update({"x": x, "z": z})["updated"]
    entries = saved(next(n for n in updated if n["id"] == node["id"]))
    assert entries["saved_tensors[0]"] == {"name": "saved_tensors[0]", "value": None, "freed": True, "error": None}
    assert entries["ctx.power"]["value"] == 2


def test_each_pause_adds_only_the_new_nodes_and_ids_stay(tracker):
    frame = leaf_inputs()
    x, w = frame["x"], frame["w"]
    first = tracker.update(frame)
    assert first["added"] == [] and first["roots"] == {}

    frame["a"] = a = x * w
    second = tracker.update(frame)
    mul = second["roots"]["a"]
    assert [n["name"] for n in second["added"]] == ["MulBackward0", "AccumulateGrad", "AccumulateGrad"]

    frame["e"] = a.exp()
    third = tracker.update(frame)
    assert [n["name"] for n in third["added"]] == ["ExpBackward0"]
    exp = third["roots"]["e"]
    assert third["edges_added"] == [[exp, mul, 0]] and third["removed"] == []
    assert third["roots"] == {"a": mul, "e": exp}
    assert {n["id"] for n in tracker.full()["nodes"]} == {mul, exp, *second["leaves"]}


def test_a_pause_where_nothing_changed_says_so(tracker):
    frame = leaf_inputs()
    frame["y"] = frame["x"] * frame["w"]
    assert tracker.update(frame)["changed"]
    again = tracker.update(frame)
    assert again["changed"] is False
    assert again["added"] == again["updated"] == again["removed"] == again["edges_added"] == []
    assert again["roots"] == tracker.full()["roots"]


def test_pauses_that_name_the_same_nodes_share_one_naming_and_a_new_name_leaves_it_as_it_was(tracker):
    frame = leaf_inputs()
    frame["y"] = frame["x"] * frame["w"]
    first = tracker.update(frame)
    again = tracker.update(frame)
    assert again["roots"] is first["roots"] and again["leaves"] is first["leaves"]  # sent once on the wire
    frame["z"] = frame["y"]
    renamed = tracker.update(frame)
    assert renamed["roots"] == {"y": first["roots"]["y"], "z": first["roots"]["y"]}
    assert first["roots"] == {"y": renamed["roots"]["y"]}  # what an earlier pause was handed stays its own


def test_rebinding_a_variable_removes_the_nodes_only_it_reached(tracker):
    x, w = leaf_inputs()["x"], leaf_inputs()["w"]
    y = x * w
    before = tracker.update({"x": x, "w": w, "y": y})
    mul = before["roots"]["y"]
    y = x + w
    after = tracker.update({"x": x, "w": w, "y": y})
    assert after["removed"] == [mul]
    assert [n["name"] for n in after["added"]] == ["AddBackward0"]
    assert set(after["leaves"]) == set(before["leaves"])  # x and w keep their AccumulateGrad
    assert mul not in {n["id"] for n in tracker.full()["nodes"]}


def test_an_in_place_write_gives_the_variable_a_new_grad_fn(tracker):
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x * 2
    mul = tracker.update({"x": x, "y": y})["roots"]["y"]
    y[0] = 5.0
    diff = tracker.update({"x": x, "y": y})
    copy = diff["roots"]["y"]
    assert copy != mul and [n["name"] for n in diff["added"]] == ["CopySlices"]
    assert diff["edges_added"] == [[copy, mul, 0]] and diff["removed"] == []
    renamed = {n["id"]: n for n in diff["updated"]}
    assert renamed[mul]["variables"] == [] and diff["added"][0]["variables"] == ["y"]


def test_backward_frees_saved_tensors_and_the_leaves_show_their_grads(tracker):
    frame = leaf_inputs()
    x, w = frame["x"], frame["w"]
    frame["loss"] = loss = (x * w).sum()
    graph = by_name(tracker.update(frame)["added"])
    loss.backward()
    diff = tracker.update(frame)

    assert diff["changed"] and diff["added"] == [] and diff["removed"] == []
    updated = {n["id"]: n for n in diff["updated"]}
    mul = updated[graph["MulBackward0"]["id"]]
    assert {e["name"]: (e["freed"], e["value"]) for e in mul["saved"]} == {
        "_saved_self": (True, None), "_saved_other": (True, None)}
    assert updated[graph["x"]["id"]]["leaf"]["grad"]["values"].tolist() == w.tolist()
    assert updated[graph["w"]["id"]]["leaf"]["grad"]["values"].tolist() == x.tolist()
    assert saved(by_name(tracker.full()["nodes"])["MulBackward0"])["_saved_self"]["freed"]
    with pytest.raises(RuntimeError, match="freed"):
        loss.grad_fn.next_functions[0][0]._saved_self  # noqa: B018 - PyTorch agrees


def test_retain_graph_keeps_saved_tensors(tracker):
    frame = leaf_inputs()
    frame["loss"] = loss = (frame["x"] * frame["w"]).sum()
    tracker.update(frame)
    loss.backward(retain_graph=True)
    diff = tracker.update(frame)
    assert all(not e["freed"] for n in diff["updated"] for e in n["saved"])
    assert {n["name"] for n in diff["updated"]} == {"AccumulateGrad"}  # only the new grads


def test_autograd_grad_in_the_script_is_noticed_although_no_leaf_changed(tracker):
    frame = leaf_inputs()
    frame["e"] = e = (frame["x"] * frame["w"]).exp()
    frame["loss"] = loss = e.sum()
    tracker.update(frame)
    torch.autograd.grad(loss, frame["x"])
    diff = tracker.update(frame)
    freed = {n["name"] for n in diff["updated"] if any(entry["freed"] for entry in n["saved"])}
    assert freed == {"ExpBackward0", "MulBackward0"}


def test_a_probe_settled_as_freed_does_not_hide_a_later_autograd_grad_of_another_root(tracker):
    frame = leaf_inputs()
    frame["first"] = first = (frame["x"] * frame["w"]).exp().sum()
    tracker.update(frame)
    first.backward()
    tracker.update(frame)  # the probe below first is freed for good: it is not probed again
    frame["second"] = second = (frame["x"] * frame["b"]).exp().sum()
    tracker.update(frame)
    assert tracker.update(frame)["changed"] is False
    torch.autograd.grad(second, frame["x"])  # no .grad changes: only the probe below second tells
    diff = tracker.update(frame)
    freed = {n["name"] for n in diff["updated"] if any(entry["freed"] for entry in n["saved"])}
    assert freed == {"ExpBackward0", "MulBackward0"}


def test_the_quick_look_of_an_unchanged_namespace_still_sees_autograd_grad_free_the_graph(tracker):
    frame = leaf_inputs()
    frame["e"] = e = (frame["x"] * frame["w"]).exp()
    frame["loss"] = loss = e.sum()
    tracker.update(frame)
    assert tracker.update(frame, same_tensors=True)["changed"] is False
    torch.autograd.grad(loss, frame["x"])  # frees the saved tensors; no variable's summary changes
    diff = tracker.update(frame, same_tensors=True)
    freed = {n["name"] for n in diff["updated"] if any(entry["freed"] for entry in n["saved"])}
    assert freed == {"ExpBackward0", "MulBackward0"}
    assert tracker.update(frame, same_tensors=True)["changed"] is False


def test_the_quick_look_at_a_namespace_that_is_not_the_last_one_looks_at_it_all(tracker):
    frame = leaf_inputs()
    frame["y"] = frame["x"] * frame["w"]
    tracker.update(frame)
    other = {"z": frame["x"] * 3}
    diff = tracker.update(other, same_tensors=True)  # a wrong hint: "y" is not there
    assert diff["roots"] == {"z": diff["added"][0]["id"]} and diff["changed"] is True


def test_the_graph_basis_tells_a_changed_tensor_from_a_changed_number():
    summarizer = Summarizer()
    x = torch.ones(2, requires_grad=True)
    frame = object()
    basis = GraphBasis()

    def summaries(**values):
        return {name: summarizer.summarize(value) for name, value in values.items()}

    assert not basis.unchanged(frame, summaries(x=x, t=0))  # nothing seen yet
    basis.seen(frame, summaries(x=x, t=0))
    assert basis.unchanged(frame, summaries(x=x, t=1))  # a number changed: no tensor did
    assert not basis.unchanged(object(), summaries(x=x, t=1))  # another frame
    assert not basis.unchanged(frame, summaries(x=x * 1, t=1))  # x rebound
    assert not basis.unchanged(frame, summaries(t=1))  # x deleted
    assert not basis.unchanged(frame, summaries(x=x, y=x, t=1))  # a new name for a tensor
    assert not basis.unchanged(frame, summaries(x=x, t=1, n=2))  # a new name: looked at whole
    assert not basis.unchanged(frame, summaries(x=None, t=1))  # a tensor's name now holds a number
    with torch.no_grad():
        x.add_(1)
    assert not basis.unchanged(frame, summaries(x=x, t=1))  # written in place
    basis.seen(frame, summaries(x=x))
    basis.forget()
    assert not basis.unchanged(frame, summaries(x=x))


def test_the_graph_basis_passes_over_tensors_that_are_in_no_graph():
    """A recording's ``x_t = xs[t]`` rebinds a tensor that needs no grad: no graph can have changed."""
    summarizer = Summarizer()
    w, xs = torch.ones(2, requires_grad=True), torch.arange(6.0).reshape(3, 2)
    frame = object()
    basis = GraphBasis()

    def summaries(**values):
        return {name: summarizer.summarize(value) for name, value in values.items()}

    basis.seen(frame, summaries(w=w, x_t=xs[0]))
    assert basis.unchanged(frame, summaries(w=w, x_t=xs[1]))
    assert basis.unchanged(frame, summaries(w=w, x_t=None))
    assert not basis.unchanged(frame, summaries(w=w, x_t=xs[1] * w))  # now made by an operation on w
    assert not basis.unchanged(frame, summaries(w=w, x_t=xs[1].requires_grad_()))  # now a leaf
    with_grad = xs[2].clone()
    with_grad.grad = torch.ones(2)
    assert not basis.unchanged(frame, summaries(w=w, x_t=with_grad))  # a .grad: part of what a backward left


def test_a_leaf_written_through_data_shows_its_new_values_in_the_graph(tracker):
    w = torch.ones(2, requires_grad=True)
    frame = {"w": w, "y": w * 3}
    leaf = by_name(tracker.update(frame)["added"])["w"]
    assert leaf["leaf"]["values"].tolist() == [1.0, 1.0]
    w.data -= 1  # no version bump: only the values tell
    updated = tracker.update(frame)["updated"]
    assert [node["leaf"]["values"].tolist() for node in updated] == [[0.0, 0.0]]


def test_a_saved_tensor_modified_in_place_carries_pytorchs_message(tracker):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    a = x * 2
    s = a.sin()
    a.mul_(2)
    sin = by_name(tracker.update({"x": x, "a": a, "s": s})["added"])["SinBackward0"]
    entry = saved(sin)["_saved_self"]
    assert not entry["freed"] and entry["value"] is None
    with pytest.raises(RuntimeError) as direct:
        s.grad_fn._saved_self  # noqa: B018
    assert entry["error"] == str(direct.value)
    assert "is at version 1; expected version 0" in entry["error"]


def test_a_weight_saved_at_every_step_is_one_entry_until_what_it_shows_changes(tracker):
    W = torch.randn(8, 8, requires_grad=True)  # over the saved-value limit: its entry shows no values
    h = torch.zeros(1, 8, requires_grad=True)
    entries = []
    for _ in range(3):
        h = h @ W
        entries.append(saved(by_name(tracker.update({"W": W, "h": h})["added"])["MmBackward0"])["_saved_mat2"])
    assert entries[0]["value"]["variable"] == "W" and entries[0]["value"]["values"] is None
    assert entries[1] is entries[0] and entries[2] is entries[0]  # one object: the wire sends it once
    # Each thing the entry shows makes a new one: a version, a name, a shape set through .data.
    with torch.no_grad():
        W.add_(1.0)
    h = h @ W
    bumped = saved(by_name(tracker.update({"W": W, "h": h})["added"])["MmBackward0"])["_saved_mat2"]
    assert bumped is not entries[0] and bumped["value"]["variable"] == "W"
    h = h @ W
    renamed = saved(by_name(tracker.update({"weight": W, "h": h})["added"])["MmBackward0"])["_saved_mat2"]
    assert renamed is not bumped and renamed["value"]["variable"] == "weight"
    W.data = torch.randn(8, 4)
    h = h @ W
    reshaped = saved(by_name(tracker.update({"weight": W, "h": h})["added"])["MmBackward0"])["_saved_mat2"]
    assert reshaped["value"]["shape"] == [8, 4]


def test_a_small_saved_tensor_written_through_data_shows_its_new_values(tracker):
    w = torch.tensor([1.0, 2.0], requires_grad=True)  # small: its entry carries values
    x = torch.tensor([3.0, 4.0], requires_grad=True)
    y = x * w
    first = saved(by_name(tracker.update({"w": w, "x": x, "y": y})["added"])["MulBackward0"])["_saved_other"]
    w.data.mul_(10)  # no version bump
    y = x * w
    second = saved(by_name(tracker.update({"w": w, "x": x, "y": y})["added"])["MulBackward0"])["_saved_other"]
    assert first["value"]["values"].tolist() == [1.0, 2.0]
    assert second["value"]["values"].tolist() == [10.0, 20.0]


def test_freed_entries_are_one_object_per_name(tracker):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    ys = [(x * k).sin() for k in (2.0, 3.0)]
    frame = {"x": x, "y0": ys[0], "y1": ys[1]}
    tracker.update(frame)
    for y in ys:
        y.sum().backward()
    freed = [saved(node)["_saved_self"] for node in tracker.update(frame)["updated"] if node["name"] == "SinBackward0"]
    assert len(freed) == 2 and freed[0]["freed"] and freed[0] is freed[1]


def test_the_full_graph_is_what_the_headless_trace_prints(tracker):
    frame = leaf_inputs()
    x, w, b = frame["x"], frame["w"], frame["b"]
    frame["hs"] = [x * w]
    frame["y"] = frame["hs"][0] + b
    tracker.update(frame)
    full = tracker.full()
    nodes = by_name(full["nodes"])
    assert full["roots"] == {"y": nodes["AddBackward0"]["id"], "hs[0]": nodes["MulBackward0"]["id"]}
    assert {n["variable"] for n in full["nodes"]} == {None, "x", "w", "b"}
    assert sorted(full["edges"]) == sorted([
        [nodes["AddBackward0"]["id"], nodes["MulBackward0"]["id"], 0],
        [nodes["AddBackward0"]["id"], nodes["b"]["id"], 0],
        [nodes["MulBackward0"]["id"], nodes["x"]["id"], 0],
        [nodes["MulBackward0"]["id"], nodes["w"]["id"], 0],
    ])


def test_an_unrolled_loop_grows_five_nodes_a_step(tracker):
    torch.manual_seed(0)
    W_xh = torch.randn(2, 4, requires_grad=True)
    W_hh = torch.randn(4, 4, requires_grad=True)
    b = torch.zeros(4, requires_grad=True)
    h = torch.zeros(1, 4)
    sizes = []
    for _ in range(20):
        h = torch.tanh(torch.randn(1, 2) @ W_xh + h @ W_hh + b)
        diff = tracker.update({"W_xh": W_xh, "W_hh": W_hh, "b": b, "h": h})
        assert diff["removed"] == []
        sizes.append(len([n for n in diff["added"] if n["kind"] == "op"]))
    loss = h.sum()
    tracker.update({"W_xh": W_xh, "W_hh": W_hh, "b": b, "h": h, "loss": loss})
    full = tracker.full()
    assert sizes == [5] * 20
    # 3 leaves, 5 operations a step, the loss; the first h is a constant, so its MmBackward0 has one edge
    assert len(full["nodes"]) == 5 * 20 + 4 and len(full["edges"]) == 8 * 20


def test_the_tracker_keeps_nothing_of_the_learners_graph_alive(tracker):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    t = x * 2
    y = t.sin()  # saves t
    tracker.update({"x": x, "t": t, "y": y})
    gone = weakref.ref(t)
    del t, y
    gc.collect()
    assert gone() is None
    assert tracker.update({"x": x})["removed"]


def test_a_node_keeps_its_id_across_trackers():
    x = torch.ones(2, requires_grad=True)
    y = x * 3
    first = GraphTracker(TensorSummarizer()).update({"x": x, "y": y})
    second = GraphTracker(TensorSummarizer()).update({"x": x, "y": y})
    assert first["roots"] == second["roots"]
    assert np.array_equal(first["added"][0]["saved"][0]["value"]["values"], np.array(3))


def test_a_module_stepped_before_its_init_ran_has_no_tensors_yet():
    class Half(torch.nn.Module):
        pass

    half = Half.__new__(Half)  # what a frame holds while Half.__init__ has not called super().__init__()
    assert [name for name, _ in find_tensors({"self": half, "x": torch.ones(1)})] == ["x"]


def test_a_new_root_with_its_saved_tensors_in_place_is_no_sign_of_a_backward(tracker, monkeypatch):
    """Truncated backpropagation as a recording sees it: only the pause after ``backward()`` looks for freed tensors."""
    looks = []
    refresh = tracker._refresh_freed
    monkeypatch.setattr(tracker, "_refresh_freed", lambda frame: looks.append(1) or refresh(frame))
    frame = leaf_inputs()
    frame["h"] = frame["x"] * frame["w"]
    tracker.update(frame)
    frame["loss"] = loss = (frame["h"] ** 2).sum()
    tracker.update(frame)
    assert looks == []
    loss.backward()
    diff = tracker.update(frame)
    assert looks == [1]
    freed = {n["name"] for n in diff["updated"] if any(e["freed"] for e in n["saved"])}
    assert freed == {"PowBackward0", "MulBackward0"}
    frame["h"] = frame["h"].detach()
    tracker.update(frame)
    frame["h"] = torch.tanh(frame["h"] * frame["b"])
    diff = tracker.update(frame)
    assert looks == [1]
    added = by_name(diff["added"])
    assert not any(e["freed"] for name in ("TanhBackward0", "MulBackward0") for e in added[name]["saved"])


def test_a_leaf_that_is_a_variable_takes_the_summary_the_pause_made_of_it(tracker, monkeypatch):
    frame = leaf_inputs()
    frame["y"] = frame["x"] * frame["w"] + frame["b"]
    summarizer = TensorSummarizer()
    summaries = {name: summarizer.summarize(value) for name, value in frame.items()}
    asked = []
    summarize = tracker._summarizer.summarize
    monkeypatch.setattr(tracker._summarizer, "summarize", lambda t: asked.append(t) or summarize(t))
    added = tracker.update(frame, summaries=summaries)["added"]
    leaves = {n["variable"]: n["leaf"] for n in added if n["kind"] == "leaf"}
    assert sorted(leaves) == ["b", "w", "x"]
    assert all(leaves[name] is summaries[name] for name in leaves)
    assert asked == []
    frame["xs"] = [torch.ones(2, requires_grad=True)]  # a leaf in a list: not a variable, summarised here
    frame["z"] = frame["xs"][0] * 2
    summaries["z"] = summarizer.summarize(frame["z"])
    tracker.update(frame, summaries=summaries)
    assert len(asked) == 1 and asked[0] is frame["xs"][0]
