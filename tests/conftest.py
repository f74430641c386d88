"""Shared fixtures: a session whose events can be awaited, and lesson files written on the fly."""

from __future__ import annotations

import faulthandler
import os
import queue
import sys
import tempfile
import textwrap
from pathlib import Path
from typing import Any

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
# The tests never read or write the user's own settings, autosaves or edited lessons: Qt's
# config and data folders point into a folder of this test run.
_HOME = tempfile.mkdtemp(prefix="gradstep-tests-")
os.environ["XDG_CONFIG_HOME"] = os.path.join(_HOME, "config")
os.environ["XDG_DATA_HOME"] = os.path.join(_HOME, "data")

from app import messages as m  # noqa: E402
from app.session import Session  # noqa: E402


class EventLog:
    """A session listener that keeps every message and lets a test wait for the next one of a kind."""

    def __init__(self) -> None:
        self.queue: queue.Queue[Any] = queue.Queue()
        self.seen: list[Any] = []

    def __call__(self, message: Any) -> None:
        self.queue.put(message)

    def wait(self, kind: type, timeout: float = 30.0) -> Any:
        """The next message of type ``kind``; earlier messages of other kinds are kept in ``seen``."""
        while True:
            message = self.queue.get(timeout=timeout)
            self.seen.append(message)
            if isinstance(message, kind):
                return message

    def pause(self, timeout: float = 30.0) -> dict[str, Any]:
        """The snapshot of the next pause; fails if the run ends first."""
        message = self.wait((m.Paused, m.Ended), timeout)
        assert isinstance(message, m.Paused), f"expected a pause, the run ended: {message}"
        return message.snapshot

    def end(self, timeout: float = 30.0) -> m.Ended:
        return self.wait(m.Ended, timeout)

    def reply(self, request_id: int, timeout: float = 30.0) -> dict[str, Any]:
        while True:
            message = self.wait(m.Reply, timeout)
            if message.id == request_id:
                return message.result

    def output(self, stream: str | None = None) -> str:
        return "".join(msg.text for msg in self.seen
                       if isinstance(msg, m.Output) and (stream is None or msg.stream == stream))


#: The modal dialogs of Qt that would wait for a click no headless test can give, with the
#: answer each gives instead (the one that changes nothing).
_MODALS = {
    ("QMessageBox", "question"): "Cancel",  # a QMessageBox answer is the name of its StandardButton
    ("QMessageBox", "warning"): "Cancel",
    ("QMessageBox", "critical"): "Cancel",
    ("QMessageBox", "information"): "Ok",
    ("QMessageBox", "about"): None,
    ("QFileDialog", "getOpenFileName"): ("", ""),
    ("QFileDialog", "getSaveFileName"): ("", ""),
    ("QInputDialog", "getText"): ("", False),
    ("QInputDialog", "getInt"): (0, False),
}


@pytest.fixture(autouse=True)
def no_blocking_dialogs(request, monkeypatch):
    """Fail a test that opens a modal dialog it did not answer, instead of hanging on it.

    Offscreen, a modal dialog's event loop never ends, and an exception raised inside a Qt
    slot is printed, not raised, so a test must answer each dialog it expects (by patching
    it, as these stubs do); an unexpected one is answered "change nothing" and fails here.
    """
    if "qtbot" not in request.fixturenames:
        yield
        return
    from PySide6 import QtWidgets

    opened: list[str] = []

    def stub(owner: str, name: str, answer: Any):
        def dialog(*args: Any, **kwargs: Any) -> Any:
            texts = [a for a in args if isinstance(a, str)]
            opened.append(f"{owner}.{name}{tuple(texts)}")
            if isinstance(answer, str):
                return QtWidgets.QMessageBox.StandardButton[answer]
            return answer
        return staticmethod(dialog)

    for (owner, name), answer in _MODALS.items():
        monkeypatch.setattr(getattr(QtWidgets, owner), name, stub(owner, name, answer))
    yield
    assert not opened, f"the test opened modal dialogs it did not answer: {opened}"


@pytest.fixture(autouse=True)
def gui_thread_collection(request):
    """As in the app, cyclic garbage is collected on the GUI thread only (see widgets/gui_gc.py): a Qt
    object freed by a collection on a session's reader thread can deadlock the test run. After each
    test the collector looks at its counts once, so tests that run no event loop still collect."""
    from widgets import gui_gc

    if "qtbot" in request.fixturenames:
        request.getfixturevalue("qapp")
        gui_gc.collect_on_gui_thread()
    yield
    if gui_gc._collector is not None:
        gui_gc._collector.check()


@pytest.fixture(autouse=True)
def english_interface():
    """Every test starts with the interface in English and leaves it so (the language, Qt's own texts
    included, is process-wide)."""
    from app import i18n
    from widgets.qt_translations import use_qt_language

    i18n.set_language("en")
    yield
    i18n.set_language("en")
    use_qt_language("en")


@pytest.fixture(autouse=True)
def predictions_not_asked(monkeypatch):
    """Windows start with Run > Ask Predictions off, so a test about something else is not stopped by a
    lesson's ``# predict:`` lines; the tests of predictions turn it on."""
    from widgets import settings

    monkeypatch.setitem(settings.DEFAULTS, "course/ask_predictions", False)


@pytest.fixture
def events() -> EventLog:
    return EventLog()


#: Sessions with a warm spare that the test run keeps, lent in turn.
WARM_SESSIONS = 2
_warm: list[Session] = []


def warm_session() -> Session:
    """The next of the test run's sessions with a warm spare, so that a run does not wait for ``import torch``.

    A session spawns its next spare once its run pauses, so back-to-back short runs on one session
    would each wait for a whole ``import torch``; lent in turn, a spare also has the other session's
    run to warm up in. Tests borrow them (the ``session`` fixture, traces given ``session=``); they
    are closed, spares and all, when the test run ends.
    """
    if not _warm:
        _warm.extend(Session(warm_spare=True) for _ in range(WARM_SESSIONS))
    _warm.append(_warm.pop(0))
    return _warm[-1]


def borrow(listener: Any) -> Session:
    """A warm session with ``listener`` as its only listener, for one run (:func:`give_back` after)."""
    s = warm_session()
    s.listeners[:] = [listener]
    s.breakpoints.clear()
    return s


def give_back(s: Session) -> None:
    """End the borrowed session's run (its warm spare stays) and take the listener off."""
    s.stop()
    s.listeners[:] = []
    s.breakpoints.clear()


#: A copy of this process's stderr as it was when the run was configured (before any test's capture).
_stderr_fd: int | None = None


def pytest_configure(config: pytest.Config) -> None:
    global _stderr_fd
    config.addinivalue_line("markers", "stops(lesson, *markers, graph=False): the lines of a lesson a test reads "
                            "(test_lesson_facts.lesson_run)")
    _stderr_fd = os.dup(sys.__stderr__.fileno())


@pytest.hookimpl(tryfirst=True)
def pytest_timeout_set_timer(item: pytest.Item, settings: Any) -> bool | None:
    """In a pytest-xdist worker, a test past its timeout prints every thread's stack to the run's stderr.

    pytest-timeout's thread method writes them to the worker's terminal, which xdist does not pass
    on: a hang then showed only "worker 'gw0' crashed while running" the test. ``faulthandler``
    writes to a copy of stderr taken before the tests' capture, then ends the worker as the thread
    method does (xdist reports the test failed and starts another worker).
    """
    if "PYTEST_XDIST_WORKER" not in os.environ or settings.method != "thread" or _stderr_fd is None:
        return None
    faulthandler.dump_traceback_later(settings.timeout, exit=True, file=_stderr_fd)
    item.cancel_timeout = faulthandler.cancel_dump_traceback_later
    return True


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    for shared in _warm:
        shared.close()


@pytest.fixture
def session(events: EventLog):
    """A warm session, listening to this test's events; the run ends with the test (the spare stays)."""
    s = warm_session()
    s.listeners[:] = [events]
    s.breakpoints.clear()
    s.stop_on_entry, s.op_values = True, False
    yield s
    s.stop()
    s.listeners[:] = []
    s.breakpoints.clear()


@pytest.fixture
def lesson(tmp_path: Path):
    """Write a lesson file from a dedented string; returns its path as a str."""

    def write(source: str, name: str = "lesson.py") -> str:
        path = tmp_path / name
        path.write_text(textwrap.dedent(source).lstrip("\n"), encoding="utf-8")
        return str(path)

    return write


def process_gone(pid: int) -> bool:
    """Whether no process has the id ``pid`` any more (it ended and was reaped)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def line_of(path: str, marker: str) -> int:
    """The 1-based number of the first line of ``path`` containing ``marker``."""
    for number, text in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        if marker in text:
            return number
    raise AssertionError(f"{marker!r} not in {path}")


@pytest.fixture(autouse=True)
def usual_colours():
    """Every test leaves the application in its usual colours (View > High Contrast is process-wide)."""
    yield
    theme = sys.modules.get("widgets.theme")  # a test without widgets never loaded it (nor Qt's widgets)
    if theme is not None:
        theme.set_high_contrast(False)


@pytest.fixture
def open_window(qtbot, tmp_path):
    """Open the main window (settings in a temporary file, no warm spare) on a file, at a size if given."""
    from app.workspace import Workspace
    from widgets import settings
    from widgets.main_window import MainWindow

    settings.use_file(str(tmp_path / "settings.ini"))
    opened = []

    def open_on(path, size: tuple[int, int] | None = None):
        session = Session(warm_spare=False)
        window = MainWindow(session, Workspace(tmp_path / "data"))
        qtbot.addWidget(window)
        if size is not None:
            window.resize(*size)
        window.show()
        window.open_file(path)
        opened.append((window, session))
        return window

    yield open_on
    for window, session in opened:
        window.close()
        session.close()
    settings.use_file(None)


@pytest.fixture
def window_on(open_window, tmp_path):
    """Open the main window on a lesson written from a string."""

    def open_source(source: str, name: str = "lesson.py"):
        path = tmp_path / name
        path.write_text(source, encoding="utf-8")
        return open_window(path)

    return open_source


def use_tracer(monkeypatch: pytest.MonkeyPatch, backend: str) -> None:
    """Lesson processes started from now on trace with ``backend``: ``settrace``, or the monitor where there is one."""
    from app.lesson.event_monitor import BACKEND_VARIABLE

    if backend == "settrace":
        monkeypatch.setenv(BACKEND_VARIABLE, "settrace")
    else:
        monkeypatch.delenv(BACKEND_VARIABLE, raising=False)
