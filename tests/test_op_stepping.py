"""Inside a line: the PyTorch operations a stepped line runs, step into expression, and the ``--ops`` trace."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from conftest import line_of

from app import messages as m
from app.lesson.op_recorder import LOG_LIMIT
from app.trace import trace_records

ROOT = Path(__file__).resolve().parent.parent
MAIN = str(ROOT / "main.py")

RNN = """
import torch
torch.manual_seed(0)
W_xh = torch.randn(3, 4, requires_grad=True)
W_hh = torch.randn(4, 4, requires_grad=True)
b_h = torch.zeros(4, requires_grad=True)
h_t = torch.zeros(4)
for x_t in torch.randn(2, 3):
    h_t = torch.tanh(x_t @ W_xh + h_t @ W_hh + b_h)   # the RNN line
loss = h_t.sum()
"""

RNN_OPS = [("Tensor.matmul", "x_t @ W_xh"), ("Tensor.matmul", "h_t @ W_hh"),
           ("Tensor.add", "x_t @ W_xh + h_t @ W_hh"), ("Tensor.add", "x_t @ W_xh + h_t @ W_hh + b_h"),
           ("torch.tanh", "torch.tanh(x_t @ W_xh + h_t @ W_hh + b_h)")]
#: Node names each operation adds, on the first and on the second pass (h_t requires grad from then on).
FIRST_NODES = [["SqueezeBackward4", "MmBackward0"], ["SqueezeBackward4", "MmBackward0"],
               ["AddBackward0"], ["AddBackward0"], ["TanhBackward0"]]
SECOND_NODES = [["SqueezeBackward4", "MmBackward0"], ["SqueezeBackward4", "MmBackward0", "UnsqueezeBackward0"],
                ["AddBackward0"], ["AddBackward0"], ["TanhBackward0"]]


def source_slice(path: str, span: list[int]) -> str:
    line, col, end_line, end_col = span
    lines = Path(path).read_text(encoding="utf-8").splitlines()
    assert line == end_line
    return lines[line - 1].encode("utf-8")[col:end_col].decode("utf-8")


def plain(summary: dict) -> dict:
    """A summary with its numpy values as lists, so two summaries compare with ``==``."""
    return {key: value.tolist() if hasattr(value, "tolist") else value for key, value in summary.items()}


def plain_stdout(path: str) -> str:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, path], capture_output=True, text=True, check=True, env=env).stdout


def run_to_breakpoint(session, events, path: str, line: int, hits: int = 1) -> None:
    """Run to the ``hits``-th pass of ``line`` with a breakpoint there."""
    session.set_breakpoints(path, {line: None})
    session.start(path, stop_on_entry=False)
    for hit in range(hits):
        if hit:
            session.resume()
        assert events.pause()["line"] == line


def step_expression_at(session, events, path: str, line: int, hits: int = 1) -> list[dict]:
    """Run to the ``hits``-th pass of ``line``, step into its expression; the op pauses, then the line pause."""
    run_to_breakpoint(session, events, path, line, hits)
    session.set_breakpoints(path, {})
    session.step_expression()
    pauses = []
    while True:
        snap = events.pause()
        pauses.append(snap)
        if snap["event"] != "op":
            return pauses
        session.step_expression()


def test_step_into_expression_pauses_after_each_operation_of_the_rnn_line(session, events, lesson):
    path = lesson(RNN)
    line = line_of(path, "the RNN line")
    pauses = step_expression_at(session, events, path, line, hits=2)
    ops, after = pauses[:-1], pauses[-1]
    assert [snap["event"] for snap in ops] == ["op"] * 5
    assert [(snap["op"]["name"], snap["op"]["text"]) for snap in ops] == RNN_OPS
    for snap in ops:
        op = snap["op"]
        assert snap["line"] == line and op["span_exact"]
        assert op["text"] == source_slice(path, op["span"])
        pseudo = snap["vars"][f"⟨{op['text']}⟩"]
        assert plain(pseudo) == plain(op["output"]) and pseudo["type"] == "Tensor" and pseudo["shape"] == [4]
        added = {node["id"]: node for node in snap["graph"]["added"]}
        assert list(added) == op["nodes"]  # the graph marks exactly the nodes this operation made
        assert all(node["origin"]["span"] == op["span"] for node in added.values())
    assert [[node["name"] for node in snap["graph"]["added"]] for snap in ops] == SECOND_NODES
    assert ops[0]["vars"]["h_t"]["grad_fn"] == "TanhBackward0"  # the line has not assigned yet
    assert after["event"] == "line" and after["line"] == line_of(path, "for x_t")
    assert [(op["name"], op["text"]) for op in after["ops"]] == RNN_OPS
    assert not any(name.startswith("⟨") for name in after["vars"])


def test_step_over_from_an_operation_finishes_the_line(session, events, lesson):
    path = lesson(RNN)
    line = line_of(path, "the RNN line")
    run_to_breakpoint(session, events, path, line)
    session.step_expression()
    assert events.pause()["op"]["text"] == "x_t @ W_xh"
    session.step_over()
    snap = events.pause()
    assert (snap["event"], snap["line"]) == ("line", line_of(path, "for x_t"))
    assert len(snap["ops"]) == 5 and snap["vars"]["h_t"]["grad_fn"] == "TanhBackward0"
    assert "output" in snap["ops"][0] and "output" not in snap["ops"][1]  # summaries only where it paused
    session.resume()
    assert events.pause()["line"] == line  # the breakpoint still stops the next pass
    session.set_breakpoints(path, {})
    session.step_expression()
    assert events.pause()["event"] == "op"
    session.resume()  # continue from inside an operation: the run ends with the recorder off
    assert events.end().status == "ok"


def test_a_line_without_operations_steps_as_a_line_and_the_next_one_does_not_pause_inside(session, events,
                                                                                           lesson):
    path = lesson("""
    import torch
    a = 1                          # no operation
    b = torch.ones(2) + a
    c = b * 2
    """)
    run_to_breakpoint(session, events, path, line_of(path, "no operation"))
    session.step_expression()
    snap = events.pause()
    assert (snap["event"], snap["line"]) == ("line", line_of(path, "no operation") + 1)
    session.step_over()
    snap = events.pause()
    assert snap["event"] == "line" and [op["text"] for op in snap["ops"]] == ["torch.ones(2)", "torch.ones(2) + a"]


def test_a_stepped_over_call_logs_up_to_the_limit_and_counts_the_rest(session, events, lesson):
    path = lesson("""
    import torch
    def many(x):
        for _ in range(1200):
            x = x + 1
        return x
    y = many(torch.zeros(1))       # 1,200 operations
    """)
    run_to_breakpoint(session, events, path, line_of(path, "1,200 operations"))
    session.step_over()
    snap = events.pause()
    assert len(snap["ops"]) == LOG_LIMIT and snap["ops_dropped"] == 1201 - LOG_LIMIT
    assert snap["ops"][0]["text"] == "torch.zeros(1)" and snap["ops"][1]["text"] == "x + 1"


def test_evaluate_at_an_operation_pause_is_not_logged(session, events, lesson):
    path = lesson(RNN)
    run_to_breakpoint(session, events, path, line_of(path, "the RNN line"))
    session.set_breakpoints(path, {})
    session.step_expression()
    events.pause()
    reply = events.reply(session.request("evaluate", expression="(W_xh @ W_hh).sum()"))
    assert reply["ok"] and reply["value"]["shape"] == []
    session.step_over()
    snap = events.pause()
    assert [op["text"] for op in snap["ops"]] == [text for _, text in RNN_OPS]


def test_values_of_an_operation_result_come_from_the_op_log_while_its_line_runs(session, events, lesson):
    path = lesson("""
    import torch
    a = torch.randn(200, 100, requires_grad=True)
    b = (a * 2).exp().sum()        # big intermediates
    """)
    run_to_breakpoint(session, events, path, line_of(path, "big intermediates"))
    session.set_breakpoints(path, {})
    session.step_expression()
    snap = events.pause()
    assert snap["vars"]["⟨a * 2⟩"]["sampled"]  # 20,000 elements: the summary holds a sample
    reply = events.reply(session.request("values", expression="⟨a * 2⟩"))
    assert reply["ok"] and reply["values"].shape == (200, 100)
    assert (reply["values"] == 2 * events.reply(session.request("values", expression="a"))["values"]).all()
    session.step_over()
    assert events.pause()["event"] == "return"  # the line is done (the module's last)
    reply = events.reply(session.request("values", expression="⟨a * 2⟩"))
    assert not reply["ok"] and "no longer alive" in reply["error"]["message"]


def test_ops_trace_lists_the_operations_of_the_line_that_just_ran(lesson):
    path = lesson(RNN)
    line = line_of(path, "the RNN line")
    done = subprocess.run([sys.executable, MAIN, "--trace", path, "--ops"], capture_output=True, timeout=120,
                          encoding="utf-8")
    assert done.returncode == 0, done.stderr
    records = [json.loads(text) for text in done.stdout.splitlines()][:-1]
    after_rnn = [r for r, previous in zip(records[1:], records, strict=False) if previous["line"] == line]
    assert len(after_rnn) == 2
    for record, names in zip(after_rnn, (FIRST_NODES, SECOND_NODES), strict=False):
        assert [(op["name"], op["text"]) for op in record["ops"]] == RNN_OPS
        for op in record["ops"]:
            assert op["text"] == source_slice(path, op["span"]) and op["span"][0] == line
            assert set(op) >= {"name", "span", "span_exact", "text", "inputs", "output", "nodes"}
        assert [len(op["nodes"]) for op in record["ops"]] == [len(n) for n in names]
    first_matmul = after_rnn[0]["ops"][0]
    assert [s["shape"] for s in first_matmul["inputs"]] == [[3], [3, 4]] and first_matmul["output"]["shape"] == [4]
    plain = subprocess.run([sys.executable, MAIN, "--trace", path], capture_output=True, timeout=120,
                           encoding="utf-8")
    assert all("ops" not in json.loads(text) for text in plain.stdout.splitlines())


def test_operation_nodes_have_the_names_torch_makes(lesson):
    path = lesson(RNN)
    line = line_of(path, "the RNN line")
    records = trace_records(path, ops=True, graph=True)
    after_rnn = [r for r, previous in zip(records[1:], records, strict=False) if previous.get("line") == line]
    for record, expected in zip(after_rnn, (FIRST_NODES, SECOND_NODES), strict=False):
        names = {node["id"]: node["name"] for node in record["graph"]["nodes"]}
        assert [[names[nid] for nid in op["nodes"]] for op in record["ops"]] == expected


def test_trace_graph_nodes_name_the_operation_that_made_them(lesson):
    path = lesson(RNN)
    line = line_of(path, "the RNN line")
    done = subprocess.run([sys.executable, MAIN, "--trace", path, "--graph", "--ops"], capture_output=True,
                          timeout=120, encoding="utf-8")
    assert done.returncode == 0, done.stderr
    records = [json.loads(text) for text in done.stdout.splitlines()][:-1]
    after_rnn = [r for r, previous in zip(records[1:], records, strict=False) if previous["line"] == line]
    for run, record in enumerate(after_rnn, 1):
        origins = {node["id"]: node["origin"] for node in record["graph"]["nodes"]}
        for op in record["ops"]:
            for nid in op["nodes"]:
                assert origins[nid]["op"] == op["name"] and origins[nid]["text"] == op["text"]
                assert (origins[nid]["span"], origins[nid]["pass"]) == (op["span"], run)
    leaves = [node for node in after_rnn[0]["graph"]["nodes"] if node["kind"] == "leaf"]
    assert leaves and all(node["origin"]["op"] is None and node["origin"]["text"] is None for node in leaves)


def test_a_call_that_does_not_name_the_operation_falls_back_to_the_line(lesson):
    path = lesson("""
    import torch
    x = torch.ones(2)
    ys = list(map(torch.neg, [x]))   # through map
    """)
    line = line_of(path, "through map")
    records = trace_records(path, ops=True)
    ops = next(r["ops"] for r, previous in zip(records[1:], records, strict=False) if previous.get("line") == line)
    neg = next(op for op in ops if op["name"] == "torch.neg")
    assert neg["span_exact"] is False
    assert neg["span"][0] == line and neg["span"][1] == 0
    assert neg["text"] == Path(path).read_text().splitlines()[line - 1]


COUNTING = """
import weakref
import torch
from torch.overrides import TorchFunctionMode

class Counter(TorchFunctionMode):
    def __init__(self):
        super().__init__()
        self.count = 0
        self.outputs = []
    def __torch_function__(self, func, types, args=(), kwargs=None):
        self.count += 1
        result = func(*args, **(kwargs or {}))
        if isinstance(result, torch.Tensor):
            self.outputs.append(weakref.ref(result))
        return result

class Tagged(torch.Tensor):
    seen = 0
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        Tagged.seen += 1
        return super().__torch_function__(func, types, args, kwargs or {})

W = torch.randn(3, 3, requires_grad=True)
x = torch.randn(3)
with Counter() as counter: y = torch.tanh(x @ W + (x * 2) @ W).sum(); z = y * 3   # counted line
n = float(((torch.ones(2).as_subclass(Tagged) + 1) * 2).sum())                     # subclass line
alive = sum(ref() is not None for ref in counter.outputs)
print("ops", counter.count, "subclass", Tagged.seen, "alive", alive)
"""


def step_over_to_end(session, events, path: str) -> tuple[list[dict], str]:
    """Step over every line of the module; the pauses and what the lesson printed."""
    session.start(path)
    pauses = []
    while True:
        message = events.wait((m.Paused, m.Ended))
        if isinstance(message, m.Ended):
            assert message.status == "ok", message.error
            return pauses, events.output("stdout")
        pauses.append(message.snapshot)
        session.step_over()


def test_the_lesson_modes_and_subclasses_see_the_same_operations_stepped_and_plain(session, events, lesson):
    """The lesson's mode and subclass count what they count in a plain run (modes spanning line pauses are
    the engine-safety guard's part: here each stays within one line)."""
    path = lesson(COUNTING)
    plain = plain_stdout(path)
    assert plain.startswith("ops 7 subclass")
    pauses, printed = step_over_to_end(session, events, path)
    assert printed == plain
    counted_line = line_of(path, "counted")
    counted = next(p["ops"] for p, previous in zip(pauses[1:], pauses, strict=False)
                   if previous["line"] == counted_line)
    assert [op["text"] for op in counted][:2] == ["x @ W", "x * 2"]  # logged beneath the lesson's mode
    for marker in ("counted line", "subclass line"):
        events.seen.clear()
        ops = step_expression_at(session, events, path, line_of(path, marker))[:-1]
        assert len(ops) >= 4 and all(p["event"] == "op" for p in ops)
        session.resume()
        assert events.end().status == "ok"
        assert events.output("stdout") == plain


def test_the_op_log_keeps_no_tensor_alive(session, events, lesson):
    path = lesson("""
    import weakref
    import torch
    a = torch.randn(1000, requires_grad=True)
    b = (a * 2).exp()              # an intermediate
    ref = weakref.ref(b)
    del b
    print("alive", ref() is not None)
    """)
    assert plain_stdout(path) == "alive False\n"
    records = trace_records(path, ops=True)
    assert "".join(r["stdout"] for r in records) == "alive False\n"
    pauses = step_expression_at(session, events, path, line_of(path, "an intermediate"))
    assert [p["op"]["text"] for p in pauses[:-1]] == ["a * 2", "(a * 2).exp()"]
    session.resume()
    events.end()
    assert events.output("stdout") == "alive False\n"


def test_recording_is_off_while_the_lesson_continues(session, events, lesson):
    path = lesson("""
    import torch
    x = torch.ones(2)
    depth_running = torch._C._len_torch_function_stack()
    y = x + 1                       # stop here
    depth_stepped = torch._C._len_torch_function_stack()
    print(depth_running, depth_stepped)
    """)
    run_to_breakpoint(session, events, path, line_of(path, "stop here"))
    assert "ops" not in session.snapshot  # nothing was logged while the lesson continued
    session.step_over()
    assert [op["text"] for op in events.pause()["ops"]] == ["x + 1"]
    session.step_over()
    events.pause()
    session.resume()
    events.end()
    assert events.output("stdout") == "0 1\n"  # documented: the stack is one mode longer while stepping



def test_stepping_an_optimizer_style_update_of_a_leaf_slice_runs_as_plain_python_does(lesson):
    """``w[:2].add_(...)`` under no_grad made a view whose ``grad_fn`` raises when read; the op log read it."""
    path = lesson("""
    import torch
    w = torch.ones(3, requires_grad=True)
    with torch.no_grad():
        w[:2].add_(0.5)   # a view of a leaf, changed in place
    done = w.tolist()
    """)
    records = trace_records(path, ops=True)
    assert records[-1]["status"] == "ok", records[-1]
    ops = next(r["ops"] for r, previous in zip(records[1:], records, strict=False)
               if previous.get("line") == line_of(path, "changed in place"))
    assert [op["name"] for op in ops] == ["Tensor.__getitem__", "Tensor.add_"]
