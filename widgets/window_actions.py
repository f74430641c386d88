"""The main window's actions: their text, VS Code shortcut, icon and the tooltip that names the key."""

from __future__ import annotations

import re
from collections.abc import Callable

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QStyle, QWidget

from app.i18n import N_, tr

SP = QStyle.StandardPixmap

#: attribute, text, shortcut, icon, the window's method that runs it, what it does (English msgids).
ACTIONS: tuple[tuple[str, str, str | None, QStyle.StandardPixmap | None, str, str], ...] = (
    ("act_start", N_("&Start / Continue"), "F5", SP.SP_MediaPlay, "start_or_continue",
     N_("Start the lesson, pausing at its first line; when paused, continue to the next breakpoint")),
    ("act_run_to_end", N_("Run to &End"), "F8", SP.SP_ArrowRight, "run_to_end",
     N_("Run the lesson without pausing at its first line: it stops only at a breakpoint or the end")),
    ("act_step_over", N_("Step &Over"), "F10", SP.SP_ArrowForward, "step_over",
     N_("Run this line, then pause on the next one in this function")),
    ("act_step_into", N_("Step &Into"), "F11", SP.SP_ArrowDown, "step_into",
     N_("Run to the next line, entering functions it calls")),
    ("act_step_expression", N_("Step Into E&xpression"), "Alt+F11", SP.SP_ArrowRight, "step_expression",
     N_("Run this line one PyTorch operation at a time: pause after each, showing its result and the nodes "
        "it made (F10 finishes the line)")),
    ("act_step_out", N_("Step O&ut"), "Shift+F11", SP.SP_ArrowUp, "step_out", N_("Run until this function returns")),
    ("act_run_to_cursor", N_("Run to &Cursor"), "Ctrl+F10", SP.SP_MediaSeekForward, "run_to_cursor",
     N_("Continue to the line with the cursor")),
    ("act_pause", N_("&Pause"), "F6", SP.SP_MediaPause, "pause", N_("Pause the running lesson at its next line")),
    ("act_stop", N_("S&top"), "Shift+F5", SP.SP_MediaStop, "stop", N_("End the run now")),
    ("act_restart", N_("&Restart"), "Ctrl+Shift+F5", SP.SP_BrowserReload, "restart",
     N_("Run the lesson again from the start in a fresh interpreter")),
    ("act_step_back", N_("Step &Back"), "Shift+F10", SP.SP_MediaSeekBackward, "step_back",
     N_("Show the pause before this one, as it was (nothing re-runs)")),
    ("act_go_live", N_("Go to &Live"), "Ctrl+Shift+F10", SP.SP_MediaSkipForward, "go_live",
     N_("Leave the past and show the live pause again")),
    ("act_record", N_("Record to &End"), "Ctrl+F5", SP.SP_DialogApplyButton, "record_to_end",
     N_("Step through every line to the end (or the step limit), recording each pause, then browse them "
        "on the timeline")),
    ("act_ask_predictions", N_("Ask &Predictions"), None, None, "toggle_predictions",
     N_("Before a line that ends with '# predict:' runs, ask what it will compute (the run stops there)")),
    ("act_toggle_bp", N_("Toggle &Breakpoint"), "F9", SP.SP_DialogNoButton, "toggle_breakpoint",
     N_("Set or clear a breakpoint on this line")),
    ("act_open", N_("&Open…"), "Ctrl+O", SP.SP_DialogOpenButton, "open_dialog", N_("Open a Python file")),
    ("act_save", N_("&Save"), "Ctrl+S", SP.SP_DialogSaveButton, "save",
     N_("Save your changes (a bundled lesson is saved as your own copy)")),
    ("act_revert", N_("Revert to &Original"), None, None, "revert_to_original",
     N_("Throw away your copy of this lesson and show the original")),
)

#: The run actions, in menu and toolbar order.
RUN_ACTIONS = ("act_start", "act_run_to_end", "act_step_over", "act_step_into", "act_step_expression", "act_step_out",
               "act_run_to_cursor", "act_pause",
               "act_stop", "act_restart")
HISTORY_ACTIONS = ("act_step_back", "act_go_live", "act_record")


def icon_text(text: str) -> str:
    """A toolbar button's text: the action's without its menu accelerator (运行到结束, not 运行到结束(E))."""
    return re.sub(r"\(&\w\)$|&(?=\w)", "", text)


def set_action_texts(action: QAction, text: str, shortcut: str | None, tip: str) -> None:
    """Give ``action`` its text and a tooltip (and status tip) that names its shortcut, in the current language."""
    action.setText(tr(text))
    action.setIconText(icon_text(action.text()))
    tip = tr(tip)
    action.setToolTip(f"{tip} ({shortcut})" if shortcut else tip)
    action.setStatusTip(tip)


def make_action(parent: QWidget, text: str, shortcut: str | None, icon: QStyle.StandardPixmap | None,
                slot: Callable[[], object], tip: str) -> QAction:
    """An action whose tooltip names its shortcut, triggered anywhere in the window."""
    action = QAction(parent)
    if shortcut:
        action.setShortcut(QKeySequence(shortcut))
        action.setShortcutContext(Qt.ShortcutContext.WindowShortcut)
    if icon is not None:
        action.setIcon(parent.style().standardIcon(icon))
    set_action_texts(action, text, shortcut, tip)
    action.triggered.connect(slot)
    return action


def add_actions(window: QWidget) -> None:
    """Create every action of :data:`ACTIONS` as an attribute of ``window``, bound to its method."""
    for attribute, text, shortcut, icon, method, tip in ACTIONS:
        setattr(window, attribute, make_action(window, text, shortcut, icon, getattr(window, method), tip))


def retranslate_actions(window: QWidget) -> None:
    """Set the texts of the actions :func:`add_actions` made again, in the current language."""
    for attribute, text, shortcut, _icon, _method, tip in ACTIONS:
        set_action_texts(getattr(window, attribute), text, shortcut, tip)
