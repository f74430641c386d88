"""Step-into pauses of a script under CPython's ``bdb`` and under GradStep, to compare them.

``bdb_pauses`` runs the script in a fresh interpreter under a ``bdb.Bdb`` that stays in
step mode, recording ``(line, event, exception type)`` at each stop in the script's own
frames; ``gradstep_pauses`` runs it through the real Session (the headless trace),
stepping into each time; ``on_purpose`` takes out of ``bdb``'s pauses those GradStep leaves
out as a teaching choice (see the README). Run as ``python tests/bdb_steps.py SCRIPT`` it
prints the ``bdb`` pauses as JSON.
"""

from __future__ import annotations

import bdb
import builtins
import difflib
import json
import os
import subprocess
import sys
import types
from typing import Any

sys.path.insert(1, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # run as a script, too
from app.lesson.hooks import hide_engine_frames  # noqa: E402

#: ``(line, event, exception type)``; the type is "" but at an exception event.
Pause = tuple[int, str, str]


class StepRecorder(bdb.Bdb):
    """A debugger that never leaves step mode and notes each stop in one file's frames."""

    def __init__(self, path: str) -> None:
        super().__init__()
        self.path = os.path.realpath(path)
        self.pauses: list[Pause] = []
        self._files: dict[str, bool] = {}

    def stop_here(self, frame: types.FrameType) -> bool:
        """Step mode in the script's frames; other frames are not stopped in, so not traced (as ``skip`` does)."""
        return self._own(frame.f_code) and super().stop_here(frame)

    def _own(self, code: types.CodeType) -> bool:
        own = self._files.get(code.co_filename)
        if own is None:
            own = self._files[code.co_filename] = os.path.realpath(code.co_filename) == self.path
        return own

    def _note(self, frame: types.FrameType, event: str, raised: str = "") -> None:
        self.pauses.append((frame.f_lineno, event, raised))
        self.set_step()

    def user_call(self, frame: types.FrameType, argument_list: Any) -> None:
        self._note(frame, "call")

    def user_line(self, frame: types.FrameType) -> None:
        self._note(frame, "line")

    def user_return(self, frame: types.FrameType, return_value: Any) -> None:
        self._note(frame, "return")

    def user_exception(self, frame: types.FrameType, exc_info: Any) -> None:
        self._note(frame, "exception", exc_info[0].__name__)


def record(path: str) -> list[Pause]:
    """The pauses of ``path`` run as ``__main__`` in this interpreter under :class:`StepRecorder`."""
    path = os.path.abspath(path)
    with open(path, "rb") as file:
        code = compile(file.read(), path, "exec")
    module = types.ModuleType("__main__")
    module.__file__ = path
    module.__builtins__ = builtins
    sys.modules["__main__"] = module
    sys.argv = [path]
    sys.path[0] = os.path.dirname(path)
    hide_engine_frames(module.__dict__)  # a stack the script formats starts at its module code, as GradStep's does
    recorder = StepRecorder(path)
    try:
        recorder.run(code, module.__dict__)
    except BaseException:  # noqa: BLE001 - the script's own end (an error, sys.exit) ends the recording too
        pass
    return recorder.pauses


def bdb_pauses(path: str, timeout: float = 600) -> list[Pause]:
    """The ``bdb`` step-mode pauses of ``path``, recorded in a fresh interpreter."""
    path = os.path.abspath(path)
    done = subprocess.run([sys.executable, os.path.abspath(__file__), path], capture_output=True, text=True,
                          timeout=timeout, check=True, cwd=os.path.dirname(path))
    return [tuple(pause) for pause in json.loads(done.stdout.rsplit("\n", 2)[-2])]


def gradstep_pauses(path: str, timeout: float = 600) -> list[Pause]:
    """GradStep's step-into pauses of ``path`` in its own file (post-mortem ones left out)."""
    from app.trace import trace_records

    path = os.path.abspath(path)
    records = trace_records(path, timeout=timeout)
    return [(r["line"], r["event"], r["exception"]["type"] if r["event"] == "exception" else "") for r in records
            if r["event"] != "end" and r["file"] == path and not r.get("post_mortem")]


def on_purpose(pauses: list[Pause], path: str) -> list[Pause]:
    """``bdb``'s pauses without those GradStep leaves out on purpose: a decorated function's
    entry (its ``call`` event, on its first decorator's line) and a ``SystemExit`` being raised."""
    with open(path, encoding="utf-8") as file:
        decorators = {number for number, text in enumerate(file, 1) if text.lstrip().startswith("@")}
    return [pause for pause in pauses if not (pause[1] == "call" and pause[0] in decorators)
            and pause[2] != "SystemExit"]


def agreement(ours: list[Pause], theirs: list[Pause]) -> tuple[int, int]:
    """``(matching, total)``: pauses in the longest common runs of both sequences, and the longer one's length."""
    matcher = difflib.SequenceMatcher(None, ours, theirs, autojunk=False)
    return sum(block.size for block in matcher.get_matching_blocks()), max(len(ours), len(theirs))


if __name__ == "__main__":
    pauses = record(sys.argv[1])
    sys.stdout = sys.__stdout__
    print("\n" + json.dumps(pauses))
