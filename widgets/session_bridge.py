"""Qt signals over the engine's session: the one place where lesson events enter the GUI thread.

The session calls its listeners on a reader thread; :class:`SessionBridge` re-emits each
message as a Qt signal, which Qt queues onto the GUI thread. Output arriving faster than
the screen can show it is coalesced per stream so a print flood costs one signal per frame.
Output keeps its place among the other messages: what was pending when a pause (or any
other message) arrived travels with that message, and the timer shows pending output only
once every message handed over before it has been delivered, so text the lesson printed
after a pause is never shown (or recorded in the history) before it, however far the GUI
thread lags behind a recording.
A message is tagged with the run it belongs to (:attr:`~app.session.Session.generation`)
when the session hands it over, and dropped if another run started before the GUI thread
got to it, so no panel ever shows a message of the run before.
"""

from __future__ import annotations

import threading
from typing import Any

from PySide6.QtCore import QObject, QTimer, Signal, Slot

from app import messages as m
from app.i18n import tr
from app.session import Session

#: Characters of output held for the screen at most; past this the oldest are dropped (and said so).
PENDING_LIMIT = 2_000_000


class SessionBridge(QObject):
    """Re-emits a :class:`~app.session.Session`'s messages as signals on the GUI thread.

    Parameters
    ----------
    session
        The engine session; the bridge adds itself as a listener. The bridge does not own
        it: whoever made the session closes it.
    """

    started = Signal(str)
    """A run began (the lesson's path)."""
    paused = Signal(object)
    """The lesson paused; the snapshot (a dict, passed as the object it is: ``Signal(dict)`` converts it to a
    QVariantMap and back, which sorts every dict in it by key: the Variables view lost the definition order)."""
    output = Signal(str, str)
    """The lesson wrote text: stream ("stdout", "stderr", "native") and text."""
    replied = Signal(int, str, object)
    """A request was answered: id, kind, result (a dict, passed as it is)."""
    ended = Signal(object)
    """The run is over; the :class:`~app.messages.Ended` message."""
    noticed = Signal(str, str)
    """The engine has something to tell while the lesson runs: kind and text (see :class:`~app.messages.Notice`)."""
    skipped = Signal(int)
    """The lesson printed faster than the window could show: this many characters of its output, before the
    output that follows, are not shown."""

    _message_arrived = Signal(int, object)

    def __init__(self, session: Session, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.session = session
        self._pending: list[tuple[str, str]] = []
        self._pending_generation = 0
        self._pending_chars = 0
        self._dropped = 0
        self._pending_lock = threading.Lock()
        self._queued = 0  # messages handed to the GUI thread and not delivered yet
        self._flush_timer = QTimer(self, singleShot=True, interval=30)
        self._flush_timer.timeout.connect(self._flush_output)
        self._message_arrived.connect(self._on_message_arrived)
        session.listeners.append(self._on_session_message)

    def detach(self) -> None:
        """Stop listening to the session (before it is closed)."""
        if self._on_session_message in self.session.listeners:
            self.session.listeners.remove(self._on_session_message)

    def _on_session_message(self, message: Any) -> None:
        """Runs on the session's reader thread (holding the session's lock): hand the message to the GUI thread."""
        generation = self.session.generation
        if isinstance(message, m.Output):
            with self._pending_lock:
                if self._pending and self._pending_generation != generation:
                    self._pending.clear()  # the run before's output, not yet shown: it is over
                    self._pending_chars = self._dropped = 0
                self._pending_generation = generation
                first = not self._pending
                self._pending.append((message.stream, message.text))
                self._pending_chars += len(message.text)
                while self._pending_chars > PENDING_LIMIT and len(self._pending) > 1:
                    _, text = self._pending.pop(0)
                    self._pending_chars -= len(text)
                    self._dropped += len(text)
            if first:
                self._message_arrived.emit(generation, None)
            return
        with self._pending_lock:  # the output before this message goes with it
            batch = self._take_pending(generation)
            self._queued += 1
        self._message_arrived.emit(generation, (batch, message))

    def _take_pending(self, generation: int) -> tuple[list[tuple[str, str]], int]:
        """The pending output of run ``generation`` and how much was dropped; called with the lock held."""
        pending = self._pending if self._pending_generation == generation else []
        dropped = self._dropped if self._pending_generation == generation else 0
        self._pending, self._dropped, self._pending_chars = [], 0, 0
        return pending, dropped

    @Slot(int, object)
    def _on_message_arrived(self, generation: int, item: Any) -> None:
        if item is None:
            if not self._flush_timer.isActive():
                self._flush_timer.start()
            return
        with self._pending_lock:
            self._queued -= 1
        if generation != self.session.generation:
            return  # another run started since: this message is of a run no panel shows any more
        (pending, dropped), message = item
        self._emit_output(pending, dropped)
        if isinstance(message, m.Paused):
            self.paused.emit(message.snapshot)
        elif isinstance(message, m.Started):
            self.started.emit(message.path)
        elif isinstance(message, m.Reply):
            self.replied.emit(message.id, message.kind, message.result)
        elif isinstance(message, m.Ended):
            self.ended.emit(message)
        elif isinstance(message, m.Notice):
            template = message.template
            self.noticed.emit(message.kind, tr(template, **(message.fields or {})) if template else message.text)

    def _flush_output(self) -> None:
        with self._pending_lock:
            if self._queued:  # messages before this output are still on their way: it waits for them
                self._flush_timer.start()
                return
            generation = self.session.generation
            pending, dropped = self._take_pending(generation)
        self._emit_output(pending, dropped)

    def _emit_output(self, pending: list[tuple[str, str]], dropped: int) -> None:
        if dropped:
            self.skipped.emit(dropped)
        merged: list[list[str]] = []
        for stream, text in pending:
            if merged and merged[-1][0] == stream:
                merged[-1][1] += text
            else:
                merged.append([stream, text])
        for stream, text in merged:
            self.output.emit(stream, text)
