"""How fast the graph view lays out and draws unrolled RNN graphs, whole and one step at a time.

Run: ``QT_QPA_PLATFORM=offscreen python tests/benchmarks/bench_graph_view.py``. The last line
is ``PASS`` when a 1,000-step graph (5,004 nodes, 8,000 edges) is laid out and drawn within
1 s and a step of it is added (framing included) within 20 ms at the 99th percentile, else
``FAIL``; both without origins (old data), with an origin box per step, and with module
boxes (``model.rnn`` inside ``model``) too. The prepared graphs and diffs
are moved out of the garbage collector's reach (``gc.freeze``): without that, one step in a
thousand pays for a full collection of the benchmark's own input (≈110 ms here).
"""

from __future__ import annotations

import gc
import os
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from origin_graphs import rnn_with_origins  # noqa: E402
from PySide6.QtWidgets import QApplication, QGraphicsView  # noqa: E402
from test_graph_layout import rnn_graph  # noqa: E402

from app.graph_layout import LayeredLayout  # noqa: E402
from app.graph_model import GraphModel  # noqa: E402
from widgets.graph_view import GraphView  # noqa: E402

WHOLE_BUDGET = 1.0
STEP_BUDGET = 0.020


def networkx_seconds(graph: dict) -> float | None:
    """networkx's topological_generations + multipartite_layout on the same graph, if installed."""
    try:
        import networkx as nx
    except ImportError:
        return None
    start = time.perf_counter()
    g = nx.DiGraph()
    g.add_nodes_from(n["id"] for n in graph["nodes"])
    g.add_edges_from((s, t) for s, t, _ in graph["edges"])
    for layer, nodes in enumerate(nx.topological_generations(g)):
        for node in nodes:
            g.nodes[node]["layer"] = layer
    nx.multipartite_layout(g, subset_key="layer")
    return time.perf_counter() - start


def new_view() -> GraphView:
    view = GraphView(GraphModel())
    view.resize(1000, 800)
    view.show()
    QApplication.processEvents()
    return view


#: The graphs measured: without origins, with a line·pass box per step, and with module boxes too.
VARIANTS = {"no origins": rnn_graph, "line boxes": rnn_with_origins,
            "module boxes": lambda steps: rnn_with_origins(steps, module="model.rnn")}


def whole(steps: int, variant: str) -> float:
    graph, _ = VARIANTS[variant](steps)
    gc.freeze()  # the benchmark's input is not the view's garbage: keep full collections of it out of the timings
    start = time.perf_counter()
    LayeredLayout().add(graph["nodes"], graph["edges"])
    layout = time.perf_counter() - start
    view = new_view()
    start = time.perf_counter()
    view.model.set_graph(graph)
    built = time.perf_counter() - start
    view.grab()
    drawn = time.perf_counter() - start
    view.show_overview()
    start = time.perf_counter()
    view.grab()
    fit_paint = time.perf_counter() - start
    nx_seconds = networkx_seconds(graph)
    nx_text = "networkx (not installed)" if nx_seconds is None else f"networkx multipartite {nx_seconds * 1e3:7.1f} ms"
    print(f"{variant:>12} {steps:>5} steps {len(graph['nodes']):>5} nodes {len(graph['edges']):>5} edges: "
          f"layout {layout * 1e3:6.1f} ms, set_graph {built * 1e3:6.1f} ms, + first paint = {drawn * 1e3:6.1f} ms, "
          f"paint of the whole graph fitted {fit_paint * 1e3:5.1f} ms | {nx_text}")
    view.close()
    return drawn


def per_step(steps: int, variant: str) -> list[float]:
    _, diffs = VARIANTS[variant](steps)
    gc.freeze()
    view = new_view()
    view.model.set_graph({"nodes": [], "edges": [], "roots": {}})
    viewport = view.findChild(QGraphicsView, "graph_canvas").viewport()
    times = []
    for diff in diffs:
        start = time.perf_counter()
        view.model.apply_diff(diff)
        viewport.repaint()
        times.append(time.perf_counter() - start)
    view.close()
    return times


def main() -> int:
    app = QApplication.instance() or QApplication([])
    ok = True
    for variant in VARIANTS:
        whole(10, variant)
        whole(100, variant)
        worst_whole = whole(1000, variant)
        times = per_step(1000, variant)
        ordered = sorted(times)
        p99 = ordered[int(len(ordered) * 0.99)]
        print(f"{variant:>12} incremental, 1,000 steps one diff at a time (apply_diff + repaint): "
              f"median {statistics.median(times) * 1e3:.2f} ms, p99 {p99 * 1e3:.2f} ms, max {max(times) * 1e3:.2f} ms")
        ok = ok and worst_whole <= WHOLE_BUDGET and p99 <= STEP_BUDGET
    app.processEvents()
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
