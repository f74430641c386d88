"""Helpers shared by the benchmarks: temporary lesson files and a blocking session driver."""

from __future__ import annotations

import os
import queue
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from app import messages as m  # noqa: E402
from app.session import Session  # noqa: E402

TMP = Path(tempfile.mkdtemp(prefix="gradstep-bench-"))


def write(name: str, source: str) -> str:
    """Write a benchmark lesson; returns its path."""
    path = TMP / name
    path.write_text(textwrap.dedent(source).lstrip("\n"), encoding="utf-8")
    return str(path)


def line_of(path: str, marker: str) -> int:
    for number, text in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        if marker in text:
            return number
    raise ValueError(marker)


def plain_output(path: str) -> str:
    """The stdout of ``python path``."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, path], capture_output=True, text=True, check=True, env=env).stdout


class Driver:
    """A session with a queue of its events, for benchmarks that wait on them."""

    def __init__(self, warm_spare: bool = False) -> None:
        self.events: queue.Queue[Any] = queue.Queue()
        self.session = Session(self.events.put, warm_spare=warm_spare)

    def next(self, kind: type | tuple[type, ...], timeout: float = 600) -> Any:
        while True:
            message = self.events.get(timeout=timeout)
            if isinstance(message, kind):
                return message

    def run_to_end(self, path: str, breakpoints: dict[int, str | None]) -> str:
        """Run in continue mode with ``breakpoints``; returns what the lesson printed."""
        self.session.breakpoints[os.path.abspath(path)] = breakpoints
        self.session.start(path, stop_on_entry=False)
        out = []
        while True:
            message = self.next((m.Output, m.Ended, m.Paused))
            if isinstance(message, m.Output) and message.stream == "stdout":
                out.append(message.text)
            elif isinstance(message, m.Paused):
                raise RuntimeError(f"unexpected pause at line {message.snapshot['line']}")
            elif isinstance(message, m.Ended):
                if message.status != "ok":
                    raise RuntimeError(f"run ended {message.status}: {message.error}")
                return "".join(out)

    def close(self) -> None:
        self.session.close()


def seconds_printed(text: str, key: str = "elapsed") -> float:
    """The figure a benchmark lesson printed as ``<key> <seconds>`` (``elapsed`` unless told another)."""
    for line in text.splitlines():
        if line.startswith(f"{key} "):
            return float(line.split()[1])
    raise ValueError(f"no {key} line in {text!r}")
