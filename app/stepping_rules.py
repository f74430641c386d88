"""The stepping rules: which of the Run menu's actions make sense in a state, as one function of that state.

The window enables its actions from :func:`allowed_actions` and nothing else, so the rules
read in one place and are tested without Qt.
"""

from __future__ import annotations

from dataclasses import dataclass

from app.session import ENDED, IDLE, PAUSED, RUNNING


@dataclass(frozen=True)
class WindowState:
    """What the rules look at."""

    lesson: str = IDLE
    """The session's state: idle, running, paused or ended."""
    has_file: bool = False
    can_step_back: bool = False
    viewing_past: bool = False
    edited_elsewhere: bool = False
    """Another window holds the file's edit lock (read-only here)."""
    revertible: bool = False
    """The file is a copy of a bundled lesson."""


def allowed_actions(state: WindowState) -> dict[str, bool]:
    """Action name (the window's ``act_<name>``) → whether it is enabled in ``state``."""
    lesson = state.lesson
    idle = lesson in (IDLE, ENDED) and state.has_file
    paused, running = lesson == PAUSED, lesson == RUNNING
    return {
        "start": idle or paused,
        "run_to_end": idle,
        "step_over": idle or paused,
        "step_into": idle or paused,
        "step_out": paused,
        "step_expression": paused,
        "run_to_cursor": idle or paused,
        "pause": running,
        "stop": running or paused,
        "restart": state.has_file and (running or paused or lesson == ENDED),
        "toggle_bp": state.has_file,
        "step_back": not running and state.can_step_back,
        "go_live": state.viewing_past,
        "record": idle or paused,
        "save": state.has_file and not (running or paused) and not state.edited_elsewhere,
        "revert": state.has_file and state.revertible and not state.edited_elsewhere,
    }
