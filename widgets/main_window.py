"""GradStep's main window: the code and the autograd graph side by side, every other panel a dock around them.

Features
--------
* The teaching layout (:mod:`widgets.window_layout`): the code and the graph side by side,
  the graph's column with the larger share; View > Fold / Unfold All Notes; docks with stable
  object names, each toggled from the View menu; layout and geometry saved on close and
  restored on start; View > Reset Layout; a minimum size that crushes no panel.
* Run menu and toolbar with VS Code's shortcuts; actions that make no sense in the current
  state are disabled (:func:`app.stepping_rules.allowed_actions`), and the status bar says why.
* Status bar: run state, step count and the grad mode of the current line.
* Edits are never lost (:mod:`widgets.lesson_files`).

The window builds the docks, menus and files and wires the models to the views: the run
(:class:`app.run.Run`) is fed what the engine says, the step in view
(:class:`app.shown_step.ShownStep`) follows it and feeds the graph
(:class:`app.graph_model.GraphModel`), and the panels observe those. It observes the engine
through :class:`~widgets.session_bridge.SessionBridge` and never waits on the lesson process.
"""

from __future__ import annotations

import os
from functools import partial
from pathlib import Path
from typing import Any

from PySide6.QtCore import QByteArray, QLocale, QStandardPaths, Qt
from PySide6.QtGui import QAction, QCloseEvent, QDragEnterEvent, QDropEvent, QResizeEvent, QShowEvent
from PySide6.QtWidgets import QFileDialog, QInputDialog, QMainWindow, QVBoxLayout, QWidget

from app import i18n
from app import messages as m
from app.announcements import step_announcement
from app.graph_model import GraphModel
from app.i18n import N_, tr
from app.lesson_format import Prediction, list_lessons
from app.progress import Progress
from app.requests import Requests
from app.run import Run
from app.session import PAUSED, RUNNING, LessonFileError, Session, read_lesson
from app.shown_step import ShownStep, Step
from app.stepping_rules import WindowState, allowed_actions
from app.transcript import Transcript
from app.workspace import LESSONS_DIR, Workspace
from widgets import settings, theme
from widgets.backward_panel import BackwardPanel
from widgets.call_stack_view import CallStackView
from widgets.code_view import CodeView
from widgets.console_view import ConsoleView
from widgets.graph_groups import same_file
from widgets.graph_view import GraphView
from widgets.keys_back import KeysBack
from widgets.lesson_browser import LessonBrowser
from widgets.lesson_files import ELSEWHERE_NOTE, LessonFiles
from widgets.node_list import NodeList
from widgets.notes_view import NotesView
from widgets.prediction_bar import PredictionBar
from widgets.prediction_flow import PredictionFlow
from widgets.qt_translations import use_qt_language
from widgets.run_commands import QUESTION_WAITS, QUESTION_WAITS_INTO, RunCommands
from widgets.run_status_bar import RunStatusBar, end_text
from widgets.session_bridge import SessionBridge
from widgets.tensor_inspector import TensorInspector
from widgets.text_size import apply_text_size
from widgets.time_travel import TimeTravel
from widgets.timeline_bar import TimelineBar
from widgets.variables_view import VariablesView
from widgets.watch_view import WatchView
from widgets.window_actions import (
    HISTORY_ACTIONS,
    RUN_ACTIONS,
    add_actions,
    build_menus,
    icon_text,
    restyle_icons,
    retranslate_actions,
    retranslate_menus,
)
from widgets.window_layout import WindowLayout

#: Below this the panels crush: code and graph lose their lines, the variables their grad columns.
MIN_WIDTH, MIN_HEIGHT = 1120, 700



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
        self.language = settings.get("language") or i18n.system_language(QLocale.system().name())
        settings.put("language", self.language)  # the system's choice on a first start, kept from now on
        i18n.set_language(self.language)
        use_qt_language(self.language)
        self.graph_model = GraphModel()
        self.shown = ShownStep(self.graph_model)
        """The step every panel shows; it follows :attr:`run` and feeds :attr:`graph_model`."""
        self.requests = Requests(lambda kind, **params: self.session.request(kind, **params),
                                 lambda: self.session.state == PAUSED)
        self.run: Run | None = None
        """The run on screen (the current one, or the last one of this lesson); None before the first."""
        self.progress = Progress(self.workspace.data_dir / "progress.json")
        self._inspected: str | None = None
        self.setWindowTitle("GradStep")
        self.setAcceptDrops(True)
        self.setMinimumSize(MIN_WIDTH, MIN_HEIGHT)
        self.resize(1280, 800)
        self._build_central()
        self._build_panels()
        self._build_status_bar()
        self.files = LessonFiles(self, self.workspace, self.code_view, self._on_files_moved)
        self.predictions = PredictionFlow(session, self.requests, self.prediction_bar, self.notes_view,
                                          self.code_view, self.progress, self._transcript, self._show_state)
        self.commands = RunCommands(self, session, self.shown, self.files, self.predictions,
                                    (self.code_view, self.watch_view, self.prediction_bar, self.status),
                                    lambda: self.act_ask_predictions.isChecked(), self._on_run_began, self._transcript,
                                    self._update_actions)
        self._build_actions()
        build_menus(self)
        self._fill_recent_menu()
        self._connect()
        self.window_layout.restore()
        header = settings.get("variables/header")
        if not header.isEmpty():
            self.variables_view.restore_header_state(header)
        self.notes_view.set_language(self.language)
        self.code_view.set_language(self.language)
        self.set_text_size(settings.get("view/text_size"))
        self.set_high_contrast(settings.get("view/high_contrast"))
        self.lesson_browser.set_lessons(list_lessons(self.lessons_dir), self.language)
        self._show_progress()
        self.watch_view.set_expressions(settings.get("watch/expressions"))
        self._update_actions()

    # ---- construction -------------------------------------------------------------------

    def _build_central(self) -> None:
        """The code, with the prediction bar above it and the timeline under it."""
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
        self._keys_back = KeysBack(self)

    def _build_panels(self) -> None:
        self.lesson_browser = LessonBrowser(self)
        self.notes_view = NotesView(self)
        self.variables_view = VariablesView(self)
        self.inspector = TensorInspector(self)
        self.console = ConsoleView(settings.get("console/max_lines"), self)
        self.stack_view = CallStackView(self)
        self.watch_view = WatchView(self)
        self.graph_view = GraphView(self.graph_model, self)
        self.node_list = NodeList(self.graph_model, self)
        self.backward_panel = BackwardPanel(self.graph_model, self, self.progress,
                                            lambda: self.path.stem if self.path else None)
        self.window_layout = WindowLayout(self, {
            "lessons": self.lesson_browser, "notes": self.notes_view, "graph": self.graph_view,
            "variables": self.variables_view, "backward": self.backward_panel, "console": self.console,
            "inspector": self.inspector, "stack": self.stack_view, "watch": self.watch_view, "nodes": self.node_list},
            self.code_view)
        self.docks = self.window_layout.docks

    def _build_actions(self) -> None:
        add_actions(self)
        self.run_actions = [getattr(self, name) for name in RUN_ACTIONS]
        self.history_actions = [getattr(self, name) for name in HISTORY_ACTIONS]
        self.act_ask_predictions.setCheckable(True)
        self.act_ask_predictions.setChecked(settings.get("course/ask_predictions"))
        self.timeline.back_button.setDefaultAction(self.act_step_back)

    def _build_status_bar(self) -> None:
        self.status = RunStatusBar(self)
        self.setStatusBar(self.status)
        self.state_label, self.step_label, self.grad_label = (self.status.state_label, self.status.step_label,
                                                               self.status.grad_label)

    def _connect(self) -> None:
        self.bridge.started.connect(self._on_bridge_started)
        self.bridge.paused.connect(self._on_bridge_paused)
        self.bridge.output.connect(self._on_bridge_output)
        self.bridge.replied.connect(lambda request_id, _kind, result: self.requests.answered(request_id, result))
        self.bridge.ended.connect(self._on_bridge_ended)
        self.bridge.noticed.connect(self._on_bridge_noticed)
        self.bridge.skipped.connect(self._on_bridge_skipped)
        for view in (self.code_view, self.stack_view, self.notes_view, self.console, self.backward_panel.form,
                     self.graph_view):
            self.shown.changed.connect(view.show_step)
        self.shown.changed.connect(self._on_shown_changed)
        self.node_list.details_requested.connect(lambda _node: self.window_layout.go_to("graph"))
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
        for signal, request, kind in ((self.backward_panel.preview_requested, "preview_gradients", "preview"),
                                      (self.backward_panel.backward_requested, "run_backward", "backward"),
                                      (self.backward_panel.grad_requested, "autograd_grad", "grad")):
            signal.connect(partial(self._ask_action, request, kind))
        self.backward_panel.lesson_requested.connect(self._on_backward_panel_lesson_requested)
        self.backward_panel.drill_judged.connect(lambda _verdict: self._show_progress())
        self.prediction_bar.answered.connect(self._on_prediction_bar_answered)
        self.prediction_bar.skipped.connect(self._on_prediction_bar_skipped)
        self.prediction_bar.asking_changed.connect(self.backward_panel.form.set_predicting)
        self.lesson_browser.progress_reset_requested.connect(self._on_lesson_browser_progress_reset_requested)

    # ---- files --------------------------------------------------------------------------

    @property
    def path(self) -> Path | None:
        """The file open in the window."""
        return self.files.path

    def open_file(self, path: str | os.PathLike) -> bool:
        """Show ``path`` (a bundled lesson's own copy if the learner edited it); False if unusable."""
        if not self.files.may_discard_changes():
            return False
        shown = self.workspace.open_path(path)
        try:
            text = read_lesson(str(shown))
        except LessonFileError as exc:
            self._transcript().add_message(str(exc), "error")
            self.state_label.setText(str(exc))
            return False
        if self.session.state in (RUNNING, PAUSED):
            if not self.files.may_stop_for(shown):
                return False
            self.commands.stop()
        if shown != self.path:  # another lesson: nothing of the last run stays on screen
            self._set_run(None)
            self.backward_panel.forget_expressions()
        self.files.path = shown
        self.code_view.set_source(text, str(shown))
        self.code_view.set_breakpoints(self.session.breakpoints.get(str(shown), {}))
        self.notes_view.set_source(text)
        self.lesson_browser.select_path(str(shown))
        self._clear_pause_views()
        self.files.lock(shown)
        unsaved = None if self.files.edited_elsewhere else self.workspace.unsaved(shown, text)  # else the other's
        if unsaved is not None:
            self.code_view.set_source(unsaved, str(shown))
            self.code_view.document().setModified(True)
        settings.put("last_file", str(path))
        settings.add_recent_file(str(path))
        self._fill_recent_menu()
        self.files.update_title()
        self._update_actions()
        if unsaved is not None:
            self.state_label.setText(tr("Recovered unsaved changes to {name} from the last session", name=shown.name))
        if self.files.edited_elsewhere:
            self.state_label.setText(tr(ELSEWHERE_NOTE))
        return True

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
        return self.files.save()

    def revert_to_original(self) -> None:
        """Drop the learner's copy of a bundled lesson and show the original."""
        original = self.files.revert()
        if original is not None:
            self.open_file(original)

    def _on_files_moved(self, _old: Path, new: Path) -> None:
        """Saving a bundled lesson made the learner's copy: its breakpoints go with it."""
        self.session.set_breakpoints(str(new), self.code_view.breakpoints())

    def _fill_recent_menu(self) -> None:
        self.files.fill_recent_menu(self.recent_menu, self.open_file)

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

    def ask_history_budget(self) -> None:
        """Run > History Budget: the memory the run's history may take."""
        budget, ok = QInputDialog.getInt(self, tr("History budget"), tr("Memory for the run's history (MB):"),
                                         settings.get("history/budget_mb"), 16, 65536, 64)
        if ok:
            settings.put("history/budget_mb", budget)
            if self.run is not None and self.run.history is not None:
                self.run.history.budget_bytes = budget * 2**20

    def toggle_predictions(self) -> None:
        """Run > Ask Predictions: whether runs stop to ask before a line with ``# predict:`` runs."""
        asking = self.act_ask_predictions.isChecked()
        settings.put("course/ask_predictions", asking)
        self.predictions.set_asking(asking, self.path)

    def _on_prediction_bar_answered(self, answer: str) -> None:
        if self.predictions.answered(answer):
            self.commands.run_answered_line()

    def _on_prediction_bar_skipped(self, prediction: Prediction) -> None:
        self.state_label.setText(self.predictions.skipped(prediction))

    def _show_progress(self) -> None:
        self.lesson_browser.set_progress({info.stem: self.progress.of(info.stem)
                                          for info in self.lesson_browser.lessons()})

    def _on_lesson_browser_progress_reset_requested(self, stem: str) -> None:
        self.progress.reset(stem)
        self._show_progress()

    def _on_run_began(self, run: Run) -> None:
        """A run started: it is the one on screen, and nothing of the last one stays."""
        self._set_run(run)
        name = run.path and Path(run.path).name
        # the Output pane's own messages are worded when shown, so they follow View > Language
        run.transcript.add_message(lambda: tr("▶ Running {name}", name=name), "info")
        self._clear_pause_views()

    def _set_run(self, run: Run | None) -> None:
        """Show ``run`` from now on (None: no run; the console starts empty)."""
        if run is None:
            self.predictions.coach = None
            self.prediction_bar.dismiss()
        self.run = run
        self.time_travel.set_run(run)
        self.console.set_transcript(run.transcript if run is not None else Transcript())

    def _transcript(self) -> Transcript:
        """Where the app's messages go: the run's transcript (shown again after a look at the past)."""
        return self.run.transcript if self.run is not None else self.console.transcript

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
        is said in the status and in the console; anything else is a note in the console.

        Notes are the app's messages, not the lesson's output: the console starts each on a line of its
        own, even when the lesson's output so far ends inside a line.
        """
        if kind in ("busy", "stalled"):
            self.status.show_notice(text)
        if kind != "busy":
            self._transcript().add_message(text, "error" if kind == "stalled" else "info")

    def _on_bridge_skipped(self, count: int) -> None:
        """Output the window could not show in time is said on a line of its own, in the learner's language."""
        self._transcript().add_message(lambda: tr(
            "[… {n} characters of output skipped: the lesson printed faster than they could be shown …]",
            n=f"{count:,}"), "info")

    def _on_bridge_paused(self, snapshot: dict[str, Any]) -> None:
        """A pause: the run records it (and the step in view shows it); then what the window itself says of it."""
        if self.run is None:  # a run started by the session's own methods, not by the window's
            self._set_run(Run(self.session.path or "", settings.get("history/budget_mb") * 2**20))
            self.shown.set_run(self.run)
        recorded = self.run.live is not None and self.run.live.get("recording")
        self.run.add_pause(snapshot)
        if snapshot.get("recording"):
            self.predictions.ask(snapshot, self.path)  # not asked while recording: counted as passed
            return
        if recorded:
            self.predictions.say_passed()
        if snapshot.get("post_mortem"):
            error = snapshot["exception"]
            self.code_view.set_error_line(error.get("line"))
            self._transcript().add_error(error)
        if snapshot.get("condition_error"):
            problem = snapshot["condition_error"]
            self._transcript().add_message(lambda: tr(
                "The condition “{condition}” on line {line} raised {type}: {message}", condition=problem["condition"],
                line=problem["line"], type=problem["type"], message=problem["message"]), "error")
        self.predictions.judge(snapshot, self._on_prediction_judged)
        self.predictions.ask(snapshot, self.path)
        self._evaluate_watches()
        self.commands.paused()

    def _on_shown_changed(self, step: Step) -> None:
        """Another step in view: the panels that read it through the window, the status and the actions."""
        run = self.run
        if step.snapshot is not None:
            self.variables_view.set_snapshot(step.variables, step.globals, before=step.before)
        else:
            self.variables_view.clear()
        if step.where == "past":
            self._show_past(step)
        elif run is not None and self.console.transcript is not run.transcript:
            self.console.set_transcript(run.transcript)  # back from the past: all the console said
        if step.where != "past":
            bar = self.prediction_bar
            bar.setVisible(bar.prediction is not None or bar.verdict is not None)
            self._show_state()
        if step.where != "none" and step.off != "running":
            self.status.announce(step_announcement(step, self.graph_model))
        self._refresh_inspector()
        self._update_actions()

    def _on_prediction_judged(self, verdict: str) -> None:
        self._show_progress()
        self.status.announce(verdict, assertive=True)

    def _show_past(self, step: Step) -> None:
        """What a past step shows besides the panels: its output so far, the status, the prediction bar hidden."""
        index, snapshot = step.index, step.snapshot
        self.prediction_bar.hide()  # its question and verdict are the live step's: back with it
        back = N_("goes back to the end of the run") if step.over else N_("goes back to live")
        # what the Output pane held at that step: the lesson's output, the app's messages and verdicts
        self.console.set_transcript(self.run.transcript.until(index, lambda: tr(
            "Output up to step {step} (the past: Ctrl+Shift+F10 {back})", step=index + 1, back=tr(back))))
        self.status.show_past(snapshot, index, step.live_index, step.over)

    def _on_bridge_ended(self, ended: m.Ended) -> None:
        if self.run is not None:
            self.run.end(ended)  # the step in view shows the end (or keeps the past step in view)
        self.files.allow_editing()
        self.requests.forget()
        self.prediction_bar.dismiss()
        self.predictions.say_passed()
        if self.predictions.say_checks(ended):
            self._show_progress()
        kind = "success" if ended.status == "ok" or (ended.status == "exited" and ended.exit_code == 0) else "error"
        if ended.status == "error" and ended.error and ended.error.get("type") == "SyntaxError":
            self.code_view.set_error_line(ended.error.get("line"))
            self._transcript().add_error(ended.error)
            self.code_view.go_to_line(ended.error.get("line") or 1)
        self._transcript().add_message(lambda: f"■ {end_text(ended)}", kind)
        self._show_state()
        self._update_actions()

    # ---- panels that ask the lesson -----------------------------------------------------

    def _on_stack_view_frame_selected(self, index: int, line: int) -> None:
        self.code_view.go_to_line(line)

        def show(result: dict[str, Any]) -> None:
            if result.get("ok"):
                self.shown.show_frame(index, result)

        self.requests.ask("frame", show, index=index)

    def _on_variables_view_tensor_selected(self, expression: str, summary: dict[str, Any]) -> None:
        self._inspected = expression
        self.inspector.show_tensor(expression, summary)

    def _on_inspector_values_requested(self, expression: str) -> None:
        values: dict[str, Any] = {}

        def show(result: dict[str, Any], key: str) -> None:
            values[key] = result.get("values") if result.get("ok") else None
            if len(values) == 2:
                self.inspector.set_values(expression, values["value"], values["grad"])

        self.requests.ask("values", lambda r: show(r, "value"), expression=expression)
        self.requests.ask("values", lambda r: show(r, "grad"), expression=expression, grad=True)

    def _refresh_inspector(self) -> None:
        """The inspected tensor as the step in view has it (a past step's from its record, else asked)."""
        expression, step = self._inspected, self.shown.step
        if expression is None:
            return
        if step.where == "past" or expression.startswith("⟨"):  # recorded, or an operation's result with no name
            summary = step.variables.get(expression)
            if summary is not None:
                self.inspector.show_tensor(expression, summary)
            return

        def show(result: dict[str, Any]) -> None:
            value = result.get("value") if result.get("ok") else None
            if value and value.get("type") in ("Tensor", "Parameter"):
                self.inspector.show_tensor(expression, value)

        self.requests.ask("evaluate", show, expression=expression)

    def _after_change(self, kind: str, result: dict[str, Any]) -> None:
        """A reply that may have changed the lesson: the run records it first, then the panels hear of it."""
        if self.shown.take_reply(kind, result):
            self.status.show_step(self.run.live_index + 1)
        self._evaluate_watches()

    def _after_action(self, kind: str, result: dict[str, Any]) -> None:
        """An autograd action's reply: recorded and shown (:meth:`_after_change`), then its result in the panel."""
        self._after_change(kind, result)
        self.backward_panel.show_result(kind, result, self.run.live_index)

    def _ask_action(self, request: str, kind: str, params: dict[str, Any]) -> None:
        """The Backward panel asks for an autograd action (preview, backward, autograd.grad)."""
        self.requests.ask(request, lambda result: self._after_action(kind, result), **params)

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
                self._after_change("console", result)

        self.requests.ask("evaluate", show, expression=expression)

    def _evaluate_watches(self) -> None:
        for expression in self.watch_view.expressions():
            self.requests.ask("evaluate", lambda result, e=expression: self.watch_view.set_result(e, result),
                              expression=expression)

    def _on_watch_view_expressions_changed(self, expressions: list[str]) -> None:
        settings.put("watch/expressions", list(expressions))
        self._evaluate_watches()

    # ---- editing ------------------------------------------------------------------------




    def toggle_breakpoint(self) -> None:
        """F9: set or clear a breakpoint on the cursor's line."""
        self.code_view.toggle_breakpoint()

    def _on_code_view_breakpoints_changed(self, breakpoints: dict[int, str | None]) -> None:
        if self.path is not None:
            self.session.set_breakpoints(str(self.path), self.predictions.breakpoints())

    def _on_code_view_source_edited(self) -> None:
        self.notes_view.set_source(self.code_view.source())
        self.files.autosave.edited()
        self.files.update_title()

    def _on_lesson_browser_lesson_activated(self, path: str) -> None:
        if self.path is None or self.workspace.open_path(path) != self.path:
            if not self.open_file(path):
                if self.path is not None:
                    self.lesson_browser.select_path(str(self.path))  # the lesson still open, not the one refused
                return
        self.docks["notes"].raise_()  # a chosen lesson opens on its notes (the list is a tab away)
        self.code_view.setFocus(Qt.FocusReason.OtherFocusReason)  # not the hidden list: Down moved its selection

    # ---- state --------------------------------------------------------------------------

    def _clear_pause_views(self) -> None:
        """Nothing of a pause on screen: a file opened, or a run started."""
        self.shown.set_run(self.run)
        self.code_view.set_error_line(None)
        self.backward_panel.clear()
        self.inspector.clear()
        self._inspected = None
        self._show_state()

    def _show_state(self) -> None:
        run = self.run
        self.status.show_run(self.session.state, run.live if run else None, run.ended if run else None,
                             self.path is not None, run.live_index + 1 if run and run.history is not None else None)
        if self.session.state == PAUSED and self.prediction_bar.prediction is not None:
            self.state_label.setText(tr(QUESTION_WAITS_INTO if self.predictions.steps_into else QUESTION_WAITS))

    def _update_actions(self) -> None:
        """Enable and label the run actions as :func:`~app.stepping_rules.allowed_actions` has them.

        Runs at every pause; an action is touched only when it changes (``QAction.setEnabled``
        updates every menu and toolbar button showing it: 30 µs a call, 32 calls a pause).
        """
        run, paused = self.run, self.session.state == PAUSED
        allowed = allowed_actions(WindowState(
            self.session.state, self.path is not None, run is not None and run.can_step_back(),
            run is not None and run.viewing is not None, self.files.edited_elsewhere,
            self.path is not None and self.files.revertible()))
        for name, on in allowed.items():
            _enable(getattr(self, f"act_{name}"), on)
        text = tr("&Continue") if paused else tr("&Start")
        if self.act_start.text() != text:
            self.act_start.setText(text)
            self.act_start.setIconText(icon_text(text))
            self.act_start.setToolTip(tr("Continue to the next breakpoint (F5)") if paused
                                      else tr("Start the lesson, pausing at its first line (F5)"))

    # ---- layout and language ------------------------------------------------------------

    def set_text_size(self, percent: int) -> None:
        """View > Text Size: the interface, the code and the output at ``percent`` of their usual size (kept)."""
        settings.put("view/text_size", percent)
        scale = apply_text_size(percent)
        self.code_view.set_text_scale(scale)
        self.console.set_text_scale(scale)
        self.graph_view.set_text_scale(scale)
        self.window_layout.set_text_scale(scale, self.toolbar)
        for size, action in self.text_size_actions.items():
            action.setChecked(size == percent)

    def set_high_contrast(self, on: bool) -> None:
        """View > High Contrast: every panel in black, white and bright marks, or in the usual colours (kept)."""
        settings.put("view/high_contrast", on)
        theme.set_high_contrast(on)
        restyle_icons(self)
        action = self.menu_actions["high_contrast"]
        if action.isChecked() != on:
            action.setChecked(on)

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
        self.window_layout.retranslate()
        retranslate_actions(self)
        self.prediction_bar.retranslate()
        retranslate_menus(self)
        for panel in (self.timeline, self.backward_panel, self.console, self.graph_view, self.variables_view,
                      self.inspector, self.stack_view, self.watch_view, self.code_view, self.node_list):
            panel.retranslate()
        self.files.update_title()
        self._update_actions()
        self._show_state_again()

    def _show_state_again(self) -> None:
        """The status bar as the state has it, after a change of language."""
        step = self.shown.step
        if step.where == "past":
            self.status.show_past(step.snapshot, step.index, step.live_index, step.over)
        elif self.session.state == RUNNING:
            self.state_label.setText(tr("Running… (F6 pauses, Shift+F5 stops)"))
        else:
            self._show_state()

    def reset_layout(self) -> None:
        """Put every dock back where it starts."""
        self.window_layout.reset()

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        self.window_layout.first_shown()

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self.window_layout.resized(event.size(), event.oldSize())

    def closeEvent(self, event: QCloseEvent) -> None:
        if not self.files.may_discard_changes():
            event.ignore()
            return
        self.window_layout.save()
        settings.put("variables/header", QByteArray(self.variables_view.header_state()))
        self.files.release()
        self.bridge.detach()
        self.session.close()
        event.accept()
