"""The main window's actions (text, VS Code shortcut, icon, a tooltip that names the key), menus and toolbar."""

from __future__ import annotations

import re
from collections.abc import Callable
from operator import attrgetter

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QMainWindow, QMenu, QMessageBox, QStyle, QToolBar, QWidget

from app.i18n import N_, tr
from widgets.text_size import SIZES
from widgets.theme import standard_icon
from widgets.window_layout import DOCK_TITLES, GO_TO_KEYS

SP = QStyle.StandardPixmap

#: attribute, text, shortcut, icon, the window's method that runs it (a dotted path from the window), what it
#: does (English msgids).
ACTIONS: tuple[tuple[str, str, str | None, QStyle.StandardPixmap | None, str, str], ...] = (
    ("act_start", N_("&Start / Continue"), "F5", SP.SP_MediaPlay, "commands.start_or_continue",
     N_("Start the lesson, pausing at its first line; when paused, continue to the next breakpoint")),
    ("act_run_to_end", N_("Run to &End"), "F8", SP.SP_ArrowRight, "commands.run_to_end",
     N_("Run the lesson without pausing at its first line: it stops only at a breakpoint or the end")),
    ("act_step_over", N_("Step &Over"), "F10", SP.SP_ArrowForward, "commands.step_over",
     N_("Run this line, then pause on the next one in this function")),
    ("act_step_into", N_("Step &Into"), "F11", SP.SP_ArrowDown, "commands.step_into",
     N_("Run to the next line, entering functions it calls")),
    ("act_step_expression", N_("Step Into E&xpression"), "Alt+F11", SP.SP_ArrowRight, "commands.step_expression",
     N_("Run this line one PyTorch operation at a time: pause after each, showing its result and the nodes "
        "it made (F10 finishes the line)")),
    ("act_step_out", N_("Step O&ut"), "Shift+F11", SP.SP_ArrowUp, "commands.step_out",
     N_("Run until this function returns")),
    ("act_run_to_cursor", N_("Run to &Cursor"), "Ctrl+F10", SP.SP_MediaSeekForward, "commands.run_to_cursor",
     N_("Continue to the line with the cursor")),
    ("act_pause", N_("&Pause"), "F6", SP.SP_MediaPause, "commands.pause",
     N_("Pause the running lesson at its next line")),
    ("act_stop", N_("S&top"), "Shift+F5", SP.SP_MediaStop, "commands.stop", N_("End the run now")),
    ("act_restart", N_("&Restart"), "Ctrl+Shift+F5", SP.SP_BrowserReload, "commands.restart",
     N_("Run the lesson again from the start in a fresh interpreter")),
    ("act_step_back", N_("Step &Back"), "Shift+F10", SP.SP_MediaSeekBackward, "commands.step_back",
     N_("Show the pause before this one, as it was (nothing re-runs)")),
    ("act_go_live", N_("Go to &Live"), "Ctrl+Shift+F10", SP.SP_MediaSkipForward, "commands.go_live",
     N_("Leave the past and show the live pause again")),
    ("act_record", N_("Record to &End"), "Ctrl+F5", SP.SP_DialogApplyButton, "commands.record_to_end",
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
#: The menus and their own entries (English msgids), set again by :meth:`MainWindow.retranslate`.
MENU_TITLES = {"file": N_("&File"), "recent": N_("Open &Recent"), "run": N_("&Run"), "view": N_("&View"),
               "language": N_("&Language"), "help": N_("&Help"), "go_to": N_("&Go To Panel"),
               "text_size": N_("&Text Size")}
#: View > Go To's name for the code (the other panels are named by their docks' titles).
CODE_TITLE = N_("Code")
MENU_ACTIONS = {"quit": N_("&Quit"), "budget": N_("History &Budget…"), "fold": N_("&Fold All Notes"),
                "unfold": N_("&Unfold All Notes"), "reset": N_("&Reset Layout"), "about": N_("&About GradStep"),
                "high_contrast": N_("&High Contrast")}


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
        action.setIcon(standard_icon(parent, icon))
    set_action_texts(action, text, shortcut, tip)
    action.triggered.connect(slot)
    return action


def add_actions(window: QWidget) -> None:
    """Create every action of :data:`ACTIONS` as an attribute of ``window``, bound to its method."""
    for attribute, text, shortcut, icon, method, tip in ACTIONS:
        setattr(window, attribute, make_action(window, text, shortcut, icon, attrgetter(method)(window), tip))


def retranslate_actions(window: QWidget) -> None:
    """Set the texts of the actions :func:`add_actions` made again, in the current language."""
    for attribute, text, shortcut, _icon, _method, tip in ACTIONS:
        set_action_texts(getattr(window, attribute), text, shortcut, tip)


def build_menus(window: QMainWindow) -> None:
    """The window's menus and its Run toolbar, from its actions (texts set by :func:`retranslate_menus`)."""
    bar = window.menuBar()
    window.menus = {}
    window.menu_actions = {}
    file_menu = window.menus["file"] = bar.addMenu("")
    file_menu.addAction(window.act_open)
    window.recent_menu = window.menus["recent"] = file_menu.addMenu("")
    file_menu.addAction(window.act_save)
    file_menu.addAction(window.act_revert)
    file_menu.addSeparator()
    window.menu_actions["quit"] = file_menu.addAction("", QKeySequence.StandardKey.Quit, window.close)
    run_menu = window.menus["run"] = bar.addMenu("")
    for action in window.run_actions:
        run_menu.addAction(action)
    run_menu.addSeparator()
    for action in window.history_actions:
        run_menu.addAction(action)
    window.menu_actions["budget"] = run_menu.addAction("", window.ask_history_budget)
    run_menu.addSeparator()
    run_menu.addAction(window.act_ask_predictions)
    run_menu.addAction(window.act_toggle_bp)
    _build_view_menu(window, bar.addMenu(""))
    help_menu = window.menus["help"] = bar.addMenu("")
    window.menu_actions["about"] = help_menu.addAction("", lambda: show_about(window))
    window.toolbar = toolbar = QToolBar(window)
    toolbar.setObjectName("run_toolbar")
    toolbar.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
    for action in window.run_actions:
        if action is not window.act_run_to_end:
            toolbar.addAction(action)
    toolbar.addSeparator()
    toolbar.addAction(window.act_step_back)
    toolbar.addAction(window.act_run_to_end)  # last: the first button steps, this one skips the lesson
    window.addToolBar(toolbar)
    retranslate_menus(window)


def _build_view_menu(window: QMainWindow, menu: QMenu) -> None:
    """View: each dock's toggle, the language, the notes' folding, the layout, the text size, high contrast,
    Go To Panel."""
    window.view_menu = window.menus["view"] = menu
    for dock in window.docks.values():
        window.view_menu.addAction(dock.toggleViewAction())
    window.view_menu.addSeparator()
    language_menu = window.menus["language"] = window.view_menu.addMenu("")
    window.language_actions = {}
    for code, label in (("en", "English"), ("zh", "简体中文")):  # each language named in itself
        action = language_menu.addAction(label, lambda c=code: window.set_language(c))
        action.setCheckable(True)
        action.setChecked(code == window.language)
        window.language_actions[code] = action
    window.menu_actions["fold"] = window.view_menu.addAction("", lambda: window.code_view.fold_notes(True))
    window.menu_actions["unfold"] = window.view_menu.addAction("", lambda: window.code_view.fold_notes(False))
    window.menu_actions["reset"] = window.view_menu.addAction("", window.reset_layout)
    sizes = window.menus["text_size"] = window.view_menu.addMenu("")
    window.text_size_actions = {}
    for percent in SIZES:
        action = sizes.addAction(f"{percent} %", lambda p=percent: window.set_text_size(p))
        action.setCheckable(True)
        window.text_size_actions[percent] = action
    contrast = window.menu_actions["high_contrast"] = window.view_menu.addAction("")
    contrast.setObjectName("high_contrast")
    contrast.setCheckable(True)
    contrast.toggled.connect(window.set_high_contrast)
    go_to = window.menus["go_to"] = window.view_menu.addMenu("")
    window.go_to_actions = {}
    for name, key in GO_TO_KEYS.items():
        action = go_to.addAction("", lambda n=name: window.window_layout.go_to(n))
        action.setShortcut(QKeySequence(key))
        action.setShortcutContext(Qt.ShortcutContext.WindowShortcut)
        window.go_to_actions[name] = action


def restyle_icons(window: QMainWindow) -> None:
    """The actions' icons in the colours of the theme in use (View > High Contrast)."""
    for attribute, _text, _shortcut, icon, _method, _tip in ACTIONS:
        if icon is not None:
            getattr(window, attribute).setIcon(standard_icon(window, icon))


def retranslate_menus(window: QMainWindow) -> None:
    """Set the menus' and the toolbar's own texts again, in the current language."""
    for name, action in window.go_to_actions.items():
        action.setText(tr(DOCK_TITLES.get(name, CODE_TITLE)))
    for name, menu in window.menus.items():
        menu.setTitle(tr(MENU_TITLES[name]))
    for name, action in window.menu_actions.items():
        action.setText(tr(MENU_ACTIONS[name]))
    window.toolbar.setWindowTitle(tr("Run"))
    window.toolbar.toggleViewAction().setText(tr("Run toolbar"))


def show_about(window: QMainWindow) -> None:
    """Help > About."""
    QMessageBox.about(window, tr("About GradStep"),
                      tr("GradStep steps through PyTorch lessons line by line so you can watch autograd "
                         "build its graph and compute gradients."))
