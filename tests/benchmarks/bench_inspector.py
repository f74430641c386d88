"""How fast the tensor inspector shows and scrolls a 10-million-element tensor, and the variables view updates.

Run: ``QT_QPA_PLATFORM=offscreen python tests/benchmarks/bench_inspector.py``. The last line is
``PASS`` when a 3162×3162 float32 tensor is shown (header, table, heatmap, painted) within
500 ms, a screenful of its table (every cell's text, tint, colour and alignment, then a
repaint) of 50×20 cells takes at most 50 ms anywhere in it, and a pause of 200 variables with 20 tensors
updates the variables view within 10 ms (median), else ``FAIL``. Objects made before the
timing starts (torch, Qt) are moved out of the garbage collector's reach (``gc.freeze``), so an
occasional full collection of them (≈60 ms here) does not land in one pause's figure.
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
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
import torch  # noqa: E402
from PySide6.QtCore import Qt  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from app import messages as m  # noqa: E402
from app.lesson.summaries import Summarizer  # noqa: E402
from widgets.tensor_inspector import TensorInspector  # noqa: E402
from widgets.variables_view import VariablesView  # noqa: E402

SHOW_BUDGET = 0.500
SCREEN_BUDGET = 0.050
VARIABLES_BUDGET = 0.010
#: Rows and columns of a screenful: a maximised window on a large monitor.
SCREEN = (50, 20)
ROLES = (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.BackgroundRole, Qt.ItemDataRole.ForegroundRole,
         Qt.ItemDataRole.TextAlignmentRole)


def show_big(app: QApplication) -> tuple[float, list[float]]:
    """Seconds to show the tensor (with a previous version, so changes are compared), and per screenful."""
    rng = np.random.default_rng(0)
    before = rng.standard_normal((3162, 3162), dtype=np.float32)
    after = before.copy()
    after[::7] += 1
    summary = m.decode(m.encode(Summarizer().summarize(torch.from_numpy(after)))[m.HEADER_SIZE:])
    inspector = TensorInspector()
    inspector.resize(1000, 700)
    inspector.show()
    app.processEvents()
    inspector.show_tensor("big", summary, before)
    app.processEvents()

    start = time.perf_counter()
    inspector.show_tensor("big", summary, after)
    inspector.repaint()
    shown = time.perf_counter() - start

    view, model = inspector.value_panel.table, inspector.value_panel.model
    rows, columns = SCREEN
    screens = []
    for top, left in ((0, 0), (1500, 1500), (3162 - rows, 3162 - columns), (777, 2000)):
        start = time.perf_counter()
        view.scrollTo(model.index(top, left), view.ScrollHint.PositionAtTop)
        for r in range(top, top + rows):
            for c in range(left, left + columns):
                index = model.index(r, c)
                for role in ROLES:
                    model.data(index, role)
        view.viewport().repaint()
        screens.append(time.perf_counter() - start)
    print(f"3162×3162 float32 (10.0 M values): shown in {shown * 1e3:.1f} ms; "
          f"a screenful ({rows}×{columns} cells) in {max(screens) * 1e3:.1f} ms at worst "
          f"({', '.join(f'{s * 1e3:.1f}' for s in screens)} ms)")
    inspector.close()
    return shown, screens


def update_variables(app: QApplication) -> list[float]:
    """Seconds per set_snapshot of 200 variables, 20 of them tensors, changing a little at every pause."""
    summarizer = Summarizer()
    torch.manual_seed(0)
    tensors = {f"t{i}": torch.randn(8, 16, requires_grad=i % 2 == 0) for i in range(20)}
    scalars = {f"v{i}": i for i in range(180)}
    view = VariablesView()
    view.resize(900, 600)
    view.show()
    times = []
    for step in range(100):
        with torch.no_grad():
            tensors[f"t{step % 20}"].add_(1)
        scalars[f"v{step % 180}"] = step
        summaries = {k: summarizer.summarize(v) for k, v in {**tensors, **scalars}.items()}
        snapshot = m.decode(m.encode(summaries)[m.HEADER_SIZE:])
        start = time.perf_counter()
        view.set_snapshot(snapshot, {})
        times.append(time.perf_counter() - start)
    app.processEvents()
    ordered = sorted(times)
    print(f"variables view, 200 variables with 20 tensors: median {statistics.median(times) * 1e3:.2f} ms, "
          f"p90 {ordered[int(len(ordered) * 0.9)] * 1e3:.2f} ms, max {max(times) * 1e3:.2f} ms per pause")
    view.close()
    return times


def main() -> int:
    app = QApplication.instance() or QApplication([])
    gc.freeze()
    shown, screens = show_big(app)
    times = update_variables(app)
    ok = shown <= SHOW_BUDGET and max(screens) <= SCREEN_BUDGET and statistics.median(times) <= VARIABLES_BUDGET
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
