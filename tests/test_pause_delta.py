"""Pauses cross the pipe as changes, and every listener of the session still sees whole snapshots."""

from __future__ import annotations

import torch

from app import messages as m
from app.history import History
from app.lesson.autograd_graph import GraphTracker
from app.lesson.summaries import TensorSummarizer
from app.pause_delta import NAMES_KEPT, OPS_KEPT, PARTS_LIMIT, SAME, GraphMirror, PauseCompressor, expand


def summary(value: float) -> dict:
    return {"type": "Tensor", "shape": [1], "values": [value]}


def test_an_unchanged_summary_is_named_not_resent_and_comes_back_whole():
    x, y = summary(1.0), summary(2.0)
    lesson_side = PauseCompressor()
    first = {"vars": {"x": x, "y": y}, "globals": {}}
    wire = lesson_side.compress(first)
    assert wire["vars"] == {"x": x, "y": y}  # nothing was sent before
    app_first = expand(None, m.decode(m.encode(wire)[m.HEADER_SIZE:]))

    y2 = summary(3.0)  # y changed: a new summary; x is the same object
    wire = lesson_side.compress({"vars": {"x": x, "y": y2, "z": x}, "globals": {}})
    assert wire["vars"]["x"] is SAME and wire["vars"]["y"] == y2
    assert wire["vars"]["z"] == x  # the same summary under a new name is sent: the app has no "z" yet
    assert first["vars"]["x"] is x  # the snapshot itself is untouched
    app_second = expand(app_first, m.decode(m.encode(wire)[m.HEADER_SIZE:]))
    assert app_second["vars"] == {"x": x, "y": y2, "z": x}
    assert list(app_second["vars"]) == ["x", "y", "z"]  # definition order kept


def test_a_section_naming_the_same_variables_sends_only_the_changed_ones_and_keeps_their_order():
    a, b, c, n = summary(1.0), summary(2.0), summary(3.0), {"type": "int", "repr": "1", "value": 1}
    lesson_side = PauseCompressor()
    app_first = expand(None, across(lesson_side.compress({"vars": {"a": a, "b": b, "n": n}, "globals": {}})))
    b2, n2 = summary(4.0), {"type": "int", "repr": "2", "value": 2}
    wire = lesson_side.compress({"vars": {"a": a, "b": b2, "n": n2}, "globals": {}})
    assert wire["vars"] == {"b": b2, "n": n2} and wire[NAMES_KEPT] == ["vars", "globals"]
    app_second = expand(app_first, across(wire))
    assert list(app_second["vars"]) == ["a", "b", "n"] and app_second["vars"]["b"] == b2
    assert app_second["vars"]["a"] is app_first["vars"]["a"]  # the very summary received before
    assert NAMES_KEPT not in app_second and app_second["vars"] is not app_first["vars"]
    # the same names in another order: every name goes, as before
    wire = lesson_side.compress({"vars": {"b": b2, "a": a, "n": n2, "c": c}, "globals": {}})
    assert wire[NAMES_KEPT] == ["globals"] and wire["vars"]["a"] is SAME
    assert list(expand(app_second, across(wire))["vars"]) == ["b", "a", "n", "c"]


def test_a_graph_diff_that_changes_nothing_travels_empty_and_comes_back_whole():
    lesson_side, app_side = PauseCompressor().graph, GraphMirror()
    nothing = {"changed": False, "added": [], "updated": [], "removed": [], "edges_added": [],
               "roots": {"y": 7}, "leaves": {}}
    app_side.expand(lesson_side.compress(dict(nothing)))
    wire = lesson_side.compress(dict(nothing))
    assert wire == {}
    assert app_side.expand(across({"graph": wire})["graph"]) == nothing


def test_operations_already_sent_are_counted_not_resent():
    lesson_side = PauseCompressor()
    ops = [{"name": "Tensor.mul", "nodes": [1]}, {"name": "Tensor.add", "nodes": [2]}]
    app = expand(None, lesson_side.compress({"vars": {}, "ops": ops[:1]}))
    wire = lesson_side.compress({"vars": {}, "ops": list(ops)})
    assert wire["ops"] == ops[1:] and wire[OPS_KEPT] == 1
    app = expand(app, dict(wire))
    assert app["ops"] == ops and OPS_KEPT not in app
    # A new line's log shares nothing with the last one: sent whole.
    fresh = [{"name": "Tensor.sum", "nodes": [3]}]
    wire = lesson_side.compress({"vars": {}, "ops": fresh})
    assert wire["ops"] == fresh and OPS_KEPT not in wire


def across(wire: dict) -> dict:
    """``wire`` as the app decodes it from the pipe."""
    return m.decode(m.encode(m.Paused(wire))[m.HEADER_SIZE:]).snapshot


def packed(value: object) -> bytes:
    """``value`` as the pipe carries it: equal values (numpy arrays included) pack the same."""
    return m.encode(m.Paused({"value": value}))


def test_an_updated_graph_node_travels_as_the_keys_that_changed_and_comes_back_whole():
    tracker, lesson_side, app_side = GraphTracker(TensorSummarizer()), PauseCompressor(), GraphMirror()
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    h = torch.tanh(x * 3)
    y = h.sum()
    pauses = [{"vars": {}, "graph": tracker.update({"x": x, "h": h, "y": y})}]
    h = torch.tanh(h)  # the old h's node loses its name
    pauses.append({"vars": {}, "graph": tracker.update({"x": x, "h": h, "y": y})})
    y.backward()  # frees the saved tensors of y's nodes; x gets a .grad
    pauses.append({"vars": {}, "graph": tracker.update({"x": x, "h": h, "y": y})})
    wires = [across(lesson_side.compress(pause))["graph"] for pause in pauses]
    patches = [[sorted(patch) for patch in wire.get("updated", [])] for wire in wires]
    whole = [app_side.expand(wire) for wire in wires]

    renamed, freed = pauses[1]["graph"]["updated"], pauses[2]["graph"]["updated"]
    assert [n["variables"] for n in renamed] == [[]]
    assert {n["name"] for n in freed} >= {"TanhBackward0", "MulBackward0", "AccumulateGrad"}
    assert patches[1] == [["id", "variables"]]
    assert {tuple(keys) for keys in patches[2]} == {("id", "saved"), ("id", "leaf")}
    for pause, got in zip(pauses, whole, strict=True):  # whole nodes, as the tracker made them
        assert packed(got["updated"]) == packed(pause["graph"]["updated"])
        assert packed(got["added"]) == packed(pause["graph"]["added"])
    before = {n["id"]: n for n in whole[0]["added"]}
    tanh = next(n for n in whole[2]["updated"] if n["name"] == "TanhBackward0")
    assert tanh["origin"] is before[tanh["id"]]["origin"]  # what did not change is the object received before
    assert all("name" in node for node in freed)  # the tracker's own nodes stay whole


def test_a_whole_graph_resets_both_sides_and_a_patch_of_an_unknown_node_is_dropped():
    lesson_side, app_side = PauseCompressor().graph, GraphMirror()
    node = {"id": 7, "name": "MulBackward0", "variables": ["y"], "saved": []}
    full = {"nodes": [node], "edges": [], "roots": {"y": 7}, "leaves": {}}
    assert lesson_side.compress(full) is full and app_side.expand(full) is full
    wire = lesson_side.compress({"added": [], "removed": [], "updated": [{**node, "variables": []}]})
    assert wire["updated"] == [{"id": 7, "variables": []}]
    assert app_side.expand(wire)["updated"] == [{**node, "variables": []}]
    assert GraphMirror().expand({"updated": [{"id": 9, "variables": []}]})["updated"] == []


def test_roots_and_leaves_go_only_when_they_change_and_come_back_as_the_dicts_received():
    tracker, lesson_side, app_side = GraphTracker(TensorSummarizer()), PauseCompressor(), GraphMirror()
    history = History()
    w = torch.tensor([1.0, 2.0], requires_grad=True)
    y = (w * 3).sum()
    namespaces = [{"w": w, "y": y}, {"w": w, "y": y, "n": 1}, {"w": w, "y": y, "n": 2}]
    z = y * 2
    namespaces.append({"w": w, "y": y, "z": z})  # a new root: both maps go again
    namespaces.append({"w": w, "y": y, "z": z})
    pauses = [{"step": i, "line": i, "vars": {}, "graph": tracker.update(ns)} for i, ns in enumerate(namespaces)]
    wires = [across(lesson_side.compress(pause)) for pause in pauses]
    sent = [sorted(set(wire["graph"]) & {"roots", "leaves"}) for wire in wires]
    assert sent == [["leaves", "roots"], [], [], ["leaves", "roots"], []]
    whole = [app_side.expand(wire["graph"]) for wire in wires]
    for pause, got in zip(pauses, whole, strict=True):
        assert got["roots"] == pause["graph"]["roots"] and got["leaves"] == pause["graph"]["leaves"]
    assert whole[2]["roots"] is whole[0]["roots"] and whole[4]["leaves"] is whole[3]["leaves"]
    assert whole[3]["roots"] == {"y": whole[0]["roots"]["y"], "z": whole[3]["roots"]["z"]}
    for wire, got in zip(wires, whole, strict=True):
        history.add_pause({**wire, "graph": got})
    shown = [history.snapshot(i)["graph_full"] for i in range(len(pauses))]
    assert [sorted(g["roots"]) for g in shown] == [["y"], ["y"], ["y"], ["y", "z"], ["y", "z"]]
    assert [len(g["nodes"]) for g in shown] == [3, 3, 3, 4, 4]
    # a map equal in content but received anew (a lesson process that sends it every time) changes nothing
    again = {**whole[4], "roots": dict(whole[4]["roots"])}
    history.add_pause({"step": 5, "line": 5, "vars": {}, "graph": again})
    assert sorted(history.snapshot(5)["graph_full"]["roots"]) == ["y", "z"]


def test_a_weight_saved_by_every_step_goes_once_and_arrives_as_one_object():
    tracker, lesson_side, app_side = GraphTracker(TensorSummarizer()), PauseCompressor().graph, GraphMirror()
    W = torch.randn(8, 8, requires_grad=True)
    h = torch.zeros(1, 8, requires_grad=True)
    pauses, numbered, whole = [], [], []
    for _ in range(3):
        h = torch.tanh(h @ W)
        pauses.append(tracker.update({"W": W, "h": h}))
        wire = across({"graph": lesson_side.compress(pauses[-1])})["graph"]
        mm = next(node for node in wire["added"] if node["name"] == "MmBackward0")
        numbered.append([type(entry) for entry in mm["saved"]].count(int))
        whole.append(app_side.expand(wire))
    assert numbered[0] == 0 and numbered[1] >= 4  # W's entry, its sizes and strides: sent before
    mat2 = [node["name"] for node in pauses[0]["added"]].index("MmBackward0")
    assert all(packed(got["added"]) == packed(pause["added"]) for pause, got in zip(pauses, whole, strict=True))
    entries = [saved["_saved_mat2"] for saved in ({e["name"]: e for e in got["added"][mat2]["saved"]} for got in whole)]
    assert entries[0]["value"]["variable"] == "W" and entries[1] is entries[0] and entries[2] is entries[0]


def test_both_sides_number_parts_afresh_together_and_a_number_never_given_says_so():
    lesson_side, app_side = PauseCompressor().graph, GraphMirror()
    alpha = {"name": "_saved_alpha", "value": 1, "freed": False, "error": None}
    for start in range(0, PARTS_LIMIT + 10, 5):  # past the limit: both start again at 0
        line = {"file": "lesson.py", "line": start}  # the origin of the nodes one line made
        nodes = [{"id": start + i, "name": "AddBackward0", "origin": line,
                  "saved": [alpha, {"name": f"_saved_{start + i}", "value": start + i, "freed": False, "error": None}]}
                 for i in range(5)]
        wire = across({"graph": lesson_side.compress({"added": nodes})})["graph"]
        assert [type(node["origin"]) for node in wire["added"]] == [dict, int, int, int, int]
        got = app_side.expand(wire)
        assert packed(got["added"]) == packed(nodes)
        assert len({id(node["saved"][0]) for node in got["added"]}) == 1
        assert len({id(node["origin"]) for node in got["added"]}) == 1
    lost = app_side.expand({"added": [{"id": 1, "name": "AddBackward0", "origin": 10**6, "saved": [10**6, "x"]}]})
    node = lost["added"][0]
    assert node["origin"] is None and [entry["error"] for entry in node["saved"]] == [
        "the lesson process referred to a saved value it never sent"] * 2


def test_a_name_the_app_never_got_becomes_a_summary_that_says_so():
    snapshot = expand({"vars": {}}, {"vars": {"ghost": SAME}})
    assert snapshot["vars"]["ghost"]["type"] == "missing"
    assert "never sent" in snapshot["vars"]["ghost"]["repr"]


def test_stepping_a_lesson_the_session_hands_out_whole_snapshots(session, events, lesson):
    path = lesson("""
        import torch
        w = torch.ones(3, requires_grad=True)
        n = 1
        n = 2
        y = (w * 2).sum()
    """)
    session.start(path)
    events.pause()
    snapshots = []
    for _ in range(4):
        session.step_over()
        snapshots.append(events.pause())
    at_n2, at_y = snapshots[2], snapshots[3]
    assert at_n2["vars"]["w"]["shape"] == [3] and at_n2["vars"]["n"]["repr"] == "1"
    assert at_y["vars"]["w"] is at_n2["vars"]["w"]  # unchanged: the summary the app already had
    assert at_y["vars"]["n"]["repr"] == "2"
    session.step_expression()
    op_pause = events.pause()
    assert op_pause["event"] == "op"
    assert set(op_pause["vars"]) >= {"w", "n"} and op_pause["vars"]["w"]["requires_grad"]
    session.step_expression()
    second = events.pause()
    assert second["event"] == "op" and [op["name"] for op in second["ops"]][:1] == [op_pause["ops"][0]["name"]]
    assert len(second["ops"]) == len(op_pause["ops"]) + 1
