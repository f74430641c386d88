"""Pauses travel as changes: what did not change since the previous pause is named, not re-sent.

At a pause most of the snapshot is what the previous pause sent: the summaries of tensors
that did not change (the summarizer hands back the very same dict) and, while a line is
stepped one operation at a time, the operations logged so far. Encoding and decoding them
again was most of an op-level pause's cost. The lesson side (:class:`PauseCompressor`)
replaces a variable whose summary is the object it sent last time by ``None`` and sends
only the operations after the ones already sent (``ops_kept`` says how many those are);
the app side (:func:`expand`) puts them back from the previous snapshot, so every listener
of the session still sees whole snapshots. Both sides see every pause in order (record-mode
pauses included), which is what keeps them in step.
"""

from __future__ import annotations

from typing import Any

#: The snapshot sections whose summaries are sent as changes.
SECTIONS = ("vars", "globals")
#: What a variable holds on the wire when its summary is the one the previous pause sent.
SAME = None
#: The key that says how many of the previous pause's operations lead this pause's.
OPS_KEPT = "ops_kept"


class PauseCompressor:
    """The lesson side: remembers what the last pause sent and leaves it out of the next one."""

    def __init__(self) -> None:
        self._sent: dict[str, dict[str, Any]] = {section: {} for section in SECTIONS}
        self._ops: list[Any] = []

    def compress(self, snapshot: dict[str, Any]) -> dict[str, Any]:
        """The snapshot as it goes on the wire (a new dict; ``snapshot`` is left as it is)."""
        wire = dict(snapshot)
        for section in SECTIONS:
            values = snapshot.get(section)
            if values is None:
                continue
            before = self._sent[section]
            wire[section] = {name: SAME if isinstance(summary, dict) and before.get(name) is summary else summary
                             for name, summary in values.items()}
            self._sent[section] = dict(values)
        ops = snapshot.get("ops")
        if ops:
            kept = 0
            for old, new in zip(self._ops, ops, strict=False):
                if old is not new:
                    break
                kept += 1
            if kept:
                wire["ops"], wire[OPS_KEPT] = ops[kept:], kept
        self._ops = list(ops or ())
        return wire


def expand(previous: dict[str, Any] | None, wire: dict[str, Any]) -> dict[str, Any]:
    """Fill ``wire`` (a pause as sent) in place from ``previous`` (the whole snapshot before it); returns it.

    A name or operation the previous snapshot lacks (which only a lesson process that does
    not follow the protocol can cause) becomes a summary that says so, never an error.
    """
    previous = previous or {}
    for section in SECTIONS:
        values = wire.get(section)
        if not isinstance(values, dict) or SAME not in values.values():
            continue
        before = previous.get(section) or {}
        wire[section] = {name: summary if summary is not SAME else before.get(name) or _missing(name)
                         for name, summary in values.items()}
    kept = wire.pop(OPS_KEPT, 0)
    if isinstance(kept, int) and kept > 0:
        earlier = list(previous.get("ops") or ())[:kept]
        wire["ops"] = earlier + list(wire.get("ops") or ())
    return wire


def _missing(name: str) -> dict[str, Any]:
    return {"type": "missing", "repr": f"<{name}: the lesson process referred to a value it never sent>"}
