"""Pauses cross the pipe as changes, and every listener of the session still sees whole snapshots."""

from __future__ import annotations

from app import messages as m
from app.pause_delta import OPS_KEPT, SAME, PauseCompressor, expand


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
