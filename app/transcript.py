"""The console transcript of a run: the lesson's output, the app's messages and the learner's evaluations, in order.

The console view shows a :class:`Transcript` and redraws it whole when it is shown again
(back from a past step, for one), so nothing written to the console is lost by looking at
the past. Each entry belongs to a step of the run (:attr:`Transcript.step`), so a past step
shows what the console held then (:meth:`Transcript.until`). A transcript keeps at most
``limit`` characters; past that the oldest entries go and :attr:`Transcript.dropped` counts them.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import Any

#: Characters a transcript keeps at most (about 40,000 lines of 100 characters).
LIMIT_CHARS = 4_000_000

#: An entry: ``("output", stream, text)``, ``("message", kind, text)``, ``("error", error)``,
#: ``("echo", expression)`` or ``("result", expression, result)``.
Entry = tuple[Any, ...]
#: A message's text: a string, or a function that words it in the current language each time it
#: is shown, so that the app's messages follow a change of language.
Text = str | Callable[[], str]


def shown(text: Text) -> str:
    """A message's text as it is shown now."""
    return text() if callable(text) else text


def _size(entry: Entry) -> int:
    kind = entry[0]
    if kind == "output":
        return len(entry[2])
    if kind == "message":
        return len(shown(entry[2]))
    if kind == "echo":
        return len(entry[1])
    return 200  # an error or a result: a few lines, bounded by the engine


class Transcript:
    """What the console shows for one run, as plain data.

    Parameters
    ----------
    limit
        Characters kept at most; the oldest entries are dropped beyond it.
    """

    def __init__(self, limit: int = LIMIT_CHARS) -> None:
        self.limit = limit
        self.entries: deque[Entry] = deque()
        self.dropped = 0
        self.listeners: list[Callable[[Entry | None], None]] = []
        """Called with each new entry, and with None when the transcript was cleared."""
        self.step = 0
        """The step of the run new entries belong to (the run moves it on at each step it records)."""
        self._steps: deque[int] = deque()  # each entry's step
        self._chars = 0

    def add_output(self, stream: str, text: str, step: int | None = None) -> None:
        """The lesson wrote ``text`` to ``stream`` ("stdout", "stderr" or "native"), before step ``step``
        (by default :attr:`step`)."""
        if text:
            self._add(("output", stream, text), step)

    def add_message(self, text: Text, kind: str = "info") -> None:
        """A message of the app's own: ``kind`` is "info", "error" or "success"."""
        self._add(("message", kind, text))

    def add_error(self, error: dict[str, Any]) -> None:
        """An error of the lesson (``{"type", "message", "line", "traceback"}``)."""
        self._add(("error", error))

    def add_echo(self, expression: str) -> None:
        """The learner entered ``expression`` in the console."""
        self._add(("echo", expression))

    def add_result(self, expression: str, result: dict[str, Any]) -> None:
        """The answer to ``expression``: ``{"ok": True, "value"}`` or ``{"ok": False, "error"}``."""
        self._add(("result", expression, result))

    def until(self, step: int, heading: Text) -> Transcript:
        """What the transcript held at step ``step`` (no entry of a later step), under the message ``heading``."""
        past = Transcript(self.limit)
        past.add_message(heading)
        past.dropped = self.dropped
        for entry, entry_step in zip(self.entries, self._steps, strict=True):
            if entry_step <= step:
                past._add(entry)
        return past

    def clear(self) -> None:
        """Forget everything written so far (the console's Clear)."""
        self.entries.clear()
        self._steps.clear()
        self._chars = 0
        self.dropped = 0
        self._tell(None)

    def text(self) -> str:
        """The lesson's output and the app's messages as plain text (for tests and the trace)."""
        parts = []
        for entry in self.entries:
            if entry[0] == "output":
                parts.append(entry[2])
            elif entry[0] == "message":
                parts.append(shown(entry[2]) + "\n")
        return "".join(parts)

    def __len__(self) -> int:
        return len(self.entries)

    def _add(self, entry: Entry, step: int | None = None) -> None:
        self.entries.append(entry)
        self._steps.append(self.step if step is None else step)
        self._chars += _size(entry)
        while self._chars > self.limit and len(self.entries) > 1:
            self._chars -= _size(self.entries.popleft())
            self._steps.popleft()
            self.dropped += 1
        self._tell(entry)

    def _tell(self, entry: Entry | None) -> None:
        for listener in list(self.listeners):
            listener(entry)
