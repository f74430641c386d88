"""GradStep's main window: the code and the autograd graph side by side, every other panel a dock around them.

Features
--------
* The teaching layout: the code and the graph side by side, the graph's column with the
  larger share (and every pixel of extra width), never less than a third of the window after a
  resize or a layout restored from another size; lessons and notes tabbed on the left; the
  variables (tabbed with backward, inspector, call stack) in a strip under the code; the output
  (with watch) under the graph, as wide as it, so a printed line is read whole.
  View > Fold / Unfold All Notes for the code view's notes cells.
* Docks with stable object names (lessons, notes, variables, inspector, console, stack,
  watch, graph, backward), each toggled from the View menu; layout and geometry saved on
  close and restored on start; View > Reset Layout; a minimum size that crushes no panel.
* Run menu and toolbar with VS Code's shortcuts; actions that make no sense in the
  current state are disabled, and the status bar says why.
* Status bar: run state, step count and the grad mode of the current line.
* Edits are never lost: bundled lessons are edited as copies in the user's data folder,
  edits are autosaved, and closing asks before discarding a user file's changes.

The window observes the engine through :class:`~widgets.session_bridge.SessionBridge` and
never waits on the lesson process.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import QByteArray, QLocale, QLockFile, QStandardPaths, Qt
from PySide6.QtGui import QAction, QCloseEvent, QDragEnterEvent, QDropEvent, QKeySequence, QResizeEvent, QShowEvent
from PySide6.QtWidgets import (
    QDockWidget,
    QFileDialog,
    QInputDialog,
    QMainWindow,
    QMessageBox,
    QTabBar,
    QToolBar,
    QVBoxLayout,
    QWidget,
)

from app import i18n
from app import messages as m
from app.coach import Coach
from app.graph_model import GraphModel
from app.i18n import N_, tr
from app.lesson_format import LessonFormatError, Prediction, list_lessons, parse_lesson
from app.progress import Progress
from app.run import Run
from app.session import ENDED, IDLE, PAUSED, RUNNING, LessonFileError, Session, read_lesson
from app.transcript import Transcript
from app.workspace import LESSONS_DIR, Workspace
from widgets import settings
from widgets.autosave_timer import AutosaveTimer
from widgets.backward_panel import BackwardPanel
from widgets.call_stack_view import CallStackView
from widgets.code_view import CodeView
from widgets.console_view import ConsoleView
from widgets.graph_groups import same_file
from widgets.graph_view import GraphView
from widgets.lesson_browser import LessonBrowser
from widgets.notes_view import NotesView
from widgets.prediction_bar import PredictionBar, check_text, verdict_text
from widgets.qt_translations import use_qt_language
from widgets.run_status_bar import RunStatusBar, end_text
from widgets.session_bridge import SessionBridge
from widgets.tensor_inspector import TensorInspector
from widgets.time_travel import TimeTravel
from widgets.timeline_bar import TimelineBar
from widgets.variables_view import VariablesView
from widgets.watch_view import WatchView
from widgets.window_actions import HISTORY_ACTIONS, RUN_ACTIONS, add_actions, icon_text, retranslate_actions

#: Edits are kept this long after the last keystroke...
AUTOSAVE_MS = 1500
#: ...and at least this often while typing goes on, so a crash loses at most these last seconds.
AUTOSAVE_MAX_MS = 4000
#: Shares of the window in the default layout: the graph's column (the output under the graph
#: is as wide), the lessons/notes column, and the height of the bottom strip and of the output.
GRAPH_SHARE, LESSONS_SHARE, BOTTOM_SHARE = 0.41, 0.15, 0.32
MIN_BOTTOM_HEIGHT = 220
#: The output under the graph: a few lines tall, so the drawing keeps most of the column's height.
OUTPUT_SHARE, MIN_OUTPUT_HEIGHT = 0.19, 140
#: After a resize or a layout restored at another size, the columns narrower than these shares of the
#: window (or the lessons column narrower than MIN_LESSONS_WIDTH) get the default layout's widths back.
MIN_GRAPH_SHARE, MIN_CODE_SHARE = 0.36, 0.33
#: Wide enough for the "Lessons" and "Lesson notes" tabs side by side.
MIN_LESSONS_WIDTH = 190
#: Below this the panels crush: code and graph lose their lines, the variables their grad columns.
MIN_WIDTH, MIN_HEIGHT = 1120, 700
#: Bumped when the default layout changes, so a layout saved by an older version is not restored.
LAYOUT_VERSION = 3
#: What the status bar says while a prediction waits for its answer (a step would pass it unanswered).
QUESTION_WAITS = N_("Predict first: answer the question above (Enter), or skip it (Esc); the line has not run yet")
#: Why a file is read-only in this window (typing shows it; an English msgid).
ELSEWHERE_NOTE = N_("Read-only here: this file is open in another GradStep window, which keeps its edits")
#: Record to End stops after this many steps, so an endless loop keeps a partial recording.
RECORD_LIMIT = 100_000
#: The docks' titles (English msgids), by object name.
DOCK_TITLES = {
    "lessons": N_("Lessons"), "notes": N_("Lesson notes"), "graph": N_("Autograd graph"),
    "variables": N_("Variables"), "backward": N_("Backward"), "console": N_("Output"),
    "inspector": N_("Tensor inspector"), "stack": N_("Call stack"), "watch": N_("Watch"),
}
#: The menus and their own entries (English msgids), set again by :meth:`MainWindow.retranslate`.
MENU_TITLES = {"file": N_("&File"), "recent": N_("Open &Recent"), "run": N_("&Run"), "view": N_("&View"),
               "language": N_("&Language"), "help": N_("&Help")}
MENU_ACTIONS = {"quit": N_("&Quit"), "budget": N_("History &Budget…"), "fold": N_("&Fold All Notes"),
                "unfold": N_("&Unfold All Notes"), "reset": N_("&Reset Layout"), "about": N_("&About GradStep")}


def made_nodes(snapshot: dict[str, Any]) -> list[int]:
    """The ids of the graph nodes the step that led to ``snapshot`` made (outlined as new when it is shown)."""
    return [int(node["id"]) for node in (snapshot.get("graph") or {}).get("added", [])]


def grad_leaves(variables: dict[str, Any]) -> list[str]:
    """The names of a snapshot's tensors that require grad and have no ``grad_fn`` (leaves).

    A module's parameters count, by their dotted names (``model.weight``).
    """
    names = []
    for name, summary in variables.items():
        if summary.get("module"):
            names += [f"{name}.{parameter['name']}" for parameter in summary.get("parameters") or ()
                      if parameter.get("requires_grad")]
        elif (summary.get("type") in ("Tensor", "Parameter") and summary.get("requires_grad")
              and not summary.get("grad_fn")):
            names.append(name)
    return names


def data_dir() -> Path:
    """The user's GradStep data folder (edited lessons, autosaves)."""
    base = QStandardPaths.writableLocation(QStandardPaths.StandardLocation.AppDataLocation)
    return Path(base or Path.home() / ".gradstep")


def _enable(action: QAction, on: bool) -> None:
    """``action.setEnabled(on)``, skipped when it already is."""
    if action.isEnabled() != on:
        action.setEnabled(on)


class MainWindow(QMainWindow):
    """The GradStep window.

    Parameters
    ----------
    session
        The engine session the window drives; the window closes it when it closes.
    workspace
        Where edits of lessons go.
    lessons_dir
        The folder of the lesson browser.
    """

    def __init__(self, session: Session, workspace: Workspace | None = None,
                 lessons_dir: str | os.PathLike = LESSONS_DIR) -> None:
        super().__init__()
        self.session = session
        self.workspace = workspace or Workspace(data_dir())
        self.lessons_dir = Path(lessons_dir)
        self.bridge = SessionBridge(session, self)
        self.path: Path | None = None
        self._revert_basis: tuple[Path | None, bool] = (None, False)  # see _revertible
        self.language = settings.get("language") or i18n.system_language(QLocale.system().name())
        settings.put("language", self.language)  # the system's choice on a first start, kept from now on
        i18n.set_language(self.language)
        use_qt_language(self.language)
        self._pending: dict[int, Callable[[dict[str, Any]], None]] = {}
        self.run: Run | None = None
        """The run on screen (the current one, or the last one of this lesson); None before the first."""
        self.progress = Progress(self.workspace.data_dir / "progress.json")
        self.coach: Coach | None = None
        """The predictions and exercise checks of the current run, when its lesson has any."""
        self._inspected: str | None = None
        self._edit_lock: tuple[Path, QLockFile] | None = None  # the lock file of the file this window edits
        self.edited_elsewhere = False
        """Whether another window holds the open file's edit lock: then it is read-only here, never autosaved."""
        self._sized = False
        self._record_on_first_pause = False
        self._stepped = False  # whether the run was last resumed by a step (see _on_resumed)
        self.setWindowTitle("GradStep")
        self.setAcceptDrops(True)
        self.setMinimumSize(MIN_WIDTH, MIN_HEIGHT)
        self.resize(1280, 800)

        self.code_view = CodeView(self)
        self.timeline = TimelineBar(self)
        self.prediction_bar = PredictionBar(self)
        central = QWidget(self)
        column = QVBoxLayout(central)
        column.setContentsMargins(0, 0, 0, 0)
        column.setSpacing(0)
        column.addWidget(self.prediction_bar)
        column.addWidget(self.code_view, 1)
        column.addWidget(self.timeline)
        self.setCentralWidget(central)
        self.time_travel = TimeTravel(self.timeline, lambda: self.session.state == RUNNING, self)
        self._build_docks()
        self._build_actions()
        self._build_menus()
        self._build_status_bar()
        self._autosave = AutosaveTimer(self, AUTOSAVE_MS, AUTOSAVE_MAX_MS)
        self._autosave.due.connect(self._on_autosave_due)
        self._connect()
        self._default_state = self.saveState(LAYOUT_VERSION)
        self._restore_layout()
        self.lesson_browser.set_lessons(list_lessons(self.lessons_dir), self.language)
        self._show_progress()
        self.watch_view.set_expressions(settings.get("watch/expressions"))
        self._update_actions()

    # ---- construction -------------------------------------------------------------------

    def _dock(self, name: str, title: str, widget: QWidget, area: Qt.DockWidgetArea) -> QDockWidget:
        dock = QDockWidget(tr(title), self)
        dock.setObjectName(name)
        dock.setWidget(widget)
        self.addDockWidget(area, dock)
        return dock

    def _build_docks(self) -> None:
        left, right, bottom = (Qt.DockWidgetArea.LeftDockWidgetArea, Qt.DockWidgetArea.RightDockWidgetArea,
                               Qt.DockWidgetArea.BottomDockWidgetArea)
        # The graph and the output under it take the right side, top to bottom; the bottom strip runs
        # under the code. The output shares the graph's width: in the strip it got a sixth of the window.
        self.setCorner(Qt.Corner.BottomRightCorner, right)
        self.setCorner(Qt.Corner.TopRightCorner, right)
        self.setCorner(Qt.Corner.BottomLeftCorner, bottom)
        self.lesson_browser = LessonBrowser(self)
        self.notes_view = NotesView(self)
        self.variables_view = VariablesView(self)
        self.inspector = TensorInspector(self)
        self.console = ConsoleView(settings.get("console/max_lines"), self)
        self.stack_view = CallStackView(self)
        self.watch_view = WatchView(self)
        self.graph_model = GraphModel()
        self.graph_view = GraphView(self.graph_model, self)
        self.backward_panel = BackwardPanel(self, self.progress, lambda: self.path.stem if self.path else None)
        self.docks = {name: self._dock(name, DOCK_TITLES[name], widget, area) for name, widget, area in (
            ("lessons", self.lesson_browser, left),
            ("notes", self.notes_view, left),
            ("graph", self.graph_view, right),
            ("variables", self.variables_view, bottom),
            ("backward", self.backward_panel, bottom),
            ("console", self.console, right),
            ("inspector", self.inspector, bottom),
            ("stack", self.stack_view, bottom),
            ("watch", self.watch_view, right),
        )}
        docks = self.docks
        self.tabifyDockWidget(docks["lessons"], docks["notes"])
        self.splitDockWidget(docks["graph"], docks["console"], Qt.Orientation.Vertical)
        self.tabifyDockWidget(docks["variables"], docks["backward"])
        self.tabifyDockWidget(docks["variables"], docks["inspector"])
        self.tabifyDockWidget(docks["variables"], docks["stack"])
        self.tabifyDockWidget(docks["console"], docks["watch"])
        for name in ("notes", "variables", "console"):
            docks[name].raise_()

    def _size_docks(self) -> None:
        """The teaching layout's proportions: code and graph side by side, the graph the larger share."""
        width = self.width()
        docks = self.docks
        self.resizeDocks([docks["lessons"], docks["graph"]],
                         [max(int(width * LESSONS_SHARE), MIN_LESSONS_WIDTH), int(width * GRAPH_SHARE)],
                         Qt.Orientation.Horizontal)
        self.resizeDocks([docks["variables"], docks["console"]], self._strip_heights(), Qt.Orientation.Vertical)
        self.layout().activate()  # now, not at the next event loop pass: a resize soon after reads these sizes

    def _build_actions(self) -> None:
        add_actions(self)
        self.run_actions = [getattr(self, name) for name in RUN_ACTIONS]
        self.history_actions = [getattr(self, name) for name in HISTORY_ACTIONS]
        self.act_ask_predictions.setCheckable(True)
        self.act_ask_predictions.setChecked(settings.get("course/ask_predictions"))
        self.timeline.back_button.setDefaultAction(self.act_step_back)

    def _build_menus(self) -> None:
        bar = self.menuBar()
        self.menus = {}
        self.menu_actions = {}
        file_menu = self.menus["file"] = bar.addMenu("")
        file_menu.addAction(self.act_open)
        self.recent_menu = self.menus["recent"] = file_menu.addMenu("")
        file_menu.addAction(self.act_save)
        file_menu.addAction(self.act_revert)
        file_menu.addSeparator()
        self.menu_actions["quit"] = file_menu.addAction("", QKeySequence.StandardKey.Quit, self.close)
        run_menu = self.menus["run"] = bar.addMenu("")
        for action in self.run_actions:
            run_menu.addAction(action)
        run_menu.addSeparator()
        for action in self.history_actions:
            run_menu.addAction(action)
        self.menu_actions["budget"] = run_menu.addAction("", self._ask_history_budget)
        run_menu.addSeparator()
        run_menu.addAction(self.act_ask_predictions)
        run_menu.addAction(self.act_toggle_bp)
        self.view_menu = self.menus["view"] = bar.addMenu("")
        for dock in self.docks.values():
            self.view_menu.addAction(dock.toggleViewAction())
        self.view_menu.addSeparator()
        language_menu = self.menus["language"] = self.view_menu.addMenu("")
        self.language_actions = {}
        for code, label in (("en", "English"), ("zh", "简体中文")):  # each language named in itself
            action = language_menu.addAction(label, lambda c=code: self.set_language(c))
            action.setCheckable(True)
            action.setChecked(code == self.language)
            self.language_actions[code] = action
        self.menu_actions["fold"] = self.view_menu.addAction("", lambda: self.code_view.fold_notes(True))
        self.menu_actions["unfold"] = self.view_menu.addAction("", lambda: self.code_view.fold_notes(False))
        self.menu_actions["reset"] = self.view_menu.addAction("", self.reset_layout)
        help_menu = self.menus["help"] = bar.addMenu("")
        self.menu_actions["about"] = help_menu.addAction("", self._about)
        self.toolbar = toolbar = QToolBar(self)
        toolbar.setObjectName("run_toolbar")
        toolbar.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        for action in self.run_actions:
            if action is not self.act_run_to_end:
                toolbar.addAction(action)
        toolbar.addSeparator()
        toolbar.addAction(self.act_step_back)
        toolbar.addAction(self.act_run_to_end)  # last: the first button steps, this one skips the lesson
        self.addToolBar(toolbar)
        self._retranslate_menus()
        self._fill_recent_menu()

    def _retranslate_menus(self) -> None:
        for name, menu in self.menus.items():
            menu.setTitle(tr(MENU_TITLES[name]))
        for name, action in self.menu_actions.items():
            action.setText(tr(MENU_ACTIONS[name]))
        self.toolbar.setWindowTitle(tr("Run"))
        self.toolbar.toggleViewAction().setText(tr("Run toolbar"))

    def _build_status_bar(self) -> None:
        self.status = RunStatusBar(self)
        self.setStatusBar(self.status)
        self.state_label, self.step_label, self.grad_label = (self.status.state_label, self.status.step_label,
                                                               self.status.grad_label)

    def _connect(self) -> None:
        self.bridge.started.connect(self._on_bridge_started)
        self.bridge.paused.connect(self._on_bridge_paused)
        self.bridge.output.connect(self._on_bridge_output)
        self.bridge.replied.connect(self._on_bridge_replied)
        self.bridge.ended.connect(self._on_bridge_ended)
        self.bridge.noticed.connect(self._on_bridge_noticed)
        self.code_view.breakpoints_changed.connect(self._on_code_view_breakpoints_changed)
        self.code_view.source_edited.connect(self._on_code_view_source_edited)
        self.lesson_browser.lesson_activated.connect(self._on_lesson_browser_lesson_activated)
        self.stack_view.frame_selected.connect(self._on_stack_view_frame_selected)
        self.variables_view.tensor_selected.connect(self._on_variables_view_tensor_selected)
        self.inspector.values_requested.connect(self._on_inspector_values_requested)
        self.console.evaluate_requested.connect(self._on_console_evaluate_requested)
        self.console.line_activated.connect(self.code_view.go_to_line)
        self.watch_view.expressions_changed.connect(self._on_watch_view_expressions_changed)
        self.variables_view.variable_hovered.connect(self._on_variables_view_variable_hovered)
        self.graph_view.node_hovered.connect(self.variables_view.model.mark_variables)
        self.graph_view.origin_selected.connect(self._on_graph_view_origin_selected)
        self.graph_view.span_selected.connect(self._on_graph_view_span_selected)
        self.code_view.position_hovered.connect(self._on_code_view_position_hovered)
        self.backward_panel.preview_requested.connect(self._on_backward_panel_preview_requested)
        self.backward_panel.backward_requested.connect(self._on_backward_panel_backward_requested)
        self.backward_panel.grad_requested.connect(self._on_backward_panel_grad_requested)
        self.backward_panel.active_node_changed.connect(self._on_backward_panel_active_node_changed)
        self.backward_panel.lesson_requested.connect(self._on_backward_panel_lesson_requested)
        self.backward_panel.drill_judged.connect(lambda _verdict: self._show_progress())
        self.prediction_bar.answered.connect(self._on_prediction_bar_answered)
        self.prediction_bar.skipped.connect(self._on_prediction_bar_skipped)
        self.lesson_browser.progress_reset_requested.connect(self._on_lesson_browser_progress_reset_requested)

    # ---- files --------------------------------------------------------------------------

    def open_file(self, path: str | os.PathLike) -> bool:
        """Show ``path`` (a bundled lesson's own copy if the learner edited it); False if unusable."""
        if not self._may_discard_changes():
            return False
        shown = self.workspace.open_path(path)
        try:
            text = read_lesson(str(shown))
        except LessonFileError as exc:
            self._transcript().add_message(str(exc), "error")
            self.state_label.setText(str(exc))
            return False
        if self.session.state in (RUNNING, PAUSED):
            if not self._may_stop_for(shown):
                return False
            self.stop()
        if shown != self.path:  # another lesson: nothing of the last run stays on screen
            self._set_run(None)
            self.backward_panel.forget_expressions()
        self.path = shown
        self.code_view.set_source(text, str(shown))
        self.code_view.set_breakpoints(self.session.breakpoints.get(str(shown), {}))
        self.notes_view.set_source(text)
        self.lesson_browser.select_path(str(shown))
        self._clear_pause_views()
        self._lock_edits(shown)
        unsaved = None if self.edited_elsewhere else self.workspace.unsaved(shown, text)  # else the other's
        if unsaved is not None:
            self.code_view.set_source(unsaved, str(shown))
            self.code_view.document().setModified(True)
        settings.put("last_file", str(path))
        settings.add_recent_file(str(path))
        self._fill_recent_menu()
        self._update_title()
        self._update_actions()
        if unsaved is not None:
            self.state_label.setText(tr("Recovered unsaved changes to {name} from the last session", name=shown.name))
        if self.edited_elsewhere:
            self.state_label.setText(tr(ELSEWHERE_NOTE))
        return True

    def _lock_edits(self, path: Path) -> None:
        """Take the edit lock of ``path``, giving back the last file's: a file whose lock another window
        holds is read-only here, so neither window overwrites the other's edits or autosaves."""
        lock_path = self.workspace.lock_path(path)
        if self._edit_lock is None or self._edit_lock[0] != lock_path:
            self._release_edit_lock()
            lock_path.parent.mkdir(parents=True, exist_ok=True)
            lock = QLockFile(str(lock_path))
            lock.setStaleLockTime(0)  # held as long as the window is open; a crashed window's lock is stale by its PID
            if lock.tryLock(0):
                self._edit_lock = (lock_path, lock)
        self.edited_elsewhere = self._edit_lock is None
        self._allow_editing()

    def _release_edit_lock(self) -> None:
        if self._edit_lock is not None:
            self._edit_lock[1].unlock()
            self._edit_lock = None

    def _allow_editing(self) -> None:
        """The code view editable (no run holds it), unless another window edits the file."""
        if self.edited_elsewhere:
            self.code_view.set_read_only(True, ELSEWHERE_NOTE)
        else:
            self.code_view.set_read_only(False)

    def open_dialog(self) -> QFileDialog:
        """File > Open: a file dialog, Qt's own texts in the interface's language too; the file chosen opens."""
        start = str(self.path.parent if self.path else self.lessons_dir)
        dialog = QFileDialog(self, tr("Open a Python file"), start, tr("Python files (*.py);;All files (*)"))
        dialog.setObjectName("open_dialog")
        dialog.setFileMode(QFileDialog.FileMode.ExistingFile)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.fileSelected.connect(self.open_file)
        dialog.open()  # window-modal, and the window keeps its event loop: nothing waits on it
        return dialog

    def save(self) -> Path | None:
        """Write the code view's text (bundled lessons to the learner's copy); returns the file written."""
        if self.path is None:
            return None
        text = self.code_view.source()
        target = self.workspace.save(self.path, text)
        self._autosave.stop()
        self.workspace.forget_unsaved(self.path)
        if target != self.path:
            self.session.set_breakpoints(str(target), self.code_view.breakpoints())
            self.path = target
        self.code_view.document().setModified(False)
        self._update_title()
        return target

    def revert_to_original(self) -> None:
        """Drop the learner's copy of a bundled lesson and show the original."""
        if self.path is None or self.workspace.original_of(self.path) is None:
            return
        answer = QMessageBox.question(self, tr("Revert to original"),
                                      tr("Throw away your changes to this lesson and show the original?"))
        if answer != QMessageBox.StandardButton.Yes:
            return
        self.code_view.document().setModified(False)
        original = self.workspace.revert(self.path)
        self.open_file(original)

    def _on_autosave_due(self) -> None:
        if self.path is None or not self.code_view.document().isModified() or self.edited_elsewhere:
            return
        if self.workspace.is_bundled(self.path) or self.workspace.original_of(self.path):
            self.save()  # a lesson's copy is the learner's own: keep it current
            return
        self.workspace.keep_unsaved(self.path, self.code_view.source())

    def _may_stop_for(self, path: Path) -> bool:
        """Whether the learner agrees to stop the active run to open ``path`` (the same file needs no asking)."""
        if self.path is None or path == self.path:
            return True
        answer = QMessageBox.question(
            self, tr("Stop the running lesson?"),
            tr("{running} is running. Stop it and open {name}?", running=self.path.name, name=path.name),
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.Cancel)
        return answer == QMessageBox.StandardButton.Yes

    def _may_discard_changes(self) -> bool:
        if self.path is None or not self.code_view.document().isModified():
            return True
        if self.workspace.is_bundled(self.path) or self.workspace.original_of(self.path):
            self.save()
            return True
        answer = QMessageBox.question(
            self, tr("Unsaved changes"), tr("{name} has changes that are not saved. Save them?", name=self.path.name),
            QMessageBox.StandardButton.Save | QMessageBox.StandardButton.Discard | QMessageBox.StandardButton.Cancel)
        if answer == QMessageBox.StandardButton.Save:
            self.save()
            return True
        if answer == QMessageBox.StandardButton.Discard:
            self.workspace.forget_unsaved(self.path)
            self.code_view.document().setModified(False)
            return True
        return False

    def _fill_recent_menu(self) -> None:
        self.recent_menu.clear()
        recent = [p for p in settings.get("recent_files") if os.path.exists(p)]
        for path in recent:
            self.recent_menu.addAction(os.path.basename(path), lambda p=path: self.open_file(p)).setToolTip(path)
        self.recent_menu.setEnabled(bool(recent))

    def _update_title(self) -> None:
        name = self.path.name if self.path else tr("no file")
        copy = tr(" (your copy)") if self.path and self.workspace.original_of(self.path) else ""
        self.setWindowTitle(f"{name}{copy}[*] — GradStep")
        self.setWindowModified(self.code_view.document().isModified())

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        if any(url.toLocalFile().endswith(".py") for url in event.mimeData().urls()):
            event.acceptProposedAction()

    def dropEvent(self, event: QDropEvent) -> None:
        for url in event.mimeData().urls():
            if url.toLocalFile().endswith(".py"):
                self.open_file(url.toLocalFile())
                event.acceptProposedAction()
                return

    # ---- running ------------------------------------------------------------------------

    def _leave_past(self) -> bool:
        """Back to the live step before a step or a start; False when the learner keeps a finished run's past.

        On a past step of a finished run a step starts a new run, which replaces the recording
        being browsed: the learner is asked first.
        """
        run = self.run
        if run is not None and run.viewing is not None and run.is_over and self.session.state not in (RUNNING, PAUSED):
            answer = QMessageBox.question(
                self, tr("Start a new run?"),
                tr("Step {step} of the finished run is in view. A new run replaces this run's recording of "
                   "{total} steps. Start a new run?", step=run.viewing + 1, total=run.live_index + 1),
                QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.Cancel)
            if answer != QMessageBox.StandardButton.Yes:
                return False
        self.go_live()
        return True

    def _question_waits(self) -> bool:
        """Whether a prediction waits for its answer; then the status bar says to answer or skip, and nothing runs.

        A step would run the line and the question would vanish unanswered: a skip is the learner's
        own choice (Skip, Esc), never a side effect of a key.
        """
        if self.prediction_bar.prediction is None or self.session.state != PAUSED:
            return False
        self.state_label.setText(tr(QUESTION_WAITS))
        self.prediction_bar.focus_answer()
        return True

    def step_back(self) -> None:
        """Show the pause before the one in view, as recorded."""
        if self.session.state != RUNNING and self.run is not None:
            self.run.step_back()
            self._update_actions()

    def record_to_end(self) -> None:
        """Record every step from here (or from the start) to the end or the step limit."""
        if not self._leave_past() or self._question_waits():
            return
        if self.session.state == PAUSED:
            self.session.record(limit=RECORD_LIMIT)
            self._on_resumed()
        elif self.session.state != RUNNING and self._start(stop_on_entry=True):
            self._record_on_first_pause = True

    def _ask_history_budget(self) -> None:
        budget, ok = QInputDialog.getInt(self, tr("History budget"), tr("Memory for the run's history (MB):"),
                                         settings.get("history/budget_mb"), 16, 65536, 64)
        if ok:
            settings.put("history/budget_mb", budget)
            if self.run is not None and self.run.history is not None:
                self.run.history.budget_bytes = budget * 2**20

    def start_or_continue(self) -> None:
        """F5: continue a paused lesson, or start a stopped one paused at its first line (as Thonny's debug)."""
        if not self._leave_past() or self._question_waits():
            return
        if self.session.state == PAUSED:
            self.session.resume(watches=self.watch_view.stop_on_change())
            self._on_resumed()
        elif self.session.state != RUNNING:
            self._start(stop_on_entry=True)

    def run_to_end(self) -> None:
        """F8: run a stopped lesson without pausing at its first line, to a breakpoint or the end."""
        if self.session.state not in (RUNNING, PAUSED) and self._leave_past():
            self._start(stop_on_entry=False)

    def step_over(self) -> None:
        self._step(self.session.step_over)

    def step_into(self) -> None:
        self._step(self.session.step_into)

    def step_expression(self) -> None:
        """Alt+F11: run the paused line one PyTorch operation at a time."""
        self.go_live()
        if self.session.state == PAUSED and not self._question_waits():
            self.session.step_expression()
            self._on_resumed(stepped=True)

    def step_out(self) -> None:
        self.go_live()
        if self.session.state == PAUSED and not self._question_waits():
            self.session.step_out()
            self._on_resumed(stepped=True)

    def run_to_cursor(self) -> None:
        if not self._leave_past() or self._question_waits():
            return
        line = self.code_view.cursor_line()
        if self.session.state == PAUSED:
            self.session.run_to(line)
            self._on_resumed()
        elif self.session.state != RUNNING:
            self._start(stop_on_entry=False, run_to=line)

    def stop(self) -> None:
        if self.session.state in (RUNNING, PAUSED):
            self.session.stop()

    def restart(self) -> None:
        if self.session.state in (RUNNING, PAUSED):
            self.session.stop()
        self._start(stop_on_entry=self.session.stop_on_entry if self.session.path else True)

    def _step(self, command: Callable[[], None]) -> None:
        if not self._leave_past() or self._question_waits():
            return
        if self.session.state == PAUSED:
            command()
            self._on_resumed(stepped=True)
        elif self.session.state != RUNNING:
            self._start(stop_on_entry=True)

    def _start(self, stop_on_entry: bool, run_to: int | None = None) -> bool:
        if self.path is None:
            return False
        if self.code_view.document().isModified():
            self.save()
        source = self.code_view.source()
        coach = self._coach_for(source)
        breakpoints = dict(self.code_view.breakpoints())
        for line in coach.stop_lines() if coach else ():
            breakpoints.setdefault(line, None)
        if run_to is not None:
            breakpoints.setdefault(run_to, None)
        self.session.breakpoints[str(self.path)] = breakpoints
        try:
            # The run before ends inside start() and says so to its own Run; this one's messages come later.
            self.session.start(str(self.path), source, stop_on_entry,
                               watches=None if stop_on_entry else self.watch_view.stop_on_change(),
                               checks=coach.checks() if coach else None)
        except LessonFileError as exc:
            self._transcript().add_message(str(exc), "error")
            return False
        finally:
            self.session.breakpoints[str(self.path)] = self._breakpoints()
        self.coach = coach
        self._set_run(Run(str(self.path), settings.get("history/budget_mb") * 2**20))
        name = self.path.name
        # the Output pane's own messages are worded when shown, so they follow View > Language
        self.run.transcript.add_message(lambda: tr("▶ Running {name}", name=name), "info")
        self._clear_pause_views()
        self.code_view.set_error_line(None)
        self.code_view.set_previous_line(None)
        self._on_resumed()
        return True

    def _coach_for(self, source: str) -> Coach | None:
        """A coach for a run of ``source``, if it is a lesson with predictions or checks."""
        try:
            lesson = parse_lesson(source if "\n" in source else source + "\n")
        except LessonFormatError:
            return None
        if not lesson.predictions and not lesson.checks:
            return None
        return Coach(lesson, self.path.stem, self.progress, self.act_ask_predictions.isChecked())

    def _breakpoints(self) -> dict[int, str | None]:
        """The code view's breakpoints and the lines whose predictions are still to be asked."""
        breakpoints = dict(self.code_view.breakpoints())
        for line in self.coach.stop_lines() if self.coach else ():
            breakpoints.setdefault(line, None)
        return breakpoints

    def toggle_predictions(self) -> None:
        """Run > Ask Predictions: whether runs stop to ask before a line with ``# predict:`` runs."""
        asking = self.act_ask_predictions.isChecked()
        settings.put("course/ask_predictions", asking)
        if self.coach is not None:
            self.coach.asking = asking
            if not asking:
                self.prediction_bar.dismiss()
            if self.path is not None:
                self.session.set_breakpoints(str(self.path), self._breakpoints())

    def _on_prediction_bar_answered(self, answer: str) -> None:
        if self.coach is not None and self.prediction_bar.prediction is not None:
            self.coach.answer(self.prediction_bar.prediction, answer)
            self.prediction_bar.dismiss()  # answered: the step that runs the line is no longer held up
            self.step_over()

    def _on_prediction_bar_skipped(self, prediction: Prediction) -> None:
        if self.coach is not None:
            self.coach.skip()
        self._transcript().add_message(lambda: tr("Skipped the prediction on line {line} ({expr}): not judged",
                                                  line=prediction.line, expr=prediction.expression))
        self.state_label.setText(tr("Skipped the question on line {line}; the line has not run yet — F10 runs it, "
                                    "F11 steps into it", line=prediction.line))

    def _say_passed_predictions(self) -> None:
        """After Record to End: how many predictions it passed without asking, in the output."""
        passed = self.coach.take_passed() if self.coach else []
        if passed:
            lines = ", ".join(str(p.line) for p in passed)
            self._transcript().add_message(lambda: tr(
                "Record to End skipped {n} prediction(s) without asking, on line(s) {lines}: step through the "
                "lesson (F10) to be asked", n=len(passed), lines=lines))

    def _judge_prediction(self) -> None:
        """The line a prediction waited for has run: ask the lesson whether the answer was right."""
        waiting = self.coach.take_waiting() if self.coach else None
        if waiting is None:
            return
        prediction, answer = waiting
        coach = self.coach

        def show(result: dict[str, Any]) -> None:
            verdict = coach.verdict(prediction, answer, result)
            self.prediction_bar.show_verdict(verdict)
            self.notes_view.explain(prediction.line)  # the note after the line says why
            right = verdict.right
            self._transcript().add_message(lambda: verdict_text(verdict),
                                           "info" if right is None else "success" if right else "error")
            self._show_progress()

        self._request("predict", show, expression=prediction.expression, answer=answer)

    def _ask_prediction(self, snapshot: dict[str, Any]) -> None:
        if self.coach is None or not same_file(snapshot.get("file", ""), str(self.path)):
            return
        prediction = self.coach.question_at(snapshot, snapshot.get("file", ""))
        if prediction is not None:
            self.prediction_bar.ask(prediction)
            self._show_state()
            self.session.set_breakpoints(str(self.path), self._breakpoints())  # asked once per run

    def _show_progress(self) -> None:
        self.lesson_browser.set_progress({info.stem: self.progress.of(info.stem)
                                          for info in self.lesson_browser.lessons()})

    def _on_lesson_browser_progress_reset_requested(self, stem: str) -> None:
        self.progress.reset(stem)
        self._show_progress()

    def _set_run(self, run: Run | None) -> None:
        """Show ``run`` from now on (None: no run; the console starts empty)."""
        if self.run is not None:
            self.run.on_viewed.remove(self._on_run_viewed)
        if run is None:
            self.coach = None
            self.prediction_bar.dismiss()
        self.run = run
        if run is not None:
            run.on_viewed.append(self._on_run_viewed)
        self.time_travel.set_run(run)
        self.console.set_transcript(run.transcript if run is not None else Transcript())

    def _transcript(self) -> Transcript:
        """Where the app's messages go: the run's transcript (shown again after a look at the past)."""
        return self.run.transcript if self.run is not None else self.console.transcript

    def _on_run_viewed(self, index: int | None) -> None:
        if index is None:
            self.show_live()
        else:
            snapshot, previous = self.run.past(index)
            self.show_pause(snapshot, previous, (index, self.run.live_index))

    def _on_resumed(self, stepped: bool = False) -> None:
        """The lesson runs again; ``stepped`` when by a step, after which the line paused at is the one that ran."""
        self._stepped = stepped
        self.prediction_bar.dismiss()  # answered (the verdict comes at the next pause) or stepped on unanswered
        self.code_view.set_read_only(True)
        self.console.set_input_enabled(False)
        self.backward_panel.set_enabled_for_state(False)
        self.state_label.setText(tr("Running… (F6 pauses, Shift+F5 stops)"))
        self._update_actions()

    # ---- what the engine says -----------------------------------------------------------

    def _on_bridge_started(self, path: str) -> None:
        self._update_actions()

    def _on_bridge_output(self, stream: str, text: str) -> None:
        if self.run is not None:  # shown by the console when it shows the run's transcript (not a past step's)
            self.run.add_output(stream, text)
        else:
            self.console.append_output(stream, text)

    def _on_bridge_noticed(self, kind: str, text: str) -> None:
        """A long call holds the pause up: the status says so; a lesson that does not answer or does not end
        is said in the status and in the output; anything else is a note in the output."""
        if kind in ("busy", "stalled"):
            self.status.show_notice(text)
        if kind != "busy":
            self._on_bridge_output("native", f"[GradStep] {text}\n")

    def _on_bridge_paused(self, snapshot: dict[str, Any]) -> None:
        if self.run is None:  # a run started by the session's own methods, not by the window's
            self._set_run(Run(self.session.path or "", settings.get("history/budget_mb") * 2**20))
        previous = self.run.live
        self.run.add_pause(snapshot)
        if snapshot.get("recording"):
            self._ask_prediction(snapshot)  # not asked while recording: counted as passed
            return  # recorded for the timeline; the panels show the pause the recording ends at
        # The "just ran" arrow only after a step: after a continue or run to cursor, the last pause's
        # line is not the line that ran last.
        self.run.just_ran = previous["line"] if previous and self._stepped else None
        self.code_view.set_previous_line(self.run.just_ran)
        self.code_view.set_current_line(snapshot["line"], snapshot["event"])
        self.code_view.set_operation_span(snapshot["op"]["span"] if "op" in snapshot else None)
        self.variables_view.set_snapshot(snapshot["vars"], snapshot["globals"], before=self.run.before())
        if previous is not None and previous.get("recording"):
            # The recording ends here: the panels skipped its pauses' graph changes, so they get the whole graph.
            self._show_live_graph()
            self._say_passed_predictions()
        else:
            self._apply_graph(snapshot.get("graph"))
        # an operation's result (⟨x @ W⟩) has no name in the frame for backward() to use
        self.backward_panel.set_snapshot({k: v for k, v in snapshot["vars"].items() if not k.startswith("⟨")})
        self.graph_model.set_waiting_leaves(grad_leaves(snapshot["vars"]), snapshot.get("in_backward", False))
        self.backward_panel.set_enabled_for_state(True)
        self.stack_view.set_stack(snapshot["stack"], 0, snapshot.get("stack_cut", False))
        self.notes_view.show_line(snapshot["line"])
        self.console.set_input_enabled(True)
        if snapshot.get("post_mortem"):
            error = snapshot["exception"]
            self.code_view.set_error_line(error.get("line"))
            self._transcript().add_error(error)
        if snapshot.get("condition_error"):
            problem = snapshot["condition_error"]
            self._transcript().add_message(lambda: tr(
                "The condition “{condition}” on line {line} raised {type}: {message}", condition=problem["condition"],
                line=problem["line"], type=problem["type"], message=problem["message"]), "error")
        self._show_state()
        self._judge_prediction()
        self._ask_prediction(snapshot)
        self._evaluate_watches()
        self._refresh_inspector()
        self._update_actions()
        if self._record_on_first_pause:
            self._record_on_first_pause = False
            self.session.record(limit=RECORD_LIMIT)
            self._on_resumed()

    def show_pause(self, snapshot: dict[str, Any], previous_line: int | None, past: tuple[int, int]) -> None:
        """Show a recorded pause as it was: code line, stack, variables, graph, output so far."""
        index, live = past
        self.code_view.set_previous_line(previous_line)
        self.code_view.set_current_line(snapshot["line"], snapshot["event"])
        self.code_view.set_operation_span(snapshot["op"]["span"] if "op" in snapshot else None)
        self.variables_view.set_snapshot(snapshot["vars"], snapshot["globals"], before=self.run.before(index))
        self.stack_view.set_stack(snapshot["stack"], 0, snapshot.get("stack_cut", False))
        self.notes_view.show_line(snapshot["line"])
        self.graph_model.set_graph(snapshot["graph_full"], new=made_nodes(snapshot))
        self.graph_model.set_waiting_leaves(grad_leaves(snapshot["vars"]), snapshot.get("in_backward", False))
        self.backward_panel.set_enabled_for_state(False, "past")
        self.backward_panel.show_past(index)
        ended = self.run is not None and self.run.is_over
        self.console.set_input_enabled(False, "ended" if ended else "past")
        self.prediction_bar.hide()  # its question and verdict are the live step's: back with it
        back = N_("goes back to the end of the run") if ended else N_("goes back to live")
        # what the Output pane held at that step: the lesson's output, the app's messages and verdicts
        self.console.set_transcript(self.run.transcript.until(index, lambda: tr(
            "Output up to step {step} (the past: Ctrl+Shift+F10 {back})", step=index + 1, back=tr(back))))
        if self._inspected in snapshot["vars"]:
            self.inspector.show_tensor(self._inspected, snapshot["vars"][self._inspected])
        self.status.show_past(snapshot, index, live, ended)
        self._update_actions()

    def show_live(self) -> None:
        """Leave the past: the live step (or the end of the run) as the lesson has it now, and all the console said."""
        run, snapshot = self.run, self.run.live
        self.console.set_transcript(run.transcript)
        bar = self.prediction_bar
        bar.setVisible(bar.prediction is not None or bar.verdict is not None)
        self.backward_panel.show_past(None)
        self._show_live_graph()
        if snapshot is not None:
            live = self.session.state == PAUSED and not run.is_over
            self.code_view.set_current_line(snapshot["line"] if live else None, snapshot["event"])
            self.code_view.set_previous_line(run.just_ran if live else None)
            self.code_view.set_operation_span(snapshot["op"]["span"] if live and "op" in snapshot else None)
            if run.is_over and run.ended.variables is not None:  # the module as the run left it
                self.variables_view.set_snapshot(run.ended.variables, {}, before=run.before())
            else:
                self.variables_view.set_snapshot(snapshot["vars"], snapshot["globals"], before=run.before())
            if run.is_over:
                self.stack_view.clear()
            else:
                self.stack_view.set_stack(snapshot["stack"], 0, snapshot.get("stack_cut", False))
            self.notes_view.show_line(snapshot["line"])
            self.backward_panel.set_enabled_for_state(live, "running" if self.session.state == RUNNING else "ended")
            self.console.set_input_enabled(live, "ended" if run.is_over else "running")
        self._show_state()
        self._refresh_inspector()
        self._update_actions()

    def _show_live_graph(self) -> None:
        """The run's whole live graph in the graph view and the Backward panel (after a past step or a recording)."""
        graph = self.run.live_graph()
        self.graph_model.set_graph(graph, new=made_nodes(self.run.live or {}))
        self.backward_panel.set_graph(graph)

    def _on_bridge_ended(self, ended: m.Ended) -> None:
        if self.run is not None:
            recorded = self.run.live is not None and self.run.live.get("recording")
            self.run.end(ended)
            self.run.just_ran = None
            if recorded and self.run.viewing is None:
                self._show_live_graph()  # the recording ran to the end: the panels skipped its graph changes
        self._allow_editing()
        self.code_view.set_current_line(None)
        self.code_view.set_previous_line(None)  # nothing is about to run, and what ran last is not one line
        if ended.variables is not None:  # the module as the run left it, not as at the last pause
            self.variables_view.set_snapshot(ended.variables, {}, before=self.run.before() if self.run else None)
        self.console.set_input_enabled(False, "ended")
        self.backward_panel.set_enabled_for_state(False, "ended")
        self.stack_view.clear()
        self._pending.clear()
        self.prediction_bar.dismiss()
        self._say_passed_predictions()
        if self.coach is not None and ended.checks:
            for result in self.coach.check_results(ended.checks):
                self._transcript().add_message(lambda r=result: check_text(r), "success" if result.passed else "info")
            self._show_progress()
        kind = "success" if ended.status == "ok" or (ended.status == "exited" and ended.exit_code == 0) else "error"
        if ended.status == "error" and ended.error and ended.error.get("type") == "SyntaxError":
            self.code_view.set_error_line(ended.error.get("line"))
            self._transcript().add_error(ended.error)
            self.code_view.go_to_line(ended.error.get("line") or 1)
        self._transcript().add_message(lambda: f"■ {end_text(ended)}", kind)
        self._show_state()
        self._update_actions()

    def _on_bridge_replied(self, request_id: int, kind: str, result: dict[str, Any]) -> None:
        callback = self._pending.pop(request_id, None)
        if callback is not None:
            callback(result)

    def _request(self, kind: str, callback: Callable[[dict[str, Any]], None], **params: Any) -> None:
        if self.session.state != PAUSED:
            return
        self._pending[self.session.request(kind, **params)] = callback

    # ---- panels that ask the lesson -----------------------------------------------------

    def _on_stack_view_frame_selected(self, index: int, line: int) -> None:
        self.code_view.go_to_line(line)

        def show(result: dict[str, Any]) -> None:
            if result.get("ok"):
                self.variables_view.set_snapshot(result["vars"], result["globals"])  # another frame: nothing to compare
                self.backward_panel.set_snapshot(result["vars"])
                self._apply_graph(result.get("graph"))
                self.run.add_graph_change(result.get("graph") or {})

        self._request("frame", show, index=index)

    def _on_variables_view_tensor_selected(self, expression: str, summary: dict[str, Any]) -> None:
        self._inspected = expression
        self.inspector.show_tensor(expression, summary)

    def _on_inspector_values_requested(self, expression: str) -> None:
        values: dict[str, Any] = {}

        def show(result: dict[str, Any], key: str) -> None:
            values[key] = result.get("values") if result.get("ok") else None
            if len(values) == 2:
                self.inspector.set_values(expression, values["value"], values["grad"])

        self._request("values", lambda r: show(r, "value"), expression=expression)
        self._request("values", lambda r: show(r, "grad"), expression=expression, grad=True)

    def _refresh_inspector(self) -> None:
        if self._inspected is None:
            return
        expression = self._inspected
        if expression.startswith("⟨"):  # an operation's result: no name in the frame; its summary comes with the pause
            summary = ((self.run.live if self.run else None) or {}).get("vars", {}).get(expression)
            if summary is not None:
                self.inspector.show_tensor(expression, summary)
            return

        def show(result: dict[str, Any]) -> None:
            value = result.get("value") if result.get("ok") else None
            if value and value.get("type") in ("Tensor", "Parameter"):
                self.inspector.show_tensor(expression, value)

        self._request("evaluate", show, expression=expression)

    def _apply_graph(self, diff: dict[str, Any] | None) -> None:
        if diff:
            self.graph_model.apply_diff(diff)  # also when nothing changed: the last step's nodes are no longer new
        if diff and diff.get("changed"):
            self.backward_panel.apply_diff(diff)

    def _after_action(self, kind: str, result: dict[str, Any]) -> None:
        """Show an autograd action's result, and the frame as the action left it."""
        # the step it belongs to: a change of the frame is a step of its own (recorded below)
        self.backward_panel.show_result(kind, result, self.run.live_index + (1 if "vars" in result else 0))
        if "vars" in result:
            self.variables_view.set_snapshot(result["vars"], result["globals"], before=self.run.live)
            self.backward_panel.set_snapshot(result["vars"])
        self._apply_graph(result.get("graph"))
        if "vars" in result:  # the frame changed: a step of the history
            self.run.add_change(kind, result)
            self.status.show_step(self.run.live_index + 1)
            self._update_actions()
        else:
            self.run.add_graph_change(result.get("graph") or {})
        self._refresh_inspector()
        self._evaluate_watches()

    def _on_backward_panel_preview_requested(self, params: dict[str, Any]) -> None:
        self._request("preview_gradients", lambda r: self._after_action("preview", r), **params)

    def _on_backward_panel_backward_requested(self, params: dict[str, Any]) -> None:
        self._request("run_backward", lambda r: self._after_action("backward", r), **params)

    def _on_backward_panel_grad_requested(self, params: dict[str, Any]) -> None:
        self._request("autograd_grad", lambda r: self._after_action("grad", r), **params)

    def _on_backward_panel_active_node_changed(self, node_id: int) -> None:
        self.graph_model.set_active(node_id if node_id >= 0 else None)

    def _on_backward_panel_lesson_requested(self, stem: str) -> None:
        path = self.lessons_dir / f"{stem}.py"
        if not path.is_file():
            path = LESSONS_DIR / f"{stem}.py"
        self.open_file(path)

    def _on_graph_view_origin_selected(self, file: str, line: int) -> None:
        if not file or same_file(file, self.code_view.path()):
            self.code_view.select_line(line)

    def _on_graph_view_span_selected(self, file: str, span: list[int]) -> None:
        if not file or same_file(file, self.code_view.path()):
            self.code_view.select_span(span)

    def _on_code_view_position_hovered(self, line: int, column: int) -> None:
        self.graph_view.highlight_origin_at(line, column, self.code_view.path())

    def _on_variables_view_variable_hovered(self, name: str) -> None:
        self.graph_model.highlight_variable(name or None)

    def _on_console_evaluate_requested(self, expression: str) -> None:
        def show(result: dict[str, Any]) -> None:
            self._transcript().add_result(expression, result)
            if "vars" in result:  # a statement: it may have changed the lesson, as a line of it would
                self.variables_view.set_snapshot(result["vars"], result["globals"], before=self.run.live)
                self.backward_panel.set_snapshot(result["vars"])
                self._apply_graph(result.get("graph"))
                self.run.add_change("console", result)
                self.status.show_step(self.run.live_index + 1)
                self._refresh_inspector()
                self._evaluate_watches()
                self._update_actions()

        self._request("evaluate", show, expression=expression)

    def _evaluate_watches(self) -> None:
        for expression in self.watch_view.expressions():
            self._request("evaluate", lambda result, e=expression: self.watch_view.set_result(e, result),
                          expression=expression)

    def _on_watch_view_expressions_changed(self, expressions: list[str]) -> None:
        settings.put("watch/expressions", list(expressions))
        self._evaluate_watches()

    # ---- editing ------------------------------------------------------------------------

    def toggle_breakpoint(self) -> None:
        self.code_view.toggle_breakpoint()

    def pause(self) -> None:
        self.session.pause()

    def go_live(self) -> None:
        """Back to the live step of the run, if a past one is in view."""
        if self.run is not None:
            self.run.go_live()

    def _on_code_view_breakpoints_changed(self, breakpoints: dict[int, str | None]) -> None:
        if self.path is not None:
            self.session.set_breakpoints(str(self.path), self._breakpoints())

    def _on_code_view_source_edited(self) -> None:
        self.notes_view.set_source(self.code_view.source())
        self._autosave.edited()
        self._update_title()

    def _on_lesson_browser_lesson_activated(self, path: str) -> None:
        if self.path is None or self.workspace.open_path(path) != self.path:
            if not self.open_file(path):
                if self.path is not None:
                    self.lesson_browser.select_path(str(self.path))  # the lesson still open, not the one refused
                return
        self.docks["notes"].raise_()  # a chosen lesson opens on its notes (the list is a tab away)

    # ---- state --------------------------------------------------------------------------

    def _clear_pause_views(self) -> None:
        self.code_view.set_current_line(None)
        self.code_view.set_previous_line(None)
        self.code_view.set_error_line(None)
        self.variables_view.clear()
        self.graph_model.clear()  # no graph, and the tensors named were the last pause's
        self.backward_panel.clear()
        self.backward_panel.set_enabled_for_state(False, "stopped")
        self.stack_view.clear()
        self.inspector.clear()
        self.console.set_input_enabled(False, "idle")
        self._inspected = None
        self._show_state()

    def _show_state(self) -> None:
        run = self.run
        self.status.show_run(self.session.state, run.live if run else None, run.ended if run else None,
                             self.path is not None, run.live_index + 1 if run and run.history is not None else None)
        if self.session.state == PAUSED and self.prediction_bar.prediction is not None:
            self.state_label.setText(tr(QUESTION_WAITS))

    def _update_actions(self) -> None:
        """Enable and label the run actions for the session's state.

        Runs at every pause; an action is touched only when it changes (``QAction.setEnabled``
        updates every menu and toolbar button showing it: 30 µs a call, 32 calls a pause).
        """
        state = self.session.state
        has_file = self.path is not None
        idle = state in (IDLE, ENDED) and has_file
        paused = state == PAUSED
        running = state == RUNNING
        _enable(self.act_start, idle or paused)
        text = tr("&Continue") if paused else tr("&Start")
        if self.act_start.text() != text:
            self.act_start.setText(text)
            self.act_start.setIconText(icon_text(text))
            self.act_start.setToolTip(tr("Continue to the next breakpoint (F5)") if paused
                                      else tr("Start the lesson, pausing at its first line (F5)"))
        _enable(self.act_run_to_end, idle)
        for action in (self.act_step_over, self.act_step_into):
            _enable(action, idle or paused)
        _enable(self.act_step_out, paused)
        _enable(self.act_step_expression, paused)
        _enable(self.act_run_to_cursor, idle or paused)
        _enable(self.act_pause, running)
        _enable(self.act_stop, running or paused)
        _enable(self.act_restart, has_file and (running or paused or state == ENDED))
        _enable(self.act_toggle_bp, has_file)
        run = self.run
        _enable(self.act_step_back, not running and run is not None and run.can_step_back())
        _enable(self.act_go_live, run is not None and run.viewing is not None)
        _enable(self.act_record, idle or paused)
        _enable(self.act_save, has_file and not (running or paused) and not self.edited_elsewhere)
        _enable(self.act_revert, has_file and self._revertible() and not self.edited_elsewhere)

    def _revertible(self) -> bool:
        """Whether the open file is a copy of a bundled lesson (Revert goes back to it); asked once per path."""
        if self._revert_basis[0] != self.path:
            self._revert_basis = (self.path, self.workspace.original_of(self.path) is not None)
        return self._revert_basis[1]

    # ---- layout and language ------------------------------------------------------------

    def set_language(self, language: str) -> None:
        """Show the whole interface, lesson titles and notes included, in ``language`` (remembered)."""
        self.language = language
        settings.put("language", language)
        i18n.set_language(language)
        use_qt_language(language)
        for code, action in self.language_actions.items():
            action.setChecked(code == language)
        self.notes_view.set_language(language)
        self.code_view.set_language(language)
        self.lesson_browser.set_language(language)
        self.retranslate()

    def retranslate(self) -> None:
        """Set every text of the window and its panels again, in the current language."""
        for name, dock in self.docks.items():
            dock.setWindowTitle(tr(DOCK_TITLES[name]))
        retranslate_actions(self)
        self.prediction_bar.retranslate()
        self._retranslate_menus()
        for panel in (self.timeline, self.backward_panel, self.console, self.graph_view, self.variables_view,
                      self.inspector, self.stack_view, self.watch_view, self.code_view):
            panel.retranslate()
        self._update_title()
        self._update_actions()
        self._show_state_again()

    def _show_state_again(self) -> None:
        """The status bar as the state has it, after a change of language."""
        run = self.run
        if run is not None and run.viewing is not None:
            snapshot, _ = run.past(run.viewing)
            self.status.show_past(snapshot, run.viewing, run.live_index, run.is_over)
        elif self.session.state == RUNNING:
            self.state_label.setText(tr("Running… (F6 pauses, Shift+F5 stops)"))
        else:
            self._show_state()

    def reset_layout(self) -> None:
        """Put every dock back where it starts."""
        for dock in self.docks.values():
            dock.setFloating(False)
            dock.show()
        self.restoreState(self._default_state, LAYOUT_VERSION)
        self._size_docks()
        self._hide_stale_tab_bars()

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if not self._sized:
            self._sized = True
            if settings.get("window/state").isEmpty():
                self._size_docks()
            else:  # a layout saved at another size: Qt fits it by crushing whichever column it meets first
                self.layout().activate()
                self._uncrush_columns()
            self._hide_stale_tab_bars()

    def _hide_stale_tab_bars(self) -> None:
        """Hide the dock tab bars that building the layout left behind.

        Qt keeps showing the tab bar of each intermediate tab group (it would sit over the
        status bar); the layout shows the bars in use again when it next lays out.
        """
        for bar in self.findChildren(QTabBar, options=Qt.FindChildOption.FindDirectChildrenOnly):
            bar.hide()
        self.layout().invalidate()

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        # Qt gives a wider window's extra width to the code; the graph is what needs it. A narrower
        # window Qt takes from the docks until the code is at its minimum: the graph or the notes crush.
        grown = event.size().width() - event.oldSize().width()
        graph = self.docks["graph"]
        if not (self._sized and event.oldSize().isValid() and graph.isVisible() and not graph.isFloating()):
            return
        if grown > 0:
            self.resizeDocks([graph], [graph.width() + grown], Qt.Orientation.Horizontal)
            self.layout().activate()
        self._uncrush_columns()
        docks, heights = [], []
        for dock, height in zip((self.docks["variables"], self.docks["console"]), self._strip_heights(), strict=True):
            if dock.isVisible() and not dock.isFloating():
                docks.append(dock)
                heights.append(height)
        if event.size().height() < event.oldSize().height() and any(
                dock.height() > height for dock, height in zip(docks, heights, strict=True)):
            # Qt takes a shorter window's height from the code and the graph; the strip and the output give theirs.
            self.resizeDocks(docks, heights, Qt.Orientation.Vertical)
            self.layout().activate()

    def _strip_heights(self) -> list[int]:
        """The default heights of the bottom strip and of the output under the graph, for this window's height."""
        height = self.height()
        return [max(int(height * BOTTOM_SHARE), MIN_BOTTOM_HEIGHT), max(int(height * OUTPUT_SHARE), MIN_OUTPUT_HEIGHT)]

    def _uncrush_columns(self) -> None:
        """Give the columns the default layout's widths when the graph, the code or the lessons column is crushed.

        A layout the learner arranged stays as long as no column is narrower than its minimum
        (:data:`MIN_GRAPH_SHARE`, :data:`MIN_CODE_SHARE`, :data:`MIN_LESSONS_WIDTH`).
        """
        width, graph = self.width(), self.docks["graph"]
        left = [dock for dock in (self.docks["lessons"], self.docks["notes"])  # a tab behind another has no region
                if not dock.visibleRegion().isEmpty() and not dock.isFloating()
                and self.dockWidgetArea(dock) == Qt.DockWidgetArea.LeftDockWidgetArea]
        if graph.isFloating() or not graph.isVisible() or not (
                graph.width() < width * MIN_GRAPH_SHARE or self.centralWidget().width() < width * MIN_CODE_SHARE
                or any(dock.width() < MIN_LESSONS_WIDTH for dock in left)):
            return
        docks = [*left[:1], graph]
        sizes = [max(int(width * LESSONS_SHARE), MIN_LESSONS_WIDTH)] * len(left[:1]) + [int(width * GRAPH_SHARE)]
        self.resizeDocks(docks, sizes, Qt.Orientation.Horizontal)
        self.layout().activate()

    def _restore_layout(self) -> None:
        geometry = settings.get("window/geometry")
        if not geometry.isEmpty():
            self.restoreGeometry(geometry)
        state = settings.get("window/state")
        if not state.isEmpty() and not self.restoreState(state, LAYOUT_VERSION):
            settings.put("window/state", QByteArray())  # an older layout: start from the default
        header = settings.get("variables/header")
        if not header.isEmpty():
            self.variables_view.restore_header_state(header)
        self.notes_view.set_language(self.language)
        self.code_view.set_language(self.language)

    def _about(self) -> None:
        QMessageBox.about(self, tr("About GradStep"),
                          tr("GradStep steps through PyTorch lessons line by line so you can watch autograd "
                             "build its graph and compute gradients."))

    def closeEvent(self, event: QCloseEvent) -> None:
        if not self._may_discard_changes():
            event.ignore()
            return
        settings.put("window/geometry", self.saveGeometry())
        settings.put("window/state", self.saveState(LAYOUT_VERSION))
        settings.put("variables/header", QByteArray(self.variables_view.header_state()))
        self._release_edit_lock()
        self.bridge.detach()
        self.session.close()
        event.accept()
