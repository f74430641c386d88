"""The window's questions to the paused lesson, each matched to what is done with its answer.

A question is asked only while the lesson is paused live; its reply comes later, on the
bridge, by request id. A run that ends or resumes before answering takes its questions with
it (:meth:`Requests.forget`), so an old answer is never shown over a newer step.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Reply = Callable[[dict[str, Any]], None]


class Requests:
    """Pending questions by request id.

    Parameters
    ----------
    send
        Sends a request (``kind``, parameters) to the lesson and returns its id.
    may_ask
        Whether the lesson can be asked now (paused, not a past step).
    """

    def __init__(self, send: Callable[..., int], may_ask: Callable[[], bool]) -> None:
        self._send = send
        self._may_ask = may_ask
        self._pending: dict[int, Reply] = {}

    def ask(self, kind: str, on_reply: Reply, **params: Any) -> bool:
        """Ask the lesson ``kind`` and pass the answer to ``on_reply``; False (nothing sent) if it cannot be asked."""
        if not self._may_ask():
            return False
        self._pending[self._send(kind, **params)] = on_reply
        return True

    def answered(self, request_id: int, result: dict[str, Any]) -> None:
        """The lesson answered request ``request_id`` (an id no longer pending is ignored)."""
        on_reply = self._pending.pop(request_id, None)
        if on_reply is not None:
            on_reply(result)

    def forget(self) -> None:
        """Drop every pending question (the run ended)."""
        self._pending.clear()

    def __len__(self) -> int:
        return len(self._pending)
