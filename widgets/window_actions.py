"""The main window's actions: their text, VS Code shortcut, icon and the tooltip that names the key."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QStyle, QWidget

SP = QStyle.StandardPixmap

#: attribute, text, shortcut, icon, the window's method that runs it, what it does.
ACTIONS: tuple[tuple[str, str, str | None, QStyle.StandardPixmap | None, str, str], ...] = (
    ("act_start", "&Start / Continue", "F5", SP.SP_MediaPlay, "start_or_continue",
     "Start the lesson, pausing at its first line; when paused, continue to the next breakpoint"),
    ("act_run_to_end", "Run to &End", "F8", SP.SP_ArrowRight, "run_to_end",
     "Run the lesson without pausing at its first line: it stops only at a breakpoint or the end"),
    ("act_step_over", "Step &Over", "F10", SP.SP_ArrowForward, "step_over",
     "Run this line, then pause on the next one in this function"),
    ("act_step_into", "Step &Into", "F11", SP.SP_ArrowDown, "step_into",
     "Run to the next line, entering functions it calls"),
    ("act_step_expression", "Step Into E&xpression", "Alt+F11", SP.SP_ArrowRight, "step_expression",
     "Run this line one PyTorch operation at a time: pause after each, showing its result and the nodes "
     "it made (F10 finishes the line)"),
    ("act_step_out", "Step O&ut", "Shift+F11", SP.SP_ArrowUp, "step_out", "Run until this function returns"),
    ("act_run_to_cursor", "Run to &Cursor", "Ctrl+F10", SP.SP_MediaSeekForward, "run_to_cursor",
     "Continue to the line with the cursor"),
    ("act_pause", "&Pause", "F6", SP.SP_MediaPause, "pause", "Pause the running lesson at its next line"),
    ("act_stop", "S&top", "Shift+F5", SP.SP_MediaStop, "stop", "End the run now"),
    ("act_restart", "&Restart", "Ctrl+Shift+F5", SP.SP_BrowserReload, "restart",
     "Run the lesson again from the start in a fresh interpreter"),
    ("act_step_back", "Step &Back", "Shift+F10", SP.SP_MediaSeekBackward, "step_back",
     "Show the pause before this one, as it was (nothing re-runs)"),
    ("act_go_live", "Go to &Live", "Ctrl+Shift+F10", SP.SP_MediaSkipForward, "go_live",
     "Leave the past and show the live pause again"),
    ("act_record", "Record to &End", "Ctrl+F5", SP.SP_DialogApplyButton, "record_to_end",
     "Step through every line to the end (or the step limit), recording each pause, then browse them "
     "on the timeline"),
    ("act_ask_predictions", "Ask &Predictions", None, None, "toggle_predictions",
     "Before a line that ends with '# predict:' runs, ask what it will compute (the run stops there)"),
    ("act_toggle_bp", "Toggle &Breakpoint", "F9", SP.SP_DialogNoButton, "toggle_breakpoint",
     "Set or clear a breakpoint on this line"),
    ("act_open", "&Open…", "Ctrl+O", SP.SP_DialogOpenButton, "open_dialog", "Open a Python file"),
    ("act_save", "&Save", "Ctrl+S", SP.SP_DialogSaveButton, "save",
     "Save your changes (a bundled lesson is saved as your own copy)"),
    ("act_revert", "Revert to &Original", None, None, "revert_to_original",
     "Throw away your copy of this lesson and show the original"),
)

#: The run actions, in menu and toolbar order.
RUN_ACTIONS = ("act_start", "act_run_to_end", "act_step_over", "act_step_into", "act_step_expression", "act_step_out",
               "act_run_to_cursor", "act_pause",
               "act_stop", "act_restart")
HISTORY_ACTIONS = ("act_step_back", "act_go_live", "act_record")


def make_action(parent: QWidget, text: str, shortcut: str | None, icon: QStyle.StandardPixmap | None,
                slot: Callable[[], object], tip: str) -> QAction:
    """An action whose tooltip names its shortcut, triggered anywhere in the window."""
    action = QAction(text, parent)
    if shortcut:
        action.setShortcut(QKeySequence(shortcut))
        action.setShortcutContext(Qt.ShortcutContext.WindowShortcut)
    if icon is not None:
        action.setIcon(parent.style().standardIcon(icon))
    action.setToolTip(f"{tip} ({shortcut})" if shortcut else tip)
    action.setStatusTip(tip)
    action.triggered.connect(slot)
    return action


def add_actions(window: QWidget) -> None:
    """Create every action of :data:`ACTIONS` as an attribute of ``window``, bound to its method."""
    for attribute, text, shortcut, icon, method, tip in ACTIONS:
        setattr(window, attribute, make_action(window, text, shortcut, icon, getattr(window, method), tip))
