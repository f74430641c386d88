"""Autograd graph cost at a pause: building the diff, sending it, and a pause where nothing changed.

Run: ``python tests/benchmarks/bench_graph.py``. The graph is an RNN cell
``h = tanh(x_t @ W_xh + h @ W_hh + b)`` unrolled 1,000 steps, then ``loss = h.sum()``:
5,004 nodes and 8,000 edges. Each timed figure is the best of several fresh runs (the
machine may be shared; the median is printed beside it). Targets: building ≤ 100 ms,
encoding and decoding the diff with ``app.messages`` ≤ 50 ms (garbage collector left as it
is; the figure with it paused is printed too), an unchanged pause ≤ 1 ms. The last line is
``PASS`` or ``FAIL``.
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import torch  # noqa: E402

from app import messages  # noqa: E402
from app.gc_pause import gc_paused  # noqa: E402
from app.lesson.autograd_graph import GraphTracker, reachable_nodes  # noqa: E402
from app.lesson.summaries import TensorSummarizer  # noqa: E402

STEPS, BATCH, INPUTS, HIDDEN = 1_000, 4, 8, 16
RUNS = 5
TARGETS = {"build": 100.0, "transport": 50.0, "unchanged": 1.0}


def rnn(steps: int = STEPS, tracker: GraphTracker | None = None) -> dict[str, Any]:
    """The frame after the unrolled loop and the loss; updates ``tracker`` after every step if given."""
    torch.manual_seed(0)
    frame: dict[str, Any] = {
        "x": torch.randn(steps, BATCH, INPUTS),
        "W_xh": torch.randn(INPUTS, HIDDEN, requires_grad=True),
        "W_hh": torch.randn(HIDDEN, HIDDEN, requires_grad=True),
        "b": torch.zeros(HIDDEN, requires_grad=True),
        "h": torch.zeros(BATCH, HIDDEN),
    }
    for t in range(steps):
        frame["t"] = t
        frame["h"] = torch.tanh(frame["x"][t] @ frame["W_xh"] + frame["h"] @ frame["W_hh"] + frame["b"])
        if tracker is not None:
            tracker.update(frame)
    frame["loss"] = frame["h"].sum()
    return frame


def ms(start: float) -> float:
    return (time.perf_counter() - start) * 1e3


def best(samples: list[float]) -> str:
    return f"{min(samples):7.1f} ms (median {statistics.median(samples):.1f})"


def transport(diff: dict[str, Any]) -> float:
    start = time.perf_counter()
    messages.decode(messages.encode(diff)[messages.HEADER_SIZE:])
    return ms(start)


def main() -> int:
    walks, builds, sends_gc_paused, sends_gc_on, after_backward, stepping = [], [], [], [], [], []
    for _ in range(RUNS):
        frame = rnn()
        start = time.perf_counter()
        reachable_nodes([frame["loss"].grad_fn])
        walks.append(ms(start))

        tracker = GraphTracker(TensorSummarizer())
        start = time.perf_counter()
        diff = tracker.update(frame)
        builds.append(ms(start))
        assert len(diff["added"]) == 5 * STEPS + 4 and len(diff["edges_added"]) == 8 * STEPS

        sends_gc_on.append(transport(diff))
        with gc_paused():
            sends_gc_paused.append(transport(diff))

        frame["loss"].backward()
        start = time.perf_counter()
        freed = tracker.update(frame)
        after_backward.append(ms(start))
        assert len(freed["updated"]) == 3 * STEPS + 3  # mm, mm, tanh of every step; the three leaves

    unchanged = []
    for _ in range(1_000):
        start = time.perf_counter()
        same = tracker.update(frame)
        unchanged.append(ms(start))
    assert same["changed"] is False

    for _ in range(2):
        tracker = GraphTracker(TensorSummarizer())
        start = time.perf_counter()
        rnn(tracker=tracker)
        stepping.append(ms(start))
    start = time.perf_counter()
    rnn()
    untracked = ms(start)

    figures = {"build": min(builds), "transport": min(sends_gc_on), "unchanged": statistics.median(unchanged)}
    print(f"graph: {len(diff['added'])} nodes, {len(diff['edges_added'])} edges; best of {RUNS} runs")
    print(f"bare walk of next_functions        {best(walks)}")
    print(f"build the diff (names, saved)      {best(builds)}  = {min(builds) / min(walks):.0f}x the bare walk")
    print(f"encode + decode                    {best(sends_gc_on)}  ({len(messages.encode(diff)) / 1e6:.2f} MB)")
    print(f"encode + decode, GC paused         {best(sends_gc_paused)}  (gc_paused() around both ends)")
    print(f"unchanged pause                    {figures['unchanged'] * 1e3:7.1f} µs (median of 1,000)")
    print(f"pause after loss.backward()        {best(after_backward)}  (3,003 nodes marked freed)")
    print(f"1,000 steps, an update after each  {min(stepping):7.1f} ms against {untracked:.1f} ms untracked"
          f"  = {(min(stepping) - untracked) / STEPS * 1e3:.0f} µs a step")
    failed = [name for name, limit in TARGETS.items() if figures[name] > limit]
    for name in failed:
        print(f"over target: {name} {figures[name]:.2f} ms > {TARGETS[name]} ms")
    print("FAIL" if failed else "PASS")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
