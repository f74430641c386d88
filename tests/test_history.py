"""Time travel, engine side: a History fed from real recorded runs gives back every past pause as it was."""

from __future__ import annotations

import gc
import os
import sys
import textwrap
import time
import tracemalloc
import types
from typing import Any

import numpy as np
import pytest
from conftest import EventLog, borrow, give_back, line_of

from app import messages as m
from app.history import History
from app.trace import trace_graph, trace_records

#: Keys a history adds to a snapshot.
EXTRAS = ("graph_full", "output")


def record(session, events, path: str, limit: int | None = None, history: History | None = None
           ) -> tuple[History, list[dict[str, Any]], list[list[tuple[str, str]]]]:
    """Run ``path`` in record mode from its first line, feeding a history in arrival order.

    Returns the history, the snapshots as they arrived and, for each, the output printed before it.
    """
    history = history if history is not None else History()
    snapshots, outputs, printed = [], [], []
    session.start(path)
    while True:
        message = events.wait((m.Output, m.Paused, m.Ended))
        if isinstance(message, m.Output):
            history.add_output(message.stream, message.text)
            printed.append((message.stream, message.text))
        elif isinstance(message, m.Paused):
            history.add_pause(message.snapshot)
            snapshots.append(message.snapshot)
            outputs.append(list(printed))
            if len(snapshots) == 1:
                session.record(limit)
            elif not message.snapshot["recording"]:
                return history, snapshots, outputs
        else:
            return history, snapshots, outputs


def assert_same(got: Any, want: Any, where: str = "snapshot") -> None:
    """Deep equality that compares numpy arrays by dtype, shape and values, and dicts in key order."""
    if isinstance(want, np.ndarray):
        assert isinstance(got, np.ndarray) and got.dtype == want.dtype and got.shape == want.shape, where
        assert np.array_equal(got, want, equal_nan=want.dtype.kind in "fc"), where
    elif isinstance(want, dict):
        assert isinstance(got, dict) and list(got) == list(want), f"{where}: {list(got)} != {list(want)}"
        for key in want:
            assert_same(got[key], want[key], f"{where}.{key}")
    elif isinstance(want, list):
        assert isinstance(got, list) and len(got) == len(want), where
        for i, (g, w) in enumerate(zip(got, want, strict=True)):
            assert_same(g, w, f"{where}[{i}]")
    else:
        assert type(got) is type(want) and got == want, f"{where}: {got!r} != {want!r}"


def replayed_graphs(snapshots: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The whole graph after each pause, rebuilt the obvious way from the snapshots' diffs."""
    nodes: dict[int, dict] = {}
    graphs = []
    for snapshot in snapshots:
        diff = snapshot["graph"]
        for node in diff["added"] + diff["updated"]:
            nodes[node["id"]] = node
        for nid in diff["removed"]:
            del nodes[nid]
        graphs.append({"nodes": list(nodes.values()), "roots": diff["roots"], "leaves": diff["leaves"]})
    return graphs


def past(history: History, index: int) -> dict[str, Any]:
    return {k: v for k, v in history.snapshot(index).items() if k not in EXTRAS}


LOOP_AND_CALLS = """
import torch

def square(v):
    w = v * v              # in square
    return w

x = torch.zeros(3)
total = 0
for i in range(4):
    total += i             # add
    x.add_(1)              # in place
    y = square(x)          # call
print("total", total)
loss = (y * 2).sum()
"""


@pytest.fixture(scope="module")
def loop_and_calls(tmp_path_factory) -> tuple[str, History, list[dict[str, Any]]]:
    """LOOP_AND_CALLS recorded once for the tests that read it: its path, the history and the snapshots."""
    path = tmp_path_factory.mktemp("loop_and_calls") / "lesson.py"
    path.write_text(textwrap.dedent(LOOP_AND_CALLS).lstrip("\n"), encoding="utf-8")
    events = EventLog()
    session = borrow(events)
    try:
        history, snapshots, _ = record(session, events, str(path))
    finally:
        give_back(session)
    return str(path), history, snapshots


def test_every_past_pause_comes_back_as_it_arrived(loop_and_calls):
    _, history, snapshots = loop_and_calls
    assert len(history) == len(snapshots) >= 40 and history.dropped_before == 0
    graphs = replayed_graphs(snapshots)
    for index, snapshot in enumerate(snapshots):
        again = history.snapshot(index)
        assert_same({k: v for k, v in again.items() if k not in EXTRAS}, snapshot, f"pause {index}")
        full = again["graph_full"]
        assert_same(full["nodes"], graphs[index]["nodes"], f"pause {index} graph")
        assert full["roots"] == graphs[index]["roots"] and full["leaves"] == graphs[index]["leaves"]


def test_a_loop_variable_has_its_old_value_at_each_step(loop_and_calls):
    path, history, _ = loop_and_calls
    add = line_of(path, "# add")
    at_add = [i for i, step, line, *_ in history.entries() if line == add]
    assert [past(history, i)["vars"]["total"]["value"] for i in at_add] == [0, 0, 1, 3]
    in_place = [i for i, step, line, *_ in history.entries() if line == line_of(path, "# in place")]
    assert [past(history, i)["vars"]["x"]["values"].tolist() for i in in_place] == [[v] * 3 for v in (0, 1, 2, 3)]
    assert [past(history, i)["vars"]["x"]["version"] for i in in_place] == [0, 1, 2, 3]


def test_a_function_local_at_the_step_inside_the_call(loop_and_calls):
    path, history, _ = loop_and_calls
    returns = [i for i, _step, line, event, function, _ in history.entries()
               if function == "square" and line == line_of(path, "return w") and event == "line"]
    assert len(returns) == 4
    for call, index in enumerate(returns, 1):
        inside = past(history, index)
        assert inside["depth"] == 1 and [f["function"] for f in inside["stack"]] == ["square", "<module>"]
        assert inside["vars"]["w"]["values"].tolist() == [call * call] * 3
        assert inside["vars"]["w"]["grad_fn"] is None and "total" in inside["globals"]
    after = past(history, len(history) - 1)
    assert "w" not in after["vars"] and after["vars"]["y"]["values"].tolist() == [16.0] * 3


def test_unchanged_tensors_are_stored_once(session, events, lesson):
    path = lesson("""
    import torch
    big = torch.randn(64, 64)          # 16 KiB of values, under the history's value limit
    weights = [torch.randn(32, 32) for _ in range(4)]
    i = 0
    while True:
        i += 1
    """)
    history, snapshots, _ = record(session, events, path, limit=1000)
    loop_start = next(i for i, s in enumerate(snapshots) if s["line"] == line_of(path, "i += 1"))
    before = History()
    for snapshot in snapshots[:loop_start + 1]:
        before.add_pause(snapshot)
    tensor_bytes = snapshots[-1]["vars"]["big"]["nbytes"] + 4 * snapshots[-1]["vars"]["weights"]["items"][0]["nbytes"]
    steps = len(history) - loop_start - 1
    grown = history.nbytes - before.nbytes
    assert steps >= 900 and before.nbytes > tensor_bytes
    # only `i` changes: a step costs a few hundred bytes, not another copy of 32 KiB of tensors
    assert grown / steps < 600 and grown < steps * tensor_bytes / 50


def kept_bytes(root: object) -> int:
    """``sys.getsizeof`` summed over every object reachable from ``root``, classes, modules and functions aside."""
    seen, stack, total = set(), [root], 0
    while stack:
        obj = stack.pop()
        if id(obj) in seen or isinstance(obj, (type, types.ModuleType, types.FunctionType, types.BuiltinFunctionType)):
            continue
        seen.add(id(obj))
        total += sys.getsizeof(obj)
        stack.extend(gc.get_referents(obj))
    return total


RNN = """
import torch
h = torch.zeros(1, 8)
W = torch.randn(8, 8, requires_grad=True)
for t in range(10_000):
    x_t = torch.full((1, 8), float(t % 7))
    h = torch.tanh(x_t @ W + h)
    if t % 20 == 19:
        h.sum().backward()
        h = h.detach()
"""


def test_the_byte_count_is_measured_not_guessed(session, events, lesson):
    history, snapshots, _ = record(session, events, lesson(RNN), limit=1500)
    assert 0.85 < history.nbytes / kept_bytes(history) < 1.15
    blobs = [m.encode(snapshot)[m.HEADER_SIZE:] for snapshot in snapshots]
    tracemalloc.start()
    try:
        again = History()
        for blob in blobs:
            again.add_pause(m.decode(blob))
        gc.collect()  # empties the interpreter's free lists, which tracemalloc counts as held
        traced = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert 0.8 < again.nbytes / traced < 1.25  # tracemalloc also sees the interpreter's free lists


def test_a_small_budget_keeps_the_newest_steps_and_reports_the_dropped_ones(session, events, lesson):
    path = lesson("""
    import torch
    W = torch.randn(8, 8, requires_grad=True)

    def step(h, t):
        x_t = torch.full((1, 8), float(t % 7))
        return torch.tanh(x_t @ W + h)

    h = torch.zeros(1, 8)
    for t in range(10_000):
        h = step(h, t)
        if t % 20 == 19:
            h.sum().backward()
            h = h.detach()
    """)
    budget = 400_000
    history, snapshots, _ = record(session, events, path, limit=2000, history=History(budget_bytes=budget))
    assert history.nbytes <= budget and 0.85 < history.nbytes / kept_bytes(history) < 1.15
    first = history.dropped_before
    assert 0 < first < len(history) - 100
    entries = history.entries()
    assert [e[0] for e in entries] == list(range(first, len(history)))
    assert [e[1] for e in entries] == [s["step"] for s in snapshots[first:]]
    with pytest.raises(IndexError, match="dropped"):
        history.snapshot(first - 1)
    graphs = replayed_graphs(snapshots)
    for index in range(first, len(history)):
        again = history.snapshot(index)
        assert_same({k: v for k, v in again.items() if k not in EXTRAS}, snapshots[index], f"pause {index}")
        assert_same(again["graph_full"]["nodes"], graphs[index]["nodes"], f"pause {index} graph")
    again = History(budget_bytes=budget)  # the same pauses, watched one by one: never over the budget
    for snapshot in snapshots:
        again.add_pause(snapshot)
        assert again.nbytes <= budget


def test_an_endless_loop_recorded_to_a_limit_keeps_its_partial_recording(session, events, lesson):
    path = lesson("""
    n = 0
    while True:
        n += 1
    """)
    history, snapshots, _ = record(session, events, path, limit=300)
    session.stop()
    assert events.end().status == "stopped"
    assert len(history) == 302 and not snapshots[-1]["recording"]
    counted = [past(history, i)["vars"].get("n", {}).get("value") for i in range(len(history))]
    assert counted == [s["vars"].get("n", {}).get("value") for s in snapshots]
    assert counted[-1] == 150 and history.entries()[-1][1] == snapshots[-1]["step"]


def test_graph_full_at_an_earlier_step_is_the_graph_the_trace_saw_then(session, events, lesson):
    path = lesson("""
    import torch
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    w = torch.tensor([3.0, -1.0], requires_grad=True)
    h = x * w
    for k in range(3):
        h = torch.tanh(h) + w
    loss = h.sum()
    loss.backward()
    h = None
    loss = x.sum() * 2
    """)
    traced = [r for r in trace_records(path, graph=True) if r["event"] != "end"]
    history, snapshots, _ = record(session, events, path)
    assert [s["step"] for s in snapshots] == [r["step"] for r in traced]
    assert any(len(r["graph"]["nodes"]) > 8 for r in traced)
    def without_ops(graph: dict) -> dict:
        """The trace steps (so logs each operation's span); record mode logs none: compare the rest."""
        nodes = [{**node, "origin": {k: v for k, v in node["origin"].items() if k not in ("span", "op", "text")}}
                 for node in graph["nodes"]]
        return {**graph, "nodes": nodes}

    for index, want in enumerate(traced):
        got = trace_graph(history.snapshot(index)["graph_full"])
        assert without_ops(got) == without_ops(want["graph"]), f"pause {index}"


def test_output_up_to_a_step(session, events, lesson):
    path = lesson("""
    import sys
    for i in range(3):
        print("line", i)
        print("warn", i, file=sys.stderr)
    done = True
    """)
    history, snapshots, outputs = record(session, events, path)
    for index in range(len(history)):
        assert history.snapshot(index)["output"] == outputs[index]
    at_done = next(i for i, s in enumerate(snapshots) if s["line"] == line_of(path, "done = True"))
    output = history.snapshot(at_done)["output"]
    assert "".join(t for s, t in output if s == "stdout") == "line 0\nline 1\nline 2\n"
    assert "".join(t for s, t in output if s == "stderr") == "warn 0\nwarn 1\nwarn 2\n"
    assert history.snapshot(0)["output"] == []


def test_console_text_over_its_share_of_the_budget_drops_the_oldest(session, events, lesson):
    path = lesson("""
    for i in range(400):
        print(f"line {i:04d}", "x" * 200)
    done = True
    """)
    history, snapshots, outputs = record(session, events, path, history=History(budget_bytes=200_000))
    kept = history.snapshot(len(history) - 1)["output"]
    assert history.dropped_output > 0 and kept == outputs[-1][history.dropped_output:]
    assert sum(len(text) for _, text in kept) < 50_000
    assert "".join(text for _, text in kept).endswith("line 0399 " + "x" * 200 + "\n")


def test_diff_between_two_steps(session, events, lesson):
    path = lesson("""
    import torch
    x = torch.ones(2, requires_grad=True)
    y = x * 2
    h = x + 1
    z = y.sum()              # a
    with torch.no_grad():
        x.mul_(3)
    h = h * y
    del y
    k = 1                    # b
    """)
    history, _, _ = record(session, events, path)
    lines: dict[int, int] = {}
    for index, _step, line, event, *_ in history.entries():
        if event == "line":
            lines.setdefault(line, index)
    changes = history.diff(lines[line_of(path, "# a")], lines[line_of(path, "# b")])
    assert changes["vars"] == {"added": ["z"], "removed": ["y"], "changed": ["x", "h"]}
    tensors = {t["name"]: t for t in changes["tensors"]}
    assert tensors["x"]["values_changed"] and tensors["x"]["grad_fn"] == [None, None]
    assert tensors["h"]["grad_fn"] == ["AddBackward0", "MulBackward0"]
    assert sorted(n["name"] for n in changes["graph"]["added"]) == ["MulBackward0", "SumBackward0"]
    assert changes["graph"]["removed"] == []
    assert history.diff(3, 3)["vars"] == {"added": [], "removed": [], "changed": []}


def test_timeline_flags_breakpoints_and_post_mortem(session, events, lesson):
    path = lesson("""
    x = 1
    y = 2                    # stop
    raise ValueError("boom")
    """)
    history = History()
    session.breakpoints[path] = {line_of(path, "# stop"): None}
    session.start(path, stop_on_entry=False)
    history.add_pause(events.pause(), kind="breakpoint")
    session.resume()
    post_mortem = events.pause()
    history.add_pause(post_mortem)
    assert [e[1:] for e in history.entries()] == [
        (1, line_of(path, "# stop"), "line", "<module>", ("breakpoint",)),
        (post_mortem["step"], line_of(path, "raise"), "exception", "<module>", ("exception", "post_mortem"))]
    assert history.snapshot(1)["exception"]["message"] == "boom"


def test_large_tensors_keep_a_sample_of_their_values(session, events, lesson):
    path = lesson("""
    import torch
    big = torch.arange(10_000.0)
    small = torch.arange(5.0)
    """)
    history, _, _ = record(session, events, path, history=History(value_limit=100))
    kept = past(history, len(history) - 1)["vars"]
    assert kept["big"]["history_values"] == "sample" and kept["big"]["sampled"]
    assert kept["big"]["values"].size == 100 and kept["big"]["values"][[0, -1]].tolist() == [0.0, 9999.0]
    assert kept["big"]["max"] == 9999.0 and kept["big"]["shape"] == [10_000]
    assert "history_values" not in kept["small"] and kept["small"]["values"].tolist() == [0, 1, 2, 3, 4]


def test_graph_diffs_from_replies_keep_later_graphs_right(session, events, lesson):
    path = lesson("""
    import torch
    def double(v):
        return v * 2             # inside
    a = torch.ones(2, requires_grad=True)
    b = a + 1
    c = double(b)
    d = c.sum()
    e = 0
    """)
    history = History()
    session.breakpoints[path] = {line_of(path, "# inside"): None}
    session.start(path, stop_on_entry=False)
    history.add_pause(events.pause())
    caller = events.reply(session.request("frame", index=1))  # the graph of <module>'s tensors now
    history.add_graph_change(caller["graph"])
    for _ in range(3):  # out of double, then d = c.sum() runs
        session.step_into()
        history.add_pause(events.pause())
    whole = events.reply(session.request("graph"))["graph"]
    assert trace_graph(history.snapshot(len(history) - 1)["graph_full"]) == trace_graph(whole)
    assert {n["name"] for n in whole["nodes"]} >= {"AddBackward0", "MulBackward0", "SumBackward0"}


def test_while_recording_each_print_is_kept_at_the_step_it_was_printed_at_however_far_the_app_lags(
        session, events, lesson):
    """The recording runs ahead of the app; text and pauses come on different pipes, so a print was
    shown one step late (or, before, at an earlier step than it was printed at)."""
    path = lesson("""
    for i in range(40):
        print(f"line {i}")
        x = i
    done = True
    """)
    history = History()
    session.start(path)
    first = True
    while True:
        message = events.wait((m.Output, m.Paused, m.Ended))
        if isinstance(message, m.Output):
            history.add_output(message.stream, message.text)
        elif isinstance(message, m.Paused):
            history.add_pause(message.snapshot)
            if first:
                first = False
                session.record()
            elif not message.snapshot["recording"]:
                break
            time.sleep(0.002)  # an app slower than the lesson: the lesson runs far ahead
        else:
            break
    checked = 0
    for index in range(len(history)):
        snapshot = history.snapshot(index)
        if snapshot["line"] == 3:  # about to run `x = i`: "line i" was printed just before
            i = snapshot["vars"]["i"]["value"]
            assert "".join(text for _, text in snapshot["output"]) == "".join(f"line {k}\n" for k in range(i + 1))
            checked += 1
    assert checked == 40


def test_text_left_to_read_is_counted_on_pipes_only(tmp_path):
    """A recorded pause waits for the app to read the lesson's text: a file the lesson put on fd 1 or
    2 has bytes ahead of its position that no one reads, and must not hold the recording up."""
    from app.lesson.lesson_io import unread

    read_end, write_end = os.pipe()
    try:
        assert unread(write_end) == 0
        os.write(write_end, b"printed\n")
        assert unread(write_end) == 8
        os.read(read_end, 8)
        assert unread(write_end) == 0
    finally:
        os.close(read_end)
        os.close(write_end)
    path = tmp_path / "out.txt"
    path.write_bytes(b"bytes ahead of the position")
    with open(path, "r+b") as file:
        fd = file.fileno()
        assert unread(fd) == 0
    assert unread(fd) == 0  # closed


def test_bases_of_names_long_gone_are_let_go_and_every_pause_still_reads_back():
    """A lesson that defines its variables one by one, then loops: the namespaces of its first lines stop being
    bases once they are out of the window, and each pause still reads back as it was recorded."""
    history = History()

    def pause(step: int, names: list[str]) -> dict[str, Any]:
        summaries = {name: {"type": "int", "repr": str(step), "value": step} for name in names}
        return {"step": step, "event": "line", "file": "loop.py", "line": 1 + len(names), "function": "<module>",
                "vars": summaries, "globals": {}}

    names = [f"v{i}" for i in range(12)]
    recorded = [pause(step, names[:step + 1]) for step in range(len(names))]
    recorded += [pause(step, names) for step in range(len(names), 700)]
    for snapshot in recorded:
        history.add_pause(snapshot)
    assert [key[1] for key in history._recent] == [tuple(names)]
    for index in (0, 5, 11, 12, 300, 699):
        assert history.snapshot(index)["vars"] == recorded[index]["vars"]
