"""Every autograd node carries where it came from: the lesson line, its pass, the module running."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from conftest import line_of

from app import messages as m

ROOT = Path(__file__).resolve().parents[1]

LOOP = """
import torch
torch.manual_seed(0)
x = torch.randn(3, 2)
W = torch.randn(2, 4, requires_grad=True)
U = torch.randn(4, 4, requires_grad=True)
b = torch.zeros(4, requires_grad=True)
h = torch.zeros(4)
for t in range(3):
    h = torch.tanh(x[t] @ W + h @ U + b)   # body
loss = h.sum()   # loss
done = True   # end
"""


def added_until(session, events, path, marker, step):
    """Step until the pause at the line with ``marker``; returns every pause's added nodes."""
    target = line_of(path, marker)
    collected = []
    for _ in range(200):
        snap = events.pause()
        collected.append(snap["graph"]["added"])
        if snap["line"] == target:
            return collected
        step()
    raise AssertionError("never reached the marker")


def test_each_pass_of_a_loop_line_is_its_own_origin(session, events, lesson):
    path = lesson(LOOP)
    body = line_of(path, "# body")
    session.start(path)
    added = added_until(session, events, path, "# loss", session.step_over)
    made = [node for nodes in added for node in nodes]
    by_pass: dict[int, list[dict]] = {}
    for node in made:
        assert node["origin"]["line"] == body and node["origin"]["file"] == path
        assert node["origin"]["module"] is None
        # stepped over, each operation's nodes carry its span; a leaf's accumulator is made by none
        span = node["origin"]["span"]
        assert span is None if node["kind"] == "leaf" else span[0] == body
        by_pass.setdefault(node["origin"]["pass"], []).append(node)
    assert sorted(by_pass) == [1, 2, 3]
    # the pauses after pass k of the body show exactly the nodes of pass k
    after_body = [nodes for nodes in added if nodes]
    assert [{n["origin"]["pass"] for n in nodes} for nodes in after_body] == [{1}, {2}, {3}]
    leaves = {n["variable"]: n["origin"]["pass"] for n in made if n["kind"] == "leaf"}
    assert leaves == {"W": 1, "U": 1, "b": 1}  # made reachable by the first pass


def test_the_for_line_counts_its_own_passes(session, events, lesson):
    path = lesson("""
        import torch
        x = torch.ones(3, requires_grad=True)
        for row in [x * 1, x * 2]:   # header
            y = row + 1
        done = True   # end
    """)
    session.start(path)
    added = added_until(session, events, path, "# end", session.step_over)
    header = line_of(path, "# header")
    origins = {(n["name"], n["origin"]["line"], n["origin"]["pass"]) for nodes in added for n in nodes}
    assert ("MulBackward0", header, 1) in origins
    assert {o[2] for o in origins if o[0] == "AddBackward0"} == {1, 2}


def test_a_stepped_over_call_gives_its_nodes_the_call_line(session, events, lesson):
    path = lesson("""
        import torch
        def square_sum(v):
            doubled = v * 2
            return (doubled ** 2).sum()
        x = torch.ones(3, requires_grad=True)
        y = square_sum(x)   # call
        z = square_sum(x)   # again
        done = True   # end
    """)
    session.start(path)
    added = added_until(session, events, path, "# end", session.step_over)
    made = [n for nodes in added for n in nodes]
    assert {(n["origin"]["line"], n["origin"]["pass"]) for n in made if n["kind"] == "op"} == {
        (line_of(path, "# call"), 1), (line_of(path, "# again"), 1)}


def test_step_into_gives_the_callee_lines_and_the_caller_line_for_its_arguments(session, events, lesson):
    path = lesson("""
        import torch
        def scaled(v):
            return v * 3   # inside
        x = torch.ones(3, requires_grad=True)
        y = scaled(x + 1) - 1   # call
        done = True   # end
    """)
    session.start(path)
    added = added_until(session, events, path, "# end", session.step_into)
    lines = {n["name"]: n["origin"]["line"] for nodes in added for n in nodes}
    call = line_of(path, "# call")
    assert lines == {"AddBackward0": call, "AccumulateGrad": call, "MulBackward0": line_of(path, "# inside"),
                     "SubBackward0": call}


def test_a_statement_over_several_lines_is_one_pass(session, events, lesson):
    path = lesson("""
        import torch
        x = torch.ones(2, requires_grad=True)
        for k in range(2):
            y = (x * 2 +   # start
                 x * 3)
        done = True   # end
    """)
    session.start(path)
    added = added_until(session, events, path, "# end", session.step_into)
    origins = {(n["name"], n["origin"]["line"], n["origin"]["pass"]) for nodes in added for n in nodes}
    start = line_of(path, "# start")
    assert {o for o in origins if o[0] != "AccumulateGrad"} == {
        ("MulBackward0", start, 1), ("AddBackward0", start, 1), ("MulBackward0", start, 2), ("AddBackward0", start, 2)}


def test_each_turn_of_a_loop_on_one_line_is_a_pass(session, events, lesson):
    path = lesson("""
        import torch
        x = torch.ones(2, requires_grad=True)
        for k in range(3): y = x * (k + 1)   # loop
        done = True   # end
    """)
    session.start(path)
    added = added_until(session, events, path, "# end", session.step_into)
    passes = [n["origin"]["pass"] for nodes in added for n in nodes if n["name"] == "MulBackward0"]
    assert passes == [1, 2, 3]


def test_step_out_gives_the_caller_line(session, events, lesson):
    path = lesson("""
        import torch
        def twice(v):
            a = v * 2   # first
            return a + a
        x = torch.ones(2, requires_grad=True)
        y = twice(x)   # call
        done = True   # end
    """)
    first = line_of(path, "# first")
    session.breakpoints[path] = {first: None}
    session.start(path, stop_on_entry=False)
    assert events.pause()["line"] == first
    session.step_over()
    assert {n["origin"]["line"] for n in events.pause()["graph"]["added"]} == {first}
    session.step_out()
    added = events.pause()["graph"]["added"]
    assert {(n["name"], n["origin"]["line"], n["origin"]["pass"]) for n in added} == {
        ("AddBackward0", line_of(path, "# call"), None)}


def test_continue_to_a_breakpoint_gives_no_line_and_no_pass(session, events, lesson):
    path = lesson(LOOP)
    end = line_of(path, "# end")
    session.breakpoints[path] = {end: None}
    session.start(path, stop_on_entry=False)
    snap = events.pause()
    assert snap["graph"]["added"]
    for node in snap["graph"]["added"]:
        assert node["origin"]["line"] is None and node["origin"]["pass"] is None
        assert node["origin"]["lines"] == [None, end]


def test_passes_stay_unknown_after_a_continue(session, events, lesson):
    path = lesson(LOOP)
    body = line_of(path, "# body")
    session.breakpoints[path] = {body: None}
    session.start(path, stop_on_entry=False)
    events.pause()  # at the body, pass 1 not run yet
    session.set_breakpoints(path, {})
    session.step_over()
    snap = events.pause()
    assert {(n["origin"]["line"], n["origin"]["pass"]) for n in snap["graph"]["added"]} == {(body, None)}


def test_nodes_made_by_a_console_statement_say_so(session, events, lesson):
    path = lesson(LOOP)
    end = line_of(path, "# end")
    session.breakpoints[path] = {end: None}
    session.start(path, stop_on_entry=False)
    events.pause()
    result = events.reply(session.request("evaluate", expression="extra = loss * 2"))
    new = [n for n in result["graph"]["added"] if n["name"] == "MulBackward0"]
    assert new and new[0]["origin"]["by"] == "console" and new[0]["origin"]["line"] is None
    assert new[0]["origin"]["at"] == end


MODULES = """
import torch
from torch import nn
torch.manual_seed(0)

class Recurrent(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = nn.RNNCell(2, 3)
        self.head = nn.Linear(3, 1)

    def forward(self, x, h):
        h = self.rnn(x, h)   # cell
        return self.head(h)

model = nn.Sequential(nn.Linear(2, 4), nn.Tanh(), nn.Linear(4, 1))
x = torch.randn(5, 2)
y = model(x)   # sequential
net = Recurrent()
out = net(x, torch.zeros(5, 3))   # custom
done = True   # end
"""


def test_nodes_made_in_a_module_forward_carry_the_module_name(session, events, lesson):
    path = lesson(MODULES)
    session.start(path)
    added = added_until(session, events, path, "# end", session.step_over)
    made = [n for nodes in added for n in nodes]
    modules = {n["origin"]["module"] for n in made if n["origin"]["line"] == line_of(path, "# sequential")}
    assert modules == {"model.0", "model.1", "model.2"}
    custom = [n for n in made if n["origin"]["line"] == line_of(path, "# custom")]
    assert {n["origin"]["module"] for n in custom} == {"net.rnn", "net.head"}
    weights = {n["variable"]: n["origin"]["module"] for n in made if n["kind"] == "leaf"}
    assert weights["model.0.weight"] == "model.0" and weights["net.rnn.weight_ih"] == "net.rnn"


def test_stepping_into_a_forward_names_the_module_by_the_outer_variable(session, events, lesson):
    path = lesson(MODULES)
    cell = line_of(path, "# cell")
    session.breakpoints[path] = {cell: None}
    session.start(path, stop_on_entry=False)
    assert events.pause()["line"] == cell
    session.step_over()
    snap = events.pause()
    modules = {n["origin"]["module"] for n in snap["graph"]["added"] if n["origin"]["pass"] is None}
    assert modules == {"net.rnn"}


INVISIBLE = """
import torch
from torch import nn
from torch.overrides import TorchFunctionMode

class Count(TorchFunctionMode):
    def __init__(self):
        super().__init__()
        self.calls = 0

    def __torch_function__(self, func, types, args=(), kwargs=None):
        self.calls += 1
        return func(*args, **(kwargs or {}))

class Probe(nn.Module):
    def forward(self, x):
        global hooks
        hooks = len(nn.modules.module._global_forward_hooks) + len(nn.modules.module._global_forward_pre_hooks)
        return x * 2

def counted(model, x):
    with Count() as count:
        model(x).sum()
    return count.calls

model = nn.Sequential(nn.Linear(2, 3), nn.Tanh(), Probe())
ops = counted(model, torch.ones(1, 2))   # counted
print("ops", ops, "hooks", hooks)
"""


def test_watching_module_calls_is_invisible_to_the_lesson(session, events, lesson):
    path = lesson(INVISIBLE)
    plain = subprocess.run([sys.executable, path], capture_output=True, text=True, check=True).stdout
    session.start(path)
    while isinstance(events.wait((m.Paused, m.Ended)), m.Paused):
        session.step_over()  # the counted line runs its module calls under the stepping tracer, unpaused
    assert events.output("stdout") == plain
    assert plain.startswith("ops ") and "hooks 0" in plain


def test_trace_cli_graph_nodes_carry_their_origin(lesson):
    path = lesson("""
        import torch
        x = torch.ones(2, requires_grad=True)
        y = x * 2   # mul
    """)
    out = subprocess.run([sys.executable, "main.py", "--trace", path, "--graph"], capture_output=True,
                         text=True, timeout=120, cwd=ROOT)
    records = [json.loads(line) for line in out.stdout.splitlines()]
    nodes = records[-2]["graph"]["nodes"]
    assert {n["name"]: (n["origin"]["line"], n["origin"]["pass"]) for n in nodes} == {
        "MulBackward0": (line_of(path, "# mul"), 1), "AccumulateGrad": (line_of(path, "# mul"), 1)}


def test_the_rnn_lessons_loop_gives_each_pass_its_own_origin(session, events):
    from app.workspace import LESSONS_DIR

    path = str(LESSONS_DIR / "03_loops.py")
    body, select = line_of(path, "    h_t = torch.tanh("), line_of(path, "    x_t = inputs[t]")
    steps = int(next(text for text in Path(path).read_text(encoding="utf-8").splitlines()
                     if text.startswith("INPUT_SIZE")).rsplit(",", 1)[1])  # NUM_STEPS, as the lesson sets it
    session.start(path)
    added = added_until(session, events, path, "loss = h_t.sum()", session.step_over)
    made = [node for nodes in added for node in nodes]
    assert all(node["origin"]["file"] == path for node in made)
    names: dict[int, list[str]] = {}
    for node in made:
        if node["origin"]["line"] == body and node["kind"] != "leaf":
            names.setdefault(node["origin"]["pass"], []).append(node["name"])
    assert sorted(names) == list(range(1, steps + 1))
    assert names[1].count("TanhBackward0") == 1 and all(sorted(names[k]) == sorted(names[2]) for k in names if k > 1)
    selects = [n["origin"]["pass"] for n in made if n["name"] == "SelectBackward0" and n["origin"]["line"] == select]
    assert sorted(selects) == list(range(1, steps + 1))
    leaves = {n["variable"]: (n["origin"]["line"], n["origin"]["pass"]) for n in made if n["kind"] == "leaf"}
    assert leaves == {"inputs": (select, 1), "W_xh": (body, 1), "W_hh": (body, 1), "b_h": (body, 1)}


def test_the_origin_book_tells_a_run_that_made_no_node_from_one_that_did():
    """Most runs between two pauses of a recording make no node; their origin is still the run's."""
    from app.lesson.origins import OriginBook

    def walk():
        yield
        yield
        yield

    frames = []
    for turns in (1, 2, 3):  # three frames paused at three lines
        walker = walk()
        for _ in range(turns):
            next(walker)
        frames.append(walker)
    first, second, third = (walker.gi_frame for walker in frames)
    lines = [frame.f_lineno for frame in (first, second, third)]
    assert len(set(lines)) == 3
    sequence = [100]
    book = OriginBook(lambda: sequence[0])
    book.paused([first], "line", None, None)
    book.resumed()
    book.paused([second], "line", None, None)  # the run from the first line made nothing
    assert book.origin(None)["lines"] == lines[:2]
    sequence[0] += 2  # a request at this pause made two nodes: GradStep's own
    assert book.origin(100) == book.origin(101)
    assert book.origin(100)["by"] == "gradstep" and book.origin(100)["at"] == lines[1]
    book.resumed()
    sequence[0] += 3  # the run from the second line made three
    book.paused([third], "line", None, None)
    assert book.origin(103)["lines"] == lines[1:] and "by" not in book.origin(103)
    assert book.origin(None) is book.origin(104)
    assert book.origin(100)["at"] == lines[1]  # the stretches before stay theirs
    book.resumed()
    book.paused([second], "line", None, None)
    assert book.origin(None)["lines"] == [lines[2], lines[1]]
    assert book.origin(105)["by"] == "gradstep" and book.origin(105)["at"] == lines[1]
