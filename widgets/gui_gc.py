"""Cyclic garbage is collected on the GUI thread only.

Python's collector runs in whichever thread allocates when a threshold is crossed, and the
session's reader threads allocate the most. A Qt object it frees there is destroyed off the
GUI thread, which can deadlock Shiboken against the GUI thread (a print flood hung a run this
way). pyqtgraph's :class:`~pyqtgraph.util.garbage_collector.GarbageCollector` turns automatic
collection off and collects from a timer of the GUI thread instead, generation by generation
as the thresholds say.
"""

from __future__ import annotations

from pyqtgraph.util.garbage_collector import GarbageCollector

#: Seconds between the GUI thread's looks at the collector's counts.
INTERVAL = 0.5

_collector: GarbageCollector | None = None


def collect_on_gui_thread() -> GarbageCollector:
    """Start collecting on the GUI thread's timer (once per process; a QApplication must exist)."""
    global _collector
    if _collector is None:
        _collector = GarbageCollector(interval=INTERVAL)
    return _collector
