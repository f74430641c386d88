"""Graph data with the engine's ``origin`` field, built by hand for the graph view's tests and benchmark."""

from __future__ import annotations

from typing import Any

from test_graph_layout import rnn_graph

#: Where the unrolled RNN of :func:`test_graph_layout.rnn_graph` pretends to come from.
FILE = "rnn_lesson.py"
LEAF_LINES = {"W_xh": 5, "W_hh": 6, "b": 7}
STEP_LINE = 12
LOSS_LINE = 14


def origin(line: int | None, run: int | None, module: str | None = None) -> dict[str, Any]:
    """An ``origin`` as the engine sends it."""
    return {"file": FILE, "line": line, "pass": run, "module": module, "span": None}


def rnn_with_origins(steps: int, module: str | None = None) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """:func:`rnn_graph` with an origin on every node: the leaves from lines 5-7, step ``k`` from
    line 12's pass ``k`` (inside ``module`` when given), the loss from line 14."""
    full, diffs = rnn_graph(steps)
    origins: dict[int, dict[str, Any]] = {}
    for step, diff in enumerate(diffs, 1):
        for node in diff["added"]:
            if node["kind"] == "leaf":
                origins[node["id"]] = origin(LEAF_LINES.get(node.get("variable")), 1)
            elif step > steps:
                origins[node["id"]] = origin(LOSS_LINE, 1)
            else:
                origins[node["id"]] = origin(STEP_LINE, step, module)
    for node in full["nodes"] + [n for diff in diffs for n in diff["added"]]:
        node["origin"] = origins[node["id"]]
    return full, diffs
