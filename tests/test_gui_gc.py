"""Cyclic garbage is collected on the GUI thread, never on a reader thread (widgets/gui_gc.py)."""

from __future__ import annotations

import gc
import os
import threading
import weakref

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from widgets.gui_gc import collect_on_gui_thread  # noqa: E402


class Cycle:
    """An object that refers to itself: only the cyclic collector frees it."""

    def __init__(self) -> None:
        self.me = self


def test_garbage_cycles_die_on_the_gui_threads_timer_not_in_a_thread_that_allocates(qtbot):
    """A print flood hung a test run: a collection on the stdout reader thread destroyed a Qt object there."""
    collect_on_gui_thread()
    assert not gc.isenabled()  # no collection in whichever thread happens to allocate
    cycle = Cycle()
    ref = weakref.ref(cycle)
    del cycle
    freed_in = []
    kept = []

    def allocate() -> None:  # as a reader thread does: far past the collector's first threshold
        kept.extend([] for _ in range(5 * gc.get_threshold()[0]))
        freed_in.append(ref() is None)

    worker = threading.Thread(target=allocate)
    worker.start()
    worker.join()
    assert freed_in == [False]  # the thread's allocations collected nothing
    qtbot.waitUntil(lambda: ref() is None, timeout=5_000)  # the GUI thread's timer did
