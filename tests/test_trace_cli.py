"""``python main.py --trace``: the headless JSON trace, its records and its exit codes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from conftest import line_of

MAIN = str(Path(__file__).resolve().parent.parent / "main.py")


def trace(*args: str, timeout: float = 120) -> tuple[list[dict], int]:
    done = subprocess.run([sys.executable, MAIN, "--trace", *args], capture_output=True,
                          timeout=timeout, encoding="utf-8")
    records = [json.loads(line) for line in done.stdout.splitlines()]
    return records, done.returncode


def test_every_step_is_a_record_from_the_first_line_to_the_final_return(lesson):
    path = lesson("""
    import torch
    x = torch.tensor([2.0], requires_grad=True)
    y = x * x
    print("y =", y.item())
    """)
    records, code = trace(path)
    assert code == 0
    steps, end = records[:-1], records[-1]
    assert [(r["event"], r["line"]) for r in steps] == [("line", 1), ("line", 2), ("line", 3), ("line", 4),
                                                       ("return", 4)]
    assert [r["step"] for r in steps] == [1, 2, 3, 4, 5]
    assert all(r["function"] == "<module>" and r["depth"] == 0 and r["grad_enabled"] for r in steps)
    y = steps[3]["vars"]["y"]
    assert (y["type"], y["shape"], y["requires_grad"], y["is_leaf"], y["grad_fn"]) == \
        ("Tensor", [1], True, False, "MulBackward0")
    assert y["values"] == [4.0] and y["grad"] is None and y["version"] == 0
    assert steps[4]["stdout"] == "y = 4.0\n" and "y" in steps[4]["vars"]
    assert end == {"event": "end", "status": "ok", "error": None, "exit_code": None, "signal": None,
                   "stdout": "", "stderr": ""}


def test_breaks_record_only_hits_and_grad_mode_shows_no_grad(lesson):
    path = lesson("""
    import torch
    w = torch.ones(2, requires_grad=True)
    for i in range(3):
        with torch.no_grad():
            v = w * i          # inside no_grad
        u = w * i              # outside
    """)
    inside, outside = line_of(path, "inside no_grad"), line_of(path, "outside")
    records, code = trace(path, "--break", str(inside), "--break", str(outside))
    hits = records[:-1]
    assert [r["line"] for r in hits] == [inside, outside] * 3
    assert [r["grad_enabled"] for r in hits] == [False, True] * 3
    assert hits[-1]["vars"]["v"]["requires_grad"] is False


def test_max_steps_and_timeout_end_the_run(lesson):
    path = lesson("""
    n = 0
    while True:
        n += 1
    """)
    records, code = trace(path, "--max-steps", "5")
    assert len(records) == 6 and records[-1]["status"] == "max-steps" and code != 0
    records, code = trace(path, "--break", "1", "--timeout", "2")
    assert records[-1]["status"] == "timeout" and code != 0


def test_end_records_for_error_exit_and_crash(lesson):
    error = lesson("x = 1\nraise KeyError('k')\n", "error.py")
    records, code = trace(error)
    assert records[-2]["post_mortem"] and records[-2]["line"] == 2
    assert records[-1]["status"] == "error" and records[-1]["error"]["type"] == "KeyError" and code == 1
    records, code = trace(lesson("import sys\nsys.exit(0)\n", "exit0.py"), "--break", "99")
    assert (records[-1]["status"], records[-1]["exit_code"], code) == ("exited", 0, 0)
    records, code = trace(lesson("import sys\nsys.exit(4)\n", "exit4.py"), "--break", "99")
    assert (records[-1]["status"], records[-1]["exit_code"], code) == ("exited", 4, 1)
    records, code = trace(lesson("import os, signal\nos.kill(os.getpid(), signal.SIGKILL)\n", "kill.py"),
                          "--break", "99")
    assert (records[-1]["status"], records[-1]["exit_code"], records[-1]["signal"]) == \
        ("crashed", -9, "SIGKILL")


def test_unusable_file_gives_an_error_record(tmp_path):
    records, code = trace(str(tmp_path / "missing.py"))
    assert records == [{"event": "end", "status": "error", "error": {
        "type": "LessonFileError", "message": f"There is no file {tmp_path / 'missing.py'}.", "line": None},
        "exit_code": None, "signal": None, "stdout": "", "stderr": ""}]
    assert code == 1


def test_non_finite_values_are_valid_json(lesson):
    path = lesson("""
    import torch
    t = torch.log(torch.tensor([-1.0, 0.0, 1.0]))
    """)
    records, _ = trace(path)
    t = records[-2]["vars"]["t"]
    assert t["values"] == ["nan", "-inf", 0.0] and t["nan"] == 1 and t["inf"] == 1


def test_graph_records_hold_the_whole_graph_with_stable_ids(lesson):
    path = lesson("""
    import torch
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    w = torch.tensor([3.0, 4.0], requires_grad=True)
    y = x * w
    z = y.sum()
    """)
    records, code = trace(path, "--graph")
    assert code == 0
    before_y, before_z, final = records[3]["graph"], records[4]["graph"], records[5]["graph"]
    assert before_y == {"nodes": [], "edges": [], "roots": {}}
    names = {n["id"]: (n["name"], n["variable"]) for n in before_z["nodes"]}
    mul = before_z["roots"]["y"]
    assert names[mul] == ("MulBackward0", None)
    assert sorted(names[to] for _, to, _ in before_z["edges"]) == [("AccumulateGrad", "w"), ("AccumulateGrad", "x")]
    assert final["roots"]["y"] == mul  # the same node keeps its id
    total = final["roots"]["z"]
    assert [total, mul, 0] in final["edges"]
    assert {n["name"] for n in final["nodes"]} == {"MulBackward0", "AccumulateGrad", "SumBackward0"}
