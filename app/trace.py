"""The headless trace: a lesson run through the engine, one JSON object per pause.

This is GradStep's equivalent of Python Tutor's execution trace (format in the README);
tests and scripts use it, and ``python main.py --trace FILE`` prints it.
"""

from __future__ import annotations

import json
import math
import os
import queue
import time
from collections.abc import Iterator
from contextlib import closing
from typing import Any, TextIO

import numpy as np

from app import messages as m
from app.run import Run
from app.session import LessonFileError, Session

#: Keys of a pause snapshot that the trace leaves out (the app's own bookkeeping and graph diff).
_APP_ONLY = ("frame_index", "graph")
#: The keys of a graph node that the trace keeps (saved tensors are for the app's panels).
_NODE_KEYS = ("id", "name", "kind", "variable", "variables", "shape", "origin")


def trace_records(path: str, breaks: list[int] | None = None, max_steps: int | None = None,
                  timeout: float = 60.0, graph: bool = False, ops: bool = False,
                  session: Session | None = None) -> list[dict[str, Any]]:
    """The whole trace of a run as a list of records (the last one is the ``end`` record)."""
    return list(iter_trace(path, breaks, max_steps, timeout, graph, ops, session))


def iter_trace(path: str, breaks: list[int] | None = None, max_steps: int | None = None,
               timeout: float | None = None, graph: bool = False, ops: bool = False,
               session: Session | None = None, forked: bool = True) -> Iterator[dict[str, Any]]:
    """Run ``path`` and yield one record per pause, then the ``end`` record.

    Without ``breaks`` every pause of step-into mode is a record; with them, only the
    breakpoint hits (and a post-mortem pause) are. ``ops`` keeps each record's ``"ops"``,
    the PyTorch operations of the line that just ran. The lesson process is gone when the
    iterator is exhausted or closed. A ``session`` given (one with a warm spare, reused for many
    traces) is borrowed: it gets the trace's listener for the run and is left without a run.
    ``forked`` is :class:`~app.session.Session`'s, for the session made when none is given.
    """
    events: queue.Queue[Any] = queue.Queue()
    own = session is None
    if session is None:
        session = Session(events.put, warm_spare=False, forked=forked)
    else:
        session.listeners[:] = [events.put]
        session.breakpoints.clear()
    deadline = None if timeout is None else time.monotonic() + timeout
    stepping = not breaks
    try:
        path = os.path.abspath(path)
        run = Run(path, budget_bytes=None)  # the trace keeps no history: each record is written as it comes
        if breaks:
            session.breakpoints[path] = {line: None for line in breaks}
        try:
            session.start(path, stop_on_entry=stepping, op_values=ops)
        except LessonFileError as exc:
            yield end_record("error", {"type": "LessonFileError", "message": str(exc), "line": None})
            return
        yield from _records(events, session, run, deadline, stepping, graph, ops, max_steps)
    finally:
        if own:
            session.close()
        else:
            session.stop()
            session.listeners[:] = []


def _records(events: queue.Queue[Any], session: Session, run: Run, deadline: float | None, stepping: bool,
             graph: bool, ops: bool, max_steps: int | None) -> Iterator[dict[str, Any]]:
    """The records of a started run: one per pause (stepping on or resuming), then the end."""
    count = 0
    while True:
        wait = None if deadline is None else deadline - time.monotonic()
        try:
            message = events.get(timeout=wait if wait is None or wait > 0 else 0)
        except queue.Empty:
            session.stop()
            yield end_record("timeout")
            return
        if isinstance(message, m.Ended) and message.status == "stopped":
            continue
        run.feed(message)
        if isinstance(message, m.Paused):
            count += 1
            record = pause_record(message.snapshot, *_streams(run.output_before_pause), ops)
            if graph:
                rid = session.request("graph")
                record["graph"] = trace_graph(_await_reply(events, rid, run)["graph"])
            yield record
            if max_steps is not None and count >= max_steps:
                session.stop()
                yield end_record("max-steps")
                return
            if stepping and not message.snapshot.get("post_mortem"):
                session.step_into()
            else:
                session.resume()
        elif isinstance(message, m.Ended):
            yield end_record(message.status, message.error, message.exit_code, message.signal,
                             *_streams(run.output_since_pause))
            return


def _streams(output: list[tuple[str, str]]) -> tuple[str, str]:
    """The text of ``output`` written to stdout (and natively), and the text written to stderr."""
    return ("".join(text for stream, text in output if stream != "stderr"),
            "".join(text for stream, text in output if stream == "stderr"))


def _await_reply(events: queue.Queue[Any], request_id: int, run: Run) -> dict[str, Any]:
    """The answer to ``request_id``; output that comes first (another thread of the lesson) goes to the run."""
    while True:
        message = events.get()
        if isinstance(message, m.Reply) and message.id == request_id:
            return message.result
        if isinstance(message, m.Output):
            run.feed(message)


def trace_graph(full: dict[str, Any]) -> dict[str, Any]:
    """The headless form of a whole graph: nodes with their names, edges, roots."""
    nodes = [{key: node.get(key) for key in _NODE_KEYS} for node in full["nodes"]]
    return {"nodes": nodes, "edges": full["edges"], "roots": full["roots"]}


def pause_record(snapshot: dict[str, Any], stdout: str, stderr: str, ops: bool = False) -> dict[str, Any]:
    """A trace record from a pause snapshot and the text printed since the previous one (and its ops)."""
    record = {k: v for k, v in snapshot.items() if k not in _APP_ONLY and k != "ops"}
    if ops:
        record["ops"] = snapshot.get("ops", [])
    record["stdout"] = stdout
    record["stderr"] = stderr
    return record


def end_record(status: str, error: dict[str, Any] | None = None, exit_code: int | None = None,
               signal: str | None = None, stdout: str = "", stderr: str = "") -> dict[str, Any]:
    """The closing record of a trace, with the text printed after the last pause."""
    return {"event": "end", "status": status, "error": error, "exit_code": exit_code, "signal": signal,
            "stdout": stdout, "stderr": stderr}


def jsonable(value: Any) -> Any:
    """``value`` with numpy arrays as nested lists and non-finite floats as "nan", "inf", "-inf"."""
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        if value.dtype.kind == "c":
            return jsonable(np.stack([value.real, value.imag], axis=-1).tolist())
        return jsonable(value.tolist())
    if isinstance(value, np.generic):
        return jsonable(value.item())
    if isinstance(value, float) and not math.isfinite(value):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")
    if isinstance(value, complex):
        return [jsonable(value.real), jsonable(value.imag)]
    return value


def write_trace(path: str, out: TextIO, breaks: list[int] | None = None, max_steps: int | None = None,
                timeout: float | None = None, graph: bool = False, ops: bool = False) -> int:
    """Print the trace of ``path`` as JSON lines; returns the command's exit status."""
    last: dict[str, Any] = {}
    # One run and the command ends: a fresh interpreter, no server importing torch beside it.
    with closing(iter_trace(path, breaks, max_steps, timeout, graph, ops, forked=False)) as records:
        for record in records:
            out.write(json.dumps(jsonable(record), ensure_ascii=False, allow_nan=False) + "\n")
            out.flush()
            last = record
    status = last.get("status")
    ok = status in ("ok", "empty") or (status == "exited" and last.get("exit_code") == 0)
    return 0 if ok else 1
