"""The stepping session: one lesson run at a time, driven by a front end.

A :class:`Session` owns the lesson process (and a warm spare with torch already
imported), turns the front end's commands into messages, and reports what happens to
its listeners. Listeners are called on a reader thread: a Qt front end re-emits them as
signals, the headless trace puts them on a queue. No method waits on the lesson.
"""

from __future__ import annotations

import io
import itertools
import os
import sys
import threading
import tokenize
import traceback
from collections.abc import Callable
from typing import Any

from app import messages as m
from app.i18n import N_, tr
from app.lesson_process import LessonProcess, signal_name
from app.pause_delta import GraphMirror, expand

Listener = Callable[[Any], None]

#: Session states, as a front end shows them.
IDLE, RUNNING, PAUSED, ENDED = "idle", "running", "paused", "ended"

#: How long after a pause request the lesson process must have said something (the pause, or that a
#: long call holds it up, which it says after 0.3 s) before the session says that it does not answer.
STALL_SECONDS = 2.0
#: What the session says then (formatted in the learner's language by the front end).
STALLED = N_("The lesson has not answered for {seconds:g} s: a call that holds the whole interpreter, or a write "
             "into GradStep's message channel, stalls it. Stop ends it now.")


#: What the session says when the program has not ended that long after its last line (by the phase it is in).
EXIT_STALLED = {
    "threads": N_("The lesson's last line has run, but after {seconds:g} s the program still waits for its "
                  "threads to end ({threads}), as plain python would. Stop ends it."),
    "handlers": N_("The lesson's last line has run, but after {seconds:g} s an exit handler (atexit, "
                   "weakref.finalize) has not returned: the program does not end, as under plain python. "
                   "Stop ends it."),
}
#: The error of a run stopped then.
UNFINISHED = N_("Stopped after the last line: the program had not ended")


def _answers_pause(message: Any) -> bool:
    """Whether ``message`` is the lesson's answer to a pause request: a pause that waits, or a ``busy`` notice."""
    if isinstance(message, m.Paused):
        return not message.snapshot.get("recording")
    return isinstance(message, m.Notice) and message.kind == "busy"


def _later(check: Callable[..., None], *args: Any) -> None:
    """Call ``check(*args)`` :data:`STALL_SECONDS` from now, on a timer thread that never holds up an exit."""
    timer = threading.Timer(STALL_SECONDS, check, args)
    timer.daemon = True
    timer.start()


class LessonFileError(Exception):
    """The lesson file cannot be run: missing, unreadable or not text in its encoding."""


def read_lesson(path: str) -> str:
    """The text of a lesson file, or a :class:`LessonFileError` that says what is wrong.

    The file is decoded as Python decodes source: UTF-8 unless a PEP 263 coding cookie
    (``# -*- coding: latin-1 -*-``) names another encoding.
    """
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except FileNotFoundError:
        raise LessonFileError(tr("There is no file {path}.", path=path)) from None
    except IsADirectoryError:
        raise LessonFileError(tr("{path} is a folder, not a Python file.", path=path)) from None
    except OSError as exc:
        raise LessonFileError(tr("{path} cannot be read: {reason}.", path=path, reason=exc.strerror or exc)) from None
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as exc:
        if "invalid or missing" not in str(exc):  # an unknown or contradictory coding cookie
            raise LessonFileError(tr("{path} cannot be read: {reason}.", path=path, reason=exc)) from None
        encoding = "utf-8"  # no cookie, and not UTF-8 either: said below
    try:
        return data.decode(encoding)
    except UnicodeDecodeError as exc:
        name = "UTF-8" if encoding in ("utf-8", "utf-8-sig") else encoding
        raise LessonFileError(tr(
            "{path} is not {encoding} text (byte {position} is {byte}); save it as UTF-8 and open it again.",
            path=path, encoding=name, position=exc.start, byte=f"0x{data[exc.start]:02x}",
        )) from None


class Session:
    """Runs lessons and steps through them.

    Parameters
    ----------
    listener
        Called with every message of the current run: :class:`~app.messages.Started`,
        :class:`~app.messages.Output`, :class:`~app.messages.Paused`,
        :class:`~app.messages.Reply` and finally :class:`~app.messages.Ended`.
    warm_spare
        Keep a spare lesson process with torch imported, so that a run starts at once.
    forked
        Fork lesson processes from the spawner's server (:func:`app.lesson_spawner.spawn`).
    """

    def __init__(self, listener: Listener | None = None, warm_spare: bool = True, forked: bool = True) -> None:
        self.listeners: list[Listener] = [listener] if listener else []
        self.warm_spare = warm_spare
        self.forked = forked
        self.state = IDLE
        self.path: str | None = None
        self.source: str | None = None
        self.stop_on_entry = True
        self.op_values = False
        self.breakpoints: dict[str, dict[int, str | None]] = {}
        self.snapshot: dict[str, Any] | None = None
        self.generation = 0
        """Counts the runs started: a listener that hands messages to another thread tells one run's from the next's."""
        self._lock = threading.RLock()
        self._process: LessonProcess | None = None
        self._spare: LessonProcess | None = None
        self._ended = True
        self._graph = GraphMirror()
        self._checks: list[str] | None = None
        self._ids = itertools.count(1)
        self._exiting: m.Notice | None = None  # the current run's last "exiting" notice: its last line has run
        self._answered_at = 0  # channel bytes heard up to the end of the run's last answer to a pause request
        if warm_spare:
            self._spare = self._spawn()

    # ---- runs ---------------------------------------------------------------------------

    def start(self, path: str, source: str | None = None, stop_on_entry: bool = True,
              op_values: bool = False, watches: list[str] | None = None, checks: list[str] | None = None) -> None:
        """Run ``path`` (with ``source`` instead of the file's text, if given).

        ``op_values`` puts the summaries of each operation's inputs and output in the pauses' ``ops``.
        ``watches`` (when not ``stop_on_entry``) pauses where one of these expressions changes value.
        ``checks`` are evaluated in the lesson's module once it ran to the end (``Ended.checks``).

        Raises :class:`LessonFileError` before anything runs when the file is unusable.
        """
        path = os.path.abspath(path)
        if source is None:
            source = read_lesson(path)
        with self._lock:
            self._end_current()
            self.generation += 1
            self.path, self.source, self.stop_on_entry, self.op_values = path, source, stop_on_entry, op_values
            self.snapshot = None
            self._graph = GraphMirror()
            self._ended = False
            self._exiting = None
            self._answered_at = 0
            self._process = self._take_spare()
            self.state = RUNNING
            self._checks = list(checks) if checks else None
            self._process.send(m.RunLesson(path, source, dict(self.breakpoints), stop_on_entry, op_values,
                                     list(watches) if watches else None, self._checks))

    def restart(self, source: str | None = None) -> None:
        """Stop the run and start the same lesson again, the same way, in a fresh interpreter."""
        if self.path is None:
            raise RuntimeError("nothing to restart: no lesson has been run")
        self.start(self.path, source if source is not None else self.source, self.stop_on_entry, self.op_values,
                   checks=self._checks)

    def stop(self) -> None:
        """End the run now, even inside a long C call; listeners get ``Ended("stopped")``."""
        with self._lock:
            self._end_current()

    def close(self) -> None:
        """Stop the run and the spare process."""
        with self._lock:
            self._end_current()
            if self._spare is not None:
                self._spare.kill()
                self._spare = None

    # ---- stepping -----------------------------------------------------------------------

    def step_into(self) -> None:
        """Run to the next event in any user frame."""
        self._resume(m.Resume("step_into"))

    def step_over(self) -> None:
        """Run to the next line of this frame (or of its caller)."""
        self._resume(m.Resume("step_over"))

    def step_expression(self) -> None:
        """Run the paused line one PyTorch operation at a time: pause after each (event ``op``)."""
        self._resume(m.Resume("step_expression"))

    def step_out(self) -> None:
        """Run until this frame has returned to its caller."""
        self._resume(m.Resume("step_out"))

    def resume(self, watches: list[str] | None = None) -> None:
        """Continue to the next breakpoint or the end, or to where a watched expression changes.

        With ``watches`` every line is traced (as Thonny does for watchpoints), which is slower.
        """
        self._resume(m.Resume("continue", watches=list(watches) if watches else None))

    def run_to(self, line: int, file: str | None = None) -> None:
        """Continue to ``line`` of ``file`` (the lesson by default), or to an earlier breakpoint."""
        self._resume(m.Resume("run_to", file or self.path, line))

    def record(self, limit: int | None = None) -> None:
        """Step into every event, reporting each pause without stopping, for ``limit`` pauses.

        Snapshots marked ``"recording": True`` are passed; the run pauses for real after the
        limit, at a breakpoint-free end of the run, or as soon as :meth:`pause` is called.
        """
        self._resume(m.Resume("record", limit=limit))

    def pause(self) -> None:
        """Ask a running lesson to pause at its next traced line.

        The lesson process answers a request with the pause or with a ``busy`` notice. If no
        answer written after the request comes, and the app reads nothing more for
        :data:`STALL_SECONDS`, listeners get a ``Notice("stalled")``: the process cannot answer,
        and only :meth:`stop` ends it. Other messages are no answer, whenever they were written:
        a recording the app was still catching up with hid a stall behind them, and where the OS
        cannot count the bytes still in the pipe (the portable part), a message written before
        the request may be read after it (the run's ``Started`` did). While the app still reads
        messages the wait goes on: the answer may be queued behind them.
        """
        with self._lock:
            if self.state == RUNNING and self._process is not None:
                self._process.send(m.Pause())
                self._watch_answer(self._process, self._process.bytes_said())

    def _watch_answer(self, process: LessonProcess, asked_at: int) -> None:
        """Check, :data:`STALL_SECONDS` from now, that ``process`` answered what it was asked when it
        had written ``asked_at`` bytes (as far as the app can tell)."""
        _later(self._check_answered, process, asked_at, process.bytes_heard())

    def _check_answered(self, process: LessonProcess, asked_at: int, heard: int) -> None:
        with self._lock:
            if process is not self._process or self._ended or self.state != RUNNING \
                    or self._answered_at > asked_at:
                return
            if process.bytes_heard() != heard:  # still reading what came before the request
                self._watch_answer(process, asked_at)
                return
            self._emit(m.Notice.of("stalled", STALLED, None, seconds=STALL_SECONDS))

    def _check_exited(self, process: LessonProcess, exiting: m.Notice) -> None:
        with self._lock:
            if process is not self._process or self._ended or self._exiting is not exiting:
                return
            fields = exiting.fields or {}
            self._emit(m.Notice.of("stalled", EXIT_STALLED[fields.get("phase", "handlers")], None,
                                   seconds=STALL_SECONDS, threads=fields.get("threads", "")))

    def set_breakpoints(self, file: str, lines: dict[int, str | None]) -> None:
        """Replace the breakpoints of ``file`` (line → condition or None); applies to a live run too."""
        file = os.path.abspath(file)
        with self._lock:
            self.breakpoints[file] = dict(lines)
            if self._process is not None and not self._ended:
                self._process.send(m.SetBreakpoints(file, dict(lines)))

    def request(self, kind: str, **params: Any) -> int:
        """Ask the paused lesson something; the :class:`~app.messages.Reply` carries the returned id."""
        with self._lock:
            if self.state != PAUSED or self._process is None:
                raise RuntimeError(f"cannot ask '{kind}' while the lesson is {self.state}")
            request_id = next(self._ids)
            self._process.send(m.Request(request_id, kind, params))
            return request_id

    def _resume(self, command: m.Resume) -> None:
        with self._lock:
            if self.state != PAUSED or self._process is None:
                raise RuntimeError(f"cannot {command.action} while the lesson is {self.state}")
            self.state = RUNNING
            self._process.send(command)

    # ---- processes ----------------------------------------------------------------------

    def _spawn(self) -> LessonProcess:
        return LessonProcess(self._on_message, self.forked)

    def _take_spare(self) -> LessonProcess:
        spare, self._spare = self._spare, None
        if spare is None or not spare.alive():
            spare = self._spawn()
        return spare

    def _refill_spare(self) -> None:
        if self.warm_spare and self._spare is None:
            self._spare = self._spawn()

    def _end_current(self) -> None:
        process, self._process = self._process, None
        if process is None:
            return
        if not self._ended:
            process.kill()
            error = None if self._exiting is None else m.engine_error("NotFinished", UNFINISHED)
            self._finish(m.Ended("stopped", error))
        else:
            process.kill()

    def _finish(self, ended: m.Ended) -> None:
        self._ended = True
        self.state = ENDED
        self._emit(ended)
        self._refill_spare()

    def _on_message(self, process: LessonProcess, message: Any) -> None:
        with self._lock:
            if process is not self._process or self._ended:
                return
            if isinstance(message, int):
                self._finish(m.Ended("crashed", exit_code=message, signal=signal_name(message)))
                return
            if isinstance(message, m.Ready):
                return
            if _answers_pause(message):
                self._answered_at = process.bytes_heard()
            if isinstance(message, m.Paused):
                expand(self.snapshot, message.snapshot)  # the pause as sent holds only what changed
                if isinstance(graph := message.snapshot.get("graph"), dict):
                    self._graph.expand(graph)
                self.state = RUNNING if message.snapshot.get("recording") else PAUSED
                self.snapshot = message.snapshot
                self._emit(message)
                self._refill_spare()
                return
            if isinstance(message, m.Ended):
                process.kill_group()  # the run is over: what the lesson started ends with it
                self._finish(message)
                return
            if isinstance(message, m.Notice) and message.kind == "exiting":
                self._exiting = message  # told only if the program then does not end (_check_exited)
                _later(self._check_exited, process, message)
                return
            if isinstance(message, m.Reply) and isinstance(graph := message.result.get("graph"), dict):
                self._graph.expand(graph)  # a reply's graph changes travel as the pauses' do
            self._emit(message)

    def _emit(self, message: Any) -> None:
        for listener in list(self.listeners):
            try:
                listener(message)
            except Exception:  # one broken listener must not silence the others
                traceback.print_exc(file=sys.stderr)
