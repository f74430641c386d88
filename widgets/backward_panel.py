"""The backward panel: run backward() or torch.autograd.grad from a paused frame, see the .grads, replay the pass.

Features
--------
- A root picker over the frame's tensors that have a ``grad_fn`` or require grad, saying whether
  the chosen root is a scalar; the ``gradient`` option is automatic for a scalar and, for any
  other root, ``ones_like`` or an expression, with a one-line explanation of the
  vector-Jacobian product; ``retain_graph`` and ``create_graph`` checkboxes.
- **Preview gradients** (changes nothing in the lesson) and **Run backward()** (changes ``.grad``
  for real); a second tab holds a ``torch.autograd.grad`` form (outputs, inputs, grad_outputs,
  ``create_graph``, ``allow_unused``), so a second derivative can be taken from the UI.
- The form and the results side by side in a wide dock, one above the other in a narrow one; in a wide
  dock the replay controls are a strip of their own under both, always whole and in sight.
- Results: each tensor's ``.grad`` before → after, accumulation pointed out, a note when the
  graph's saved tensors were freed; a preview shows what the gradients would be.
- An error comes back as a teaching card: PyTorch's exact message (selectable), what it means,
  the fix and a link to the lesson that covers it. The panel stays usable.
- Replay of the pass node by node (play / pause, step back / forward, restart, 0.5–10 steps per
  second): each step is described in words and reported by :attr:`BackwardPanel.active_node_changed`
  for the graph view. Fed the graph data (:meth:`BackwardPanel.set_graph`,
  :meth:`BackwardPanel.apply_diff`), the description names where each gradient goes. A preview
  and a real backward of one graph list the same nodes, counted as backward functions and
  ``AccumulateGrad`` nodes.
- An opt-in **Drill** in the replay controls: before each backward function fires, the learner is
  asked for the gradients it sends (``grad_input``) from the one it receives and its saved tensors;
  judged like a prediction and kept in the lesson's progress (:mod:`app.backward_drill`,
  :class:`~widgets.backward_drill_view.DrillView`). ``AccumulateGrad`` leaves are not asked.
- A result that a later pause no longer matches (its graph rebuilt, its root recomputed, the
  ``.grad`` it showed changed, the graph it previewed freed) is cleared, replay and highlight
  included, with a sentence saying why; one that still matches stays, marked as from an earlier
  pause (see :class:`ResultBasis`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
from PySide6.QtCore import QEvent, QObject, QPoint, Qt, QTimer, Signal
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QApplication,
    QBoxLayout,
    QCheckBox,
    QComboBox,
    QFormLayout,
    QFrame,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QScrollArea,
    QSizePolicy,
    QSlider,
    QStyle,
    QTableWidget,
    QTableWidgetItem,
    QTabWidget,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from app.backward_drill import MAX_VALUES, BackwardDrill, question_for
from app.i18n import N_, join_words, tr
from app.messages import RESULTS_NAME
from app.progress import Progress
from app.result_basis import STALE_WHAT, ResultBasis, grad_key, has_freed, nodes_text, tensor_in
from app.value_text import full_text, value_text
from widgets.backward_drill_view import DrillView
from widgets.colours import change_highlight, readable_color
from widgets.error_card import ErrorCard
from widgets.translated_texts import TranslatedTexts

#: From this width on, the form and the results sit side by side.
SIDE_BY_SIDE_WIDTH = 560
#: Below this height a narrow panel scrolls the replay controls under the results, and a drill's question
#: scrolls with the form, instead of taking a strip of their own (it would leave the form a keyhole).
OWN_STRIP_HEIGHT = 360
#: The replay's description goes beside its controls when it gets at least this width there.
STEP_BESIDE_WIDTH = 280
#: Result rows shown before the table scrolls.
VISIBLE_ROWS = 12
#: Replay speeds, in steps per second; the slider moves in half steps.
MIN_SPEED, MAX_SPEED, DEFAULT_SPEED = 0.5, 10.0, 2.0

ONES_LIKE, EXPRESSION = "ones_like", "expression"

PREVIEW_TIP = N_("Computes the gradients with torch.autograd.grad(..., retain_graph=True): "
                 "changes nothing in the lesson")
BACKWARD_TIP = N_("Calls root.backward(...) for real: .grad changes (and the graph is freed unless "
                  "retain_graph) as if the line were in the script")
GRAD_TIP = N_("Returns the gradients without touching any .grad; they stay available to expressions as {results}")
ACCUMULATED_NOTE = N_("accumulated: .grad adds up across backward calls (zero it between steps)")
#: Why the requests are off, by the state that keeps them off.
OFF_TEXT = {
    "running": N_("The lesson is running: backward and autograd.grad run in a paused frame. "
                  "Pause it (F6) or step to a line first."),
    "past": N_("A past step is in view: backward and autograd.grad run in the live frame. "
               "Go to Live (Ctrl+Shift+F10) first."),
    "ended": N_("The run has ended: backward and autograd.grad run in a paused frame. "
                "Start the lesson again (F5) and step to a line."),
    "stopped": N_("The lesson is not running: start it (F5) and step to a line, then backward() "
                  "and autograd.grad run in the paused frame."),
}
LATER_TEXT = N_("The result of the live step was computed at step {step}, after the step in view: "
                "Go to Live to see it again.")
FREED_NOTE = N_("the graph's saved tensors were freed: a second backward needs retain_graph=True")
PREVIEW_NOTE = N_("preview: nothing changed in the lesson; Run backward() would add these to .grad")
EARLIER_TEXT = N_("From an earlier pause: the graph and the .grad values it shows have not changed since.")
DRILL_TIP = N_("Drill: before each backward function fires, work out the gradients it sends to its inputs from "
               "the gradient it receives and its saved tensors; judged like a prediction and kept in the lesson's "
               "progress. AccumulateGrad leaves are not asked.")
DRILL_TOO_BIG = N_("(the drill does not ask it: more than {n} values in a gradient or saved tensor to work out "
                   "by hand)")
EARLIER_GRAD_TEXT = N_("From an earlier pause: the graph has not changed since, but {results} belonged to that "
                       "pause (compute again to use the results in expressions).")


def _same(before: Mapping[str, Any] | None, after: Mapping[str, Any] | None) -> bool:
    if before is None or after is None:
        return before is after
    a, b = before.get("values"), after.get("values")
    return a is not None and b is not None and np.array_equal(a, b)


class BackwardPanel(QWidget):
    """Backward, autograd.grad and the replay of a backward pass, for the paused frame.

    The panel only asks: its ``*_requested`` signals carry the parameters, the main window runs
    them in the lesson process and hands the result dict back to :meth:`show_result`. Every
    pause's :meth:`set_snapshot` and :meth:`apply_diff` also check the shown result against
    the pause (see :class:`ResultBasis`), and a resume (``set_enabled_for_state(False)``)
    marks it as from an earlier pause.

    Parameters
    ----------
    parent : QWidget, optional
    progress : Progress, optional
        Where the drill's answers are recorded.
    lesson : callable, optional
        The file stem of the lesson on screen, for the progress.
    """

    preview_requested = Signal(dict)
    """Preview gradients was clicked: ``{"root", "gradient", "retain_graph", "create_graph"}``."""

    backward_requested = Signal(dict)
    """Run backward() was clicked: ``{"root", "gradient", "retain_graph", "create_graph"}``."""

    grad_requested = Signal(dict)
    """The autograd.grad form was sent: ``{"outputs", "inputs", "grad_outputs", "retain_graph", "create_graph",
    "allow_unused"}``; ``retain_graph`` is True (the default, so the lesson's graph survives) or None."""

    lesson_requested = Signal(str)
    """The learner asked for the lesson that explains an error; carries its file stem."""

    replay_step = Signal(dict)
    """The replay moved to a step; carries the engine's replay entry."""

    active_node_changed = Signal(int)
    """The node the replay is at changed; -1 when no step is shown (before the start or at the end)."""

    drill_judged = Signal(object)
    """A drill answer was judged and recorded in the progress; carries the :class:`~app.backward_drill.DrillVerdict`."""

    def __init__(self, parent: QWidget | None = None, progress: Progress | None = None,
                 lesson: Callable[[], str | None] | None = None) -> None:
        super().__init__(parent)
        self.drill = BackwardDrill(progress, lesson or (lambda: None))
        self._resume = False  # the replay was playing when the drill asked: it plays on after the answer
        self._vars: dict[str, Any] = {}
        self._nodes: dict[int, Mapping[str, Any]] = {}
        self._roots: dict[str, int] = {}
        self._leaf_names: dict[int, str] = {}
        self._basis: ResultBasis | None = None
        self._notes: list[str] = []
        self._replay: list[dict[str, Any]] = []
        self._replay_kind = ""
        self._replay_failed = False
        self._position = -1
        self._paused = True
        self._timer = QTimer(self)
        self._timer.timeout.connect(self._on_timer_timeout)
        self._texts = TranslatedTexts()
        self._why_off = "running"
        self._stale_kind = "preview"  # what the cleared result was
        self._shown: tuple[str, Mapping[str, Any]] | None = None  # the result on screen, to show it again
        self._result_step: int | None = None  # the run's step the result belongs to
        self._hidden_for_past: dict[QWidget, bool] | None = None  # while a past step hides a later result
        self._freshness: tuple[str, str | None] | None = None  # ("stale", reason) or ("earlier", None)

        self.state_label = QLabel()
        self.state_label.setWordWrap(True)
        self.state_label.setStyleSheet(f"color: {readable_color('#8a5a00', '#ffcc80').name()};")
        self.state_label.hide()
        tabs = QTabWidget()
        tabs.addTab(self._build_backward_form(), "backward()")
        tabs.addTab(self._build_grad_form(), "torch.autograd.grad")
        self.tabs = tabs
        tabs.currentChanged.connect(self._on_tabs_current_changed)
        self._on_tabs_current_changed(tabs.currentIndex())

        self.card = ErrorCard()
        self.card.lesson_requested.connect(self.lesson_requested)
        self.card.hide()
        # The card scrolls on its own, no taller than the panel shows: a long error in the wide dock's results
        # column would otherwise push the form, buttons and all, out of sight (see _fit_card).
        self._card_box = QScrollArea()
        self._card_box.setFrameShape(QFrame.Shape.NoFrame)
        self._card_box.setWidgetResizable(True)
        self._card_box.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self._card_box.setWidget(self.card)
        self._card_box.hide()
        self.card.installEventFilter(self)
        self.freshness_label = QLabel()
        self.freshness_label.setObjectName("result_freshness")
        self.freshness_label.setWordWrap(True)
        self.freshness_label.hide()
        self.results_title = QLabel()
        self.results_title.setWordWrap(True)
        self.results_title.setStyleSheet("font-weight: bold;")
        self.table = QTableWidget(0, 3)
        self.table.setObjectName("grad_table")
        self.table.verticalHeader().hide()
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.Stretch)
        self.notes = QLabel()
        self.notes.setObjectName("result_notes")
        self.notes.setWordWrap(True)
        self.notes.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

        tabs.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Maximum)
        self._form_side = form_side = QVBoxLayout()
        form_side.addWidget(self.state_label)
        form_side.addWidget(tabs)
        form_side.addStretch(1)
        self._result_side = result_side = QVBoxLayout()
        result_side.addWidget(self.freshness_label)
        result_side.addWidget(self.results_title)
        result_side.addWidget(self.table)
        result_side.addWidget(self.notes)
        result_side.addStretch(1)
        content = QWidget()
        self._column = column = QVBoxLayout(content)
        column.setContentsMargins(0, 0, 0, 0)
        column.addWidget(self._card_box)  # narrow: the whole width, PyTorch's long messages wrap onto few lines
        # Side by side in a wide, short dock (the window's bottom strip), so the results are in
        # sight beside the form; one above the other in a narrow one.
        self._sides = QBoxLayout(QBoxLayout.Direction.LeftToRight)
        self._sides.addLayout(form_side, 1)
        self._sides.addLayout(result_side, 1)
        column.addLayout(self._sides, 1)
        # A narrow dock scrolls the form and the results; the replay controls stay in sight below.
        scroll = QScrollArea()
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        scroll.setWidgetResizable(True)
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        scroll.setWidget(content)
        self._scroll = scroll
        self._outer = layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(scroll, 1)
        layout.addWidget(self._build_replay_bar())
        self.clear()

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 - Qt override
        super().resizeEvent(event)
        self._place_replay_bar()
        self._fit_card()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt override
        if watched is self.card and event.type() in (QEvent.Type.ShowToParent, QEvent.Type.HideToParent):
            self._card_box.setVisible(event.type() == QEvent.Type.ShowToParent)  # the box comes and goes with it
            if self.card.isVisibleTo(self._card_box):
                self._fit_card()
        return super().eventFilter(watched, event)

    def _fit_card(self) -> None:
        """As tall as the card's text at its width, up to what leaves the form's buttons in sight."""
        viewport = self._scroll.viewport().height()
        wide = self._sides.direction() == QBoxLayout.Direction.LeftToRight
        # wide, the card heads the results column beside the form; narrow, it heads the form
        room = viewport if wide else viewport - self.tabs.sizeHint().height() - self._column.spacing()
        width = self._card_box.viewport().width() or self._card_box.width()
        needed = self.card.heightForWidth(width) if self.card.hasHeightForWidth() else self.card.sizeHint().height()
        self._card_box.setFixedHeight(max(min(needed, room), min(needed, 80)))

    def _place_replay_bar(self) -> None:
        size = self.size()
        wide = size.width() >= SIDE_BY_SIDE_WIDTH
        # short, but wide enough for the controls: in a narrower dock they would widen the form past its view
        short = (size.height() < OWN_STRIP_HEIGHT
                 and size.width() >= self.replay_bar.minimumSizeHint().width() + 24)
        self._sides.setDirection(QBoxLayout.Direction.LeftToRight if wide else QBoxLayout.Direction.TopToBottom)
        # An error card heads the results beside the form in a wide dock (the form stays where it is), the
        # whole width above the form in a narrow one.
        card_home = self._result_side if wide else self._column
        if card_home.indexOf(self._card_box) < 0:
            self._column.removeWidget(self._card_box)
            self._result_side.removeWidget(self._card_box)
            card_home.insertWidget(0, self._card_box)
        # Wide: a strip of their own under the scroll area, always whole and in sight, its description
        # beside the controls (a line or two high: the form and the results keep the height they need);
        # drilling in a short dock, under both sides in the scroll area, the whole width for the question,
        # scrolled to when it asks; narrow and short: under the results, which then sit right under the
        # buttons (both in sight); narrow and tall: under everything, always in sight.
        drilling = self.drill_check.isChecked()
        home = self._result_side if short and not wide else self._column if short and drilling else self._outer
        if home.indexOf(self.replay_bar) < 0:
            for layout in (self._form_side, self._result_side, self._outer, self._column):
                layout.removeWidget(self.replay_bar)
            if home is self._result_side:
                home.insertWidget(home.count() - 1, self.replay_bar)  # before the closing stretch
            else:
                home.addWidget(self.replay_bar)
        self._place_step_label(size.width())

    def _place_step_label(self, width: int) -> None:
        """Beside the controls where it has room (the bar stays a line or two high), else under them."""
        controls = sum(item.sizeHint().width() + self._controls.spacing() for i in range(self._controls.count())
                       if (item := self._controls.itemAt(i)).widget() is not self.step_label)
        beside = width - controls - 24 >= STEP_BESIDE_WIDTH  # 24: the margins of the panel and the bar
        if (self._controls.indexOf(self.step_label) >= 0) == beside:
            return
        self._controls.removeWidget(self.step_label)
        self._bar_layout.removeWidget(self.step_label)
        end = self._controls.count() - 1  # the closing stretch: the description takes its room
        self._controls.setStretch(end, 0 if beside else 1)
        if beside:
            self._controls.insertWidget(end, self.step_label, 1)
        else:
            self._bar_layout.insertWidget(2, self.step_label)

    # -- building -----------------------------------------------------------------------------

    def _build_backward_form(self) -> QWidget:
        self.root_combo = QComboBox()
        self.root_combo.setObjectName("root_combo")
        self._chosen_root: str | None = None  # what the learner picked, kept across pauses
        self.root_combo.activated.connect(self._on_root_combo_activated)
        self._texts.set(self.root_combo.setToolTip, "The tensor to call .backward() on: tensors of this frame "
                        "with a grad_fn or requires_grad=True")
        self.root_combo.currentIndexChanged.connect(self._on_root_combo_current_index_changed)
        self.root_info = QLabel()
        self.root_info.setWordWrap(True)  # a narrow form wraps it rather than widening the panel
        self.root_info.setObjectName("root_info")
        self.gradient_combo = QComboBox()
        self.gradient_combo.currentIndexChanged.connect(self._on_gradient_combo_current_index_changed)
        self.gradient_edit = QLineEdit()
        self._texts.set(self.gradient_edit.setPlaceholderText, "e.g. {example}", example="torch.tensor([1., 0.])")
        self.vjp_label = QLabel()
        self.vjp_label.setObjectName("vjp_note")
        self.vjp_label.setWordWrap(True)
        self.retain_check = QCheckBox("retain_graph")
        self._texts.set(self.retain_check.setToolTip, "Keep the graph's saved tensors so it can be walked again "
                        "(unticked: PyTorch's default, which is the value of create_graph)")
        self.create_check = QCheckBox("create_graph")
        self._texts.set(self.create_check.setToolTip,
                        "Record the backward pass itself as a graph, for higher-order derivatives")
        self.preview_button = QPushButton()
        self._texts.set(self.preview_button.setText, "Preview gradients")
        self.preview_button.clicked.connect(self._on_preview_button_clicked)
        self.backward_button = QPushButton()
        self._texts.set(self.backward_button.setText, "Run backward()")
        self.backward_button.clicked.connect(self._on_backward_button_clicked)

        root_row = QHBoxLayout()
        root_row.addWidget(self.root_combo, 1)
        root_row.addWidget(self.root_info, 1)  # room for "scalar · SumBackward0" on one line: the form stays short
        gradient_row = QHBoxLayout()
        gradient_row.addWidget(self.gradient_combo)
        gradient_row.addWidget(self.gradient_edit, 1)
        checks = QHBoxLayout()
        checks.addWidget(self.retain_check)
        checks.addWidget(self.create_check)
        checks.addStretch(1)
        buttons = QHBoxLayout()
        buttons.addWidget(self.preview_button)
        buttons.addWidget(self.backward_button)
        buttons.addStretch(1)
        form = QFormLayout()
        root_label = QLabel()
        self._texts.set(root_label.setText, "Root")
        form.addRow(root_label, root_row)
        form.addRow("gradient", gradient_row)
        page = QWidget()
        layout = QVBoxLayout(page)
        layout.setContentsMargins(6, 4, 6, 4)  # the short bottom dock: the buttons and the replay in sight
        layout.setSpacing(4)
        layout.addLayout(form)
        layout.addWidget(self.vjp_label)
        layout.addLayout(checks)
        layout.addLayout(buttons)
        layout.addStretch(1)
        return page

    def _build_grad_form(self) -> QWidget:
        self.outputs_edit = QLineEdit()
        self._texts.set(self.outputs_edit.setPlaceholderText, "e.g. {example}", example="loss")
        self.inputs_edit = QLineEdit()
        self._texts.set(self.inputs_edit.setPlaceholderText, "e.g. {example}", example="x, w")
        self.grad_outputs_edit = QLineEdit()
        self._texts.set(self.grad_outputs_edit.setPlaceholderText, "for non-scalar outputs, e.g. {example}",
                        example="torch.ones_like(y)")
        for edit in (self.outputs_edit, self.inputs_edit, self.grad_outputs_edit):
            self._texts.set(edit.setToolTip, "Comma-separated expressions. A second derivative: inputs x with "
                            "create_graph, then outputs {results}[0].sum()", results=RESULTS_NAME)
        self.grad_create_check = QCheckBox("create_graph")
        self._texts.set(self.grad_create_check.setToolTip,
                        "Make the results differentiable: needed to take a second derivative")
        self.allow_unused_check = QCheckBox("allow_unused")
        self._texts.set(self.allow_unused_check.setToolTip,
                        "Give None for an input the outputs do not depend on instead of an error")
        self.grad_retain_check = QCheckBox("retain_graph")
        self.grad_retain_check.setChecked(True)  # the lesson's own next lines may walk the same graph
        self._texts.set(self.grad_retain_check.setToolTip,
                        "Keep the graph's saved tensors, so the lesson's own backward() on this graph still works "
                        "afterwards (unticked: PyTorch's default, which frees them unless create_graph is ticked)")
        self.grad_free_warning = QLabel()
        self.grad_free_warning.setObjectName("grad_free_warning")
        self.grad_free_warning.setWordWrap(True)
        self.grad_free_warning.setStyleSheet(f"color: {readable_color('#8a5a00', '#ffcc80').name()};")
        self._texts.set(self.grad_free_warning.setText,
                        "Unticked, Compute frees the saved tensors of the outputs' graph: a later backward() "
                        "through it, in the lesson or here, raises “Trying to backward through the graph a "
                        "second time”.")
        self.grad_free_warning.hide()
        self.grad_retain_check.toggled.connect(self._show_grad_free_warning)
        self.grad_create_check.toggled.connect(self._show_grad_free_warning)
        self.grad_button = QPushButton()
        self._texts.set(self.grad_button.setText, "Compute {call}", call="torch.autograd.grad")
        self.grad_button.clicked.connect(self._on_grad_button_clicked)
        checks = QHBoxLayout()
        checks.addWidget(self.grad_retain_check)
        checks.addWidget(self.grad_create_check)
        checks.addWidget(self.allow_unused_check)
        checks.addStretch(1)
        form = QFormLayout()
        form.addRow("outputs", self.outputs_edit)
        form.addRow("inputs", self.inputs_edit)
        form.addRow("grad_outputs", self.grad_outputs_edit)
        form.addRow("", checks)
        form.addRow("", self.grad_free_warning)
        page = QWidget()
        layout = QVBoxLayout(page)
        layout.addLayout(form)
        row = QHBoxLayout()
        row.addWidget(self.grad_button)
        row.addStretch(1)
        layout.addLayout(row)
        layout.addStretch(1)
        return page

    def _build_replay_bar(self) -> QWidget:
        style = self.style()
        self.restart_button = self._tool_button(style.standardIcon(QStyle.StandardPixmap.SP_MediaSkipBackward),
                                                N_("Restart the replay from the root"))
        self.back_button = self._tool_button(style.standardIcon(QStyle.StandardPixmap.SP_MediaSeekBackward),
                                             N_("Step back one node"))
        self.play_button = self._tool_button(style.standardIcon(QStyle.StandardPixmap.SP_MediaPlay),
                                             N_("Play the backward pass node by node"))
        self.forward_button = self._tool_button(style.standardIcon(QStyle.StandardPixmap.SP_MediaSeekForward),
                                                N_("Step forward one node"))
        self.restart_button.clicked.connect(self.restart_replay)
        self.back_button.clicked.connect(self.step_back)
        self.play_button.clicked.connect(self._on_play_button_clicked)
        self.forward_button.clicked.connect(self.step_forward)
        self.speed_slider = QSlider(Qt.Orientation.Horizontal)
        self.speed_slider.setRange(int(MIN_SPEED * 2), int(MAX_SPEED * 2))
        self.speed_slider.setValue(int(DEFAULT_SPEED * 2))
        self.speed_slider.setMaximumWidth(120)
        self._texts.set(self.speed_slider.setToolTip, "Replay speed, in nodes per second")
        self.speed_slider.valueChanged.connect(self._on_speed_slider_value_changed)
        self.speed_label = QLabel()
        self.step_label = QLabel()
        self.step_label.setObjectName("replay_step")
        self.step_label.setWordWrap(True)
        self.step_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        controls = QHBoxLayout()
        controls.setContentsMargins(0, 0, 0, 0)
        replay_label = QLabel()
        self._texts.set(replay_label.setText, "Replay")
        controls.addWidget(replay_label)
        for button in (self.restart_button, self.back_button, self.play_button, self.forward_button):
            controls.addWidget(button)
        controls.addSpacing(8)
        controls.addWidget(self.speed_slider)
        controls.addWidget(self.speed_label)
        self.drill_check = QCheckBox()
        self.drill_check.setObjectName("drill_check")
        self._texts.set(self.drill_check.setText, "Drill")
        self._texts.set(self.drill_check.setToolTip, DRILL_TIP)
        self.drill_check.toggled.connect(self._on_drill_check_toggled)
        controls.addSpacing(8)
        controls.addWidget(self.drill_check)
        controls.addStretch(1)
        self._controls = controls
        self.drill_view = DrillView(self.drill)
        self.drill_view.judged.connect(self._on_drill_view_judged)
        self.drill_view.skipped.connect(self._on_drill_view_skipped)
        bar = QFrame()
        bar.setFrameShape(QFrame.Shape.StyledPanel)
        layout = QVBoxLayout(bar)
        layout.setContentsMargins(6, 4, 6, 4)
        layout.addLayout(controls)
        layout.addWidget(self.drill_view)
        layout.addWidget(self.step_label)
        self._bar_layout = layout
        self.replay_bar = bar
        self._on_speed_slider_value_changed(self.speed_slider.value())
        return bar

    def _tool_button(self, icon: Any, tip: str) -> QToolButton:
        button = QToolButton()
        button.setIcon(icon)
        self._texts.set(button.setToolTip, tip)
        button.setAutoRaise(True)
        return button

    # -- public API -----------------------------------------------------------------------------

    def set_snapshot(self, variables: Mapping[str, Any]) -> None:
        """Offer the frame's tensors that have a ``grad_fn`` or require grad as roots.

        Parameters
        ----------
        variables : dict
            A snapshot's ``vars``: ``{name: summary}``. The current root stays chosen while it exists.
            A shown result these variables no longer match is cleared.
        """
        self._vars = dict(variables)
        if self._basis is not None:
            self._drop_if_stale(self._basis.after_snapshot(self._vars))
        current = self.root_combo.currentText()
        names = [name for name, s in variables.items()
                 if s.get("type") in ("Tensor", "Parameter") and (s.get("grad_fn") or s.get("requires_grad"))]
        self.root_combo.blockSignals(True)
        self.root_combo.clear()
        self.root_combo.addItems(names)
        self.root_combo.blockSignals(False)
        if current in names and current == self._chosen_root:
            self.root_combo.setCurrentText(current)
        elif names:
            self.root_combo.setCurrentIndex(names.index(self._default_root(names)))
        self._show_root()

    def set_graph(self, graph: Mapping[str, Any]) -> None:
        """Learn the pause's graph (as :meth:`GraphView.set_graph` gets it), to name where gradients go."""
        known = self._nodes.keys()
        self._nodes = {node["id"]: node for node in graph.get("nodes", [])}
        self._roots = dict(graph.get("roots", {}))
        self._leaf_names = {int(i): name for i, name in graph.get("leaves", {}).items()}
        if self._basis is not None:
            gone = [i for i in self._basis.nodes if i in known and i not in self._nodes]
            self._drop_if_stale(self._basis.after_graph(gone, self._roots, list(self._nodes.values())))

    def apply_diff(self, diff: Mapping[str, Any]) -> None:
        """Bring the graph learnt by :meth:`set_graph` up to date with one pause's diff.

        A shown result the changed graph no longer matches is cleared.
        """
        if not diff.get("changed", True):
            return
        for node_id in diff.get("removed", []):
            self._nodes.pop(node_id, None)
        for node in [*diff.get("added", []), *diff.get("updated", [])]:
            self._nodes[node["id"]] = node
        self._roots = dict(diff.get("roots", self._roots))
        self._leaf_names = {int(i): name for i, name in diff.get("leaves", self._leaf_names).items()}
        if self._basis is not None:
            self._drop_if_stale(self._basis.after_graph(diff.get("removed", []), diff.get("roots"),
                                                        diff.get("updated", [])))

    def show_result(self, kind: str, result: Mapping[str, Any], step: int | None = None) -> None:
        """Show what a request did.

        Parameters
        ----------
        kind : {"preview", "backward", "grad"}
            The request that produced ``result``.
        result : dict
            The dict :class:`app.lesson.autograd_actions.AutogradActions` returned for it.
        step : int, optional
            The run's step (history index) the result belongs to; a past step before it hides it
            (:meth:`show_past`).
        """
        self._result_step = step
        error = result.get("error")
        self.card.setVisible(error is not None)
        if error is not None:
            self.card.show_error(error)
            # Once laid out, scroll so the whole card, lesson link included, is in sight.
            QTimer.singleShot(0, self, self._fit_card)
            QTimer.singleShot(0, self, lambda: self._scroll.ensureWidgetVisible(self._card_box, 0, 0))
        self._basis = self._basis_of(kind, result)
        self._freshness = None
        self.freshness_label.hide()
        self._shown = (kind, result)
        self._show_texts(kind, result)
        self._load_replay(kind, list(result.get("replay", [])), failed=error is not None)
        if error is None:  # in a short panel the results are below the form: bring them into sight
            QTimer.singleShot(0, self, self._scroll_to_results)

    def _scroll_to_results(self) -> None:
        """Scroll as little as brings the results' title and first rows into sight: the buttons above
        stay in sight where the panel allows both, for the next Preview or Run."""
        peek = 2 * self.table.verticalHeader().defaultSectionSize()
        top = self.results_title.mapTo(self._scroll.widget(), QPoint(0, 0)).y()
        needed = top + self.results_title.height() + peek
        down = self._scroll.verticalScrollBar()  # down only: a narrow dock's form must not slide sideways
        if needed > down.value() + self._scroll.viewport().height():
            down.setValue(min(top, needed - self._scroll.viewport().height()))

    def _show_texts(self, kind: str, result: Mapping[str, Any]) -> None:
        """The result's title, table and notes, in the current language."""
        error = result.get("error")
        rows = list(result.get("grads", []))
        notes: list[str] = []
        if kind == "backward":
            changed = any(not _same(g.get("before"), g.get("after")) for g in rows)
            if error is None or changed:
                self._fill_backward(result, rows, notes)
            else:
                self._fill_rows("", (), [])
        else:
            self._fill_gradients(kind, result, rows, notes)
        vector = result.get("vector_jacobian_product") or (kind != "grad" and self._is_vector(result.get("root")))
        if vector and error is None:
            root = result.get("root") or tr("the root")
            v = f"v = {value_text(result['gradient'])}" if result.get("gradient") else tr("the gradient v you gave")
            notes.append(tr("{root} is not a scalar: these are vector-Jacobian products vᵀ·∂{root}/∂leaf, for {v}",
                            root=root, v=v))
        if self._basis is not None and self._basis.kind == "grad" and self._freshness == ("earlier", None):
            notes = [note for note in notes if RESULTS_NAME not in note]
        self._show_notes(notes)

    def retranslate(self) -> None:
        """Set every text again in the current language: the form, the result on screen, the replay."""
        self._texts.apply()
        self._show_root()
        self._show_off_text()
        self.card.retranslate()
        if self._shown is not None:
            self._show_texts(*self._shown)
        if self._freshness is not None:
            self._show_freshness()
        self._on_speed_slider_value_changed(self.speed_slider.value())
        self._set_playing(self.is_playing())
        self._describe_position()
        self.drill_view.retranslate()

    def show_past(self, step: int | None) -> None:
        """Show the result as it was at step ``step`` of the run (None: the live step).

        A result computed at a later step than the one in view is not that step's: it is hidden,
        and the panel says at which step it came; the live step shows it again as it was.
        """
        later = step is not None and self._shown is not None and self._result_step is not None \
            and step < self._result_step
        if later and self._hidden_for_past is None:
            widgets = (self.card, self.freshness_label, self.results_title, self.table, self.notes, self.replay_bar)
            self._hidden_for_past = {widget: widget.isVisibleTo(self) for widget in widgets}
            self._set_playing(False)
            for widget in widgets:
                widget.hide()
        elif not later and self._hidden_for_past is not None:
            for widget, visible in self._hidden_for_past.items():
                widget.setVisible(visible)
            self._hidden_for_past = None
        self._show_off_text()

    def clear(self) -> None:
        """Forget the snapshot, the graph, the results and the replay."""
        self._vars = {}
        self._nodes, self._roots, self._leaf_names = {}, {}, {}
        self.root_combo.clear()
        self._show_root()
        self._clear_result()
        self._freshness = None
        self.freshness_label.hide()

    def forget_expressions(self) -> None:
        """Another lesson: drop what the learner typed or chose for this one (the root, the form's expressions
        and options; retain_graph is ticked again, so the new lesson's graph survives the form)."""
        self._chosen_root = None
        for edit in (self.outputs_edit, self.inputs_edit, self.grad_outputs_edit):
            edit.clear()
        self.grad_retain_check.setChecked(True)
        self.grad_create_check.setChecked(False)
        self.allow_unused_check.setChecked(False)

    def _show_grad_free_warning(self) -> None:
        """Warn while the form would free the graph (retain_graph unticked, and create_graph, which keeps it, too)."""
        self.grad_free_warning.setVisible(not self.grad_retain_check.isChecked()
                                          and not self.grad_create_check.isChecked())

    def set_enabled_for_state(self, paused: bool, why: str = "running") -> None:
        """Allow requests only while the lesson is paused; otherwise say why they are off.

        ``why`` is the state that keeps them off: ``running``, ``past`` (a past step is in
        view), ``ended`` or ``stopped`` (no run yet); each has its own sentence.
        """
        self._paused = paused
        if not paused and why == "running":
            if self._basis is None:
                self._freshness = None
                self.freshness_label.hide()  # why a result was cleared is news at that pause only
            else:
                self._basis.earlier = True  # shown as such at the next pause, if that pause still matches it
        elif self._basis is not None and paused and self._basis.earlier:
            self._show_earlier()
        self._why_off = why
        self._show_off_text()
        self._update_buttons()

    def _show_off_text(self) -> None:
        """Why requests are off (nothing while paused), and where a hidden later result came from."""
        text = "" if self._paused else tr(OFF_TEXT.get(self._why_off, OFF_TEXT["running"]))
        if self._hidden_for_past is not None:
            text += " " + tr(LATER_TEXT, step=self._result_step + 1)
        self.state_label.setText(text)
        self.state_label.setVisible(bool(text))

    def replay_position(self) -> int:
        """The index of the replay step shown: -1 before the first, ``len(replay)`` once finished."""
        return self._position

    def step_forward(self) -> None:
        """Show the next node of the replay (or the end); with the drill on, a backward function is asked first."""
        if self.drill_view.asking:  # the step waits for the answer (or a skip)
            self._resume = self._resume or self.is_playing()
            self._set_playing(False)
            return
        question = self.drill.question_at(self._position + 1)
        if question is not None:
            self._resume = self.is_playing()
            self._set_playing(False)
            self.active_node_changed.emit(question.node_id)  # the graph shows which node is asked
            self.drill_view.ask()
            QTimer.singleShot(0, self, self._scroll_to_drill)  # once laid out
            return
        if self._position < len(self._replay):
            self._go_to(self._position + 1)
        if self._position >= len(self._replay):
            self._set_playing(False)

    def step_back(self) -> None:
        """Show the previous node of the replay (an open drill question closes, unanswered)."""
        self._set_playing(False)
        self._close_question()
        if self._position > -1:
            self._go_to(self._position - 1)

    def restart_replay(self) -> None:
        """Go back to before the first node; a playing replay keeps playing from there, and the drill asks again."""
        self._close_question()
        self.drill.rearm()
        self._go_to(-1)

    def play(self) -> None:
        """Play the replay from where it is (from the start when it had finished)."""
        if not self._replay:
            return
        if self.drill_view.asking:  # it plays on once the question is answered or skipped
            self._resume = True
            return
        if self._position >= len(self._replay):
            self._go_to(-1)
        self._set_playing(True)

    def pause(self) -> None:
        """Stop the replay where it is."""
        self._resume = False
        self._set_playing(False)

    def is_playing(self) -> bool:
        """Whether the replay is advancing on its timer."""
        return self._timer.isActive()

    # -- handlers ------------------------------------------------------------------------------

    def _on_tabs_current_changed(self, index: int) -> None:
        # As tall as the page shown: the taller autograd.grad form would leave a gap under the backward()
        # buttons that pushes the replay controls down in the short bottom dock.
        for i in range(self.tabs.count()):
            page = self.tabs.widget(i)
            vertical = QSizePolicy.Policy.Preferred if i == index else QSizePolicy.Policy.Ignored
            page.setSizePolicy(QSizePolicy.Policy.Preferred, vertical)
        self.tabs.updateGeometry()

    def _on_root_combo_current_index_changed(self, _index: int) -> None:
        self._show_root()

    def _on_gradient_combo_current_index_changed(self, _index: int) -> None:
        self.gradient_edit.setEnabled(self.gradient_combo.currentData() == EXPRESSION)

    def _on_preview_button_clicked(self) -> None:
        self.preview_requested.emit(self._backward_params())

    def _on_backward_button_clicked(self) -> None:
        self.backward_requested.emit(self._backward_params())

    def _on_grad_button_clicked(self) -> None:
        grad_outputs = _split(self.grad_outputs_edit.text())
        self.grad_requested.emit({
            "outputs": _split(self.outputs_edit.text()),
            "inputs": _split(self.inputs_edit.text()),
            "grad_outputs": grad_outputs or None,
            "retain_graph": True if self.grad_retain_check.isChecked() else None,
            "create_graph": self.grad_create_check.isChecked(),
            "allow_unused": self.allow_unused_check.isChecked(),
        })

    def _on_play_button_clicked(self) -> None:
        if self.is_playing():
            self.pause()
        else:
            self.play()

    def _on_speed_slider_value_changed(self, value: int) -> None:
        speed = value / 2
        self.speed_label.setText(tr("{speed} nodes/s", speed=f"{speed:g}"))
        self._timer.setInterval(round(1000 / speed))

    def _on_timer_timeout(self) -> None:
        self.step_forward()

    # -- the drill ---------------------------------------------------------------------------

    def _on_drill_check_toggled(self, on: bool) -> None:
        self.drill.enabled = on
        self._place_replay_bar()
        QTimer.singleShot(0, self, self._scroll_to_drill)  # where it moved into the scroll area, into sight
        if not on and self.drill_view.asking:
            self._close_question()
            self._go_to(self._position)  # the graph marks the step shown again, not the node asked

    def _on_drill_view_judged(self, verdict: Any) -> None:
        self.drill_judged.emit(verdict)
        self._fire(verdict.question.position)

    def _on_drill_view_skipped(self, question: Any) -> None:
        self._fire(question.position)

    def _fire(self, position: int) -> None:
        """The question is done with: the node fires, as a step does without the drill."""
        self._go_to(position)
        self._play_on()

    def _scroll_to_drill(self) -> None:
        """Where the replay bar scrolls with the form and results: the controls and the question in sight."""
        if self._outer.indexOf(self.replay_bar) < 0:
            # the bar may have just moved into the scroll area: lay it out there before scrolling to it
            QApplication.sendPostedEvents(None, QEvent.Type.LayoutRequest)
            self._scroll.ensureWidgetVisible(self.replay_bar, 0, 0)
            self._scroll.ensureWidgetVisible(self.drill_view, 0, 0)

    def _play_on(self) -> None:
        if self._resume and self._position < len(self._replay):
            self._set_playing(True)
        self._resume = False

    def _close_question(self) -> None:
        if self.drill_view.asking:
            self.drill_view.close_question()
            self._resume = False

    def _drill_questions(self, kind: str, replay: list[dict[str, Any]]) -> list[Any]:
        """The replay's questions, with the saved tensors the graph knew before the pass (a backward frees them)."""
        root = (self._shown[1].get("root") if self._shown is not None else None) if kind != "grad" else "autograd.grad"
        questions = []
        for position, entry in enumerate(replay):
            node = self._nodes.get(entry["id"])
            targets = [self._label(child) for child, _ in node.get("next", [])] if node else []
            question = question_for(entry, position, node, targets, root)
            if question is not None:
                questions.append(question)
        return questions

    # -- the backward form --------------------------------------------------------------------

    def _on_root_combo_activated(self, index: int) -> None:
        self._chosen_root = self.root_combo.itemText(index)

    def _default_root(self, names: list[str]) -> str:
        """The last scalar computed by an operation (usually the loss), else the last computed tensor."""
        computed = [n for n in names if self._vars[n].get("grad_fn")]
        scalars = [n for n in computed if self._vars[n].get("numel") == 1]
        return (scalars or computed or names)[-1]

    def _root(self) -> str | None:
        return self.root_combo.currentText() or None

    def _is_vector(self, name: str | None) -> bool:
        summary = self._vars.get(name or "")
        return summary is not None and summary.get("numel", 1) != 1

    def _show_root(self) -> None:
        root = self._root()
        summary = self._vars.get(root or "")
        vector = self._is_vector(root)
        if summary is None:
            self.root_info.setText(tr("no tensor of this frame requires grad"))
        else:
            shape = summary.get("shape", [])
            what = tr("scalar") if not vector else tr("{shape}, not a scalar", shape=f"[{', '.join(map(str, shape))}]")
            origin = summary.get("grad_fn") or tr("leaf")
            self.root_info.setText(f"{what} · {origin}")
        self.gradient_combo.blockSignals(True)
        self.gradient_combo.clear()
        if vector:
            self.gradient_combo.addItem(f"ones_like({root})", ONES_LIKE)
            self.gradient_combo.addItem(tr("expression:"), EXPRESSION)
            self.gradient_combo.setToolTip(tr("The vector v of the vector-Jacobian product"))
        else:
            self.gradient_combo.addItem(tr("automatic: 1 for a scalar"), None)
            self.gradient_combo.setToolTip(tr("A scalar root starts backward from d(root)/d(root) = 1"))
        self.gradient_combo.blockSignals(False)
        self.gradient_combo.setEnabled(vector)
        self.gradient_edit.setEnabled(False)  # the combo starts on its first choice again
        self.gradient_edit.setVisible(vector)
        self.vjp_label.setText(tr("{root} is not a scalar: backward computes the vector-Jacobian product "
                                  "vᵀ·∂{root}/∂leaf, v being the gradient; v = ones_like({root}) gives the "
                                  "gradient of {root}.sum().", root=root) if vector else "")
        self.vjp_label.setVisible(vector)
        self._update_buttons()

    def _backward_params(self) -> dict[str, Any]:
        root = self._root()
        choice = self.gradient_combo.currentData()
        gradient = None
        if choice == ONES_LIKE:
            gradient = f"torch.ones_like({root})"
        elif choice == EXPRESSION:
            gradient = self.gradient_edit.text().strip() or None
        return {
            "root": root,
            "gradient": gradient,
            "retain_graph": True if self.retain_check.isChecked() else None,
            "create_graph": self.create_check.isChecked(),
        }

    def _update_buttons(self) -> None:
        has_root = self._root() is not None
        reason = "" if self._paused else tr("Only while the lesson is paused")
        for button, tip in ((self.preview_button, PREVIEW_TIP), (self.backward_button, BACKWARD_TIP)):
            button.setEnabled(self._paused and has_root)
            button.setToolTip(reason or (tr(tip) if has_root else tr("No tensor of this frame requires grad")))
        self.grad_button.setEnabled(self._paused)
        self.grad_button.setToolTip(reason or tr(GRAD_TIP, results=RESULTS_NAME))

    # -- results -------------------------------------------------------------------------------

    def _fill_backward(self, result: Mapping[str, Any], rows: list[dict[str, Any]], notes: list[str]) -> None:
        title = f"{result.get('root', 'root')}.backward()"
        if result.get("error") is not None:
            title = tr("{call}: what changed before the error", call=title)
        cells = [(_row_name(g), g.get("before"), g.get("after")) for g in rows]
        self._fill_rows(title, (tr(".grad before"), tr("→ .grad after")), cells)
        if any(g.get("before") is not None and not _same(g.get("before"), g.get("after")) for g in rows):
            notes.append(tr(ACCUMULATED_NOTE))
        if result.get("freed"):
            notes.append(tr(FREED_NOTE))

    def _fill_gradients(self, kind: str, result: Mapping[str, Any], rows: list[dict[str, Any]],
                        notes: list[str]) -> None:
        if kind == "preview":
            title = tr("Preview of {call}", call=f"{result.get('root', 'root')}.backward()")
            header = tr("gradient would be")
            if result.get("error") is None:
                notes.append(tr(PREVIEW_NOTE))
        else:
            title, header = "torch.autograd.grad", tr("gradient")
            if rows and result.get("error") is None:
                notes.append(tr("the results are available to expressions as {first} … {last}; no .grad changed",
                                first=f"{RESULTS_NAME}[0]", last=f"{RESULTS_NAME}[{len(rows) - 1}]"))
        self._fill_rows(title if rows else "", ("", header), [(_row_name(g), None, g.get("grad")) for g in rows])

    def _fill_rows(self, title: str, headers: Sequence[str], cells: list[tuple[str, Any, Any]]) -> None:
        """Rows of name | before | after; a two-header table hides the before column."""
        self.results_title.setText(title)
        self.results_title.setVisible(bool(title))
        self.table.setVisible(bool(cells))
        self.table.setRowCount(len(cells))
        if headers:
            self.table.setHorizontalHeaderLabels([tr("tensor"), *headers])
        self.table.setColumnHidden(1, not headers or not headers[0])
        for row, (name, before, after) in enumerate(cells):
            self.table.setItem(row, 0, QTableWidgetItem(name))
            for column, summary in ((1, before), (2, after)):
                item = QTableWidgetItem(value_text(summary))
                item.setToolTip(full_text(summary))
                if column == 2 and headers and headers[0] and not _same(before, after):
                    item.setBackground(change_highlight())
                self.table.setItem(row, column, item)
        self._fit_table()

    def _fit_table(self) -> None:
        """As tall as its rows (up to a dozen), so the notes sit right under it."""
        rows = min(self.table.rowCount(), VISIBLE_ROWS)
        height = self.table.horizontalHeader().sizeHint().height() + 2 * self.table.frameWidth()
        height += sum(self.table.rowHeight(r) for r in range(rows))
        self.table.setFixedHeight(height)

    def _show_notes(self, notes: list[str]) -> None:
        self._notes = notes
        self.notes.setText("\n".join(f"• {note}" for note in notes))
        self.notes.setVisible(bool(notes))

    def _basis_of(self, kind: str, result: Mapping[str, Any]) -> ResultBasis:
        """What ``result`` rests on, read from it and from the pause it was asked in."""
        root = result.get("root") if kind != "grad" else None
        replay = list(result.get("replay", []))
        summary = tensor_in(self._vars, root) if root else None
        root_node = self._roots.get(root or "")
        if root_node is None and summary is not None and summary.get("grad_fn") and replay \
                and replay[0].get("name") == summary["grad_fn"]:
            root_node = replay[0]["id"]  # a backward from a tensor's grad_fn starts at that node
        rows = result.get("grads", [])
        if kind == "backward":
            grads = {g["name"]: grad_key(g.get("after")) for g in rows}
        elif kind == "preview":
            grads = {g["name"]: grad_key(t.get("grad")) for g in rows if (t := tensor_in(self._vars, g["name"]))}
        else:
            grads = {}
        nodes = frozenset(int(e["id"]) for e in replay)
        freed = {i for i in nodes if has_freed(self._nodes.get(i, {}))} | set(result.get("freed_nodes", []))
        return ResultBasis(kind, root, nodes, root_node,
                           None if summary is None else (summary.get("id"), summary.get("grad_fn")),
                           grads, frozenset(freed))

    def _drop_if_stale(self, reason: str | None) -> None:
        """Clear a result the lesson no longer matches, saying why; the graph's highlight goes too."""
        if reason is None or self._basis is None:
            return
        self._stale_kind = self._basis.kind
        self._basis = None
        self._clear_result()
        self.active_node_changed.emit(-1)
        self._freshness = ("stale", reason)
        self._show_freshness()

    def _show_earlier(self) -> None:
        grad = self._basis is not None and self._basis.kind == "grad"
        if grad:  # the lesson dropped the results at the resume: the note offering them is no longer true
            self._show_notes([note for note in self._notes if RESULTS_NAME not in note])
        self._freshness = ("earlier", None)
        self._show_freshness()

    def _show_freshness(self) -> None:
        """Say why a result was cleared, or that the one shown is from an earlier pause."""
        what, reason = self._freshness
        if what == "stale":
            # the reason was worded by ResultBasis when the result was cleared; what to do next follows it
            self.freshness_label.setText(f"{reason} {tr(STALE_WHAT[self._stale_kind][1])}")
            self.freshness_label.setStyleSheet(f"color: {readable_color('#8a5a00', '#ffcc80').name()};")
        else:
            grad = self._basis is not None and self._basis.kind == "grad"
            self.freshness_label.setText(tr(EARLIER_GRAD_TEXT, results=RESULTS_NAME) if grad else tr(EARLIER_TEXT))
            self.freshness_label.setStyleSheet("color: palette(placeholder-text);")
        self.freshness_label.show()

    def _clear_result(self) -> None:
        self.show_past(None)  # a result hidden for a past step is shown again before it goes
        self._basis = None
        self._shown = None
        self._result_step = None
        self.card.hide()
        self._fill_rows("", (), [])
        self._show_notes([])
        self._load_replay("", [], failed=False)

    # -- replay --------------------------------------------------------------------------------

    def _load_replay(self, kind: str, replay: list[dict[str, Any]], failed: bool) -> None:
        self._set_playing(False)
        self._resume = False
        self.drill_view.clear()
        self.drill.load(self._drill_questions(kind, replay))
        self._replay, self._replay_kind, self._replay_failed = replay, kind, failed
        self._position = -1
        for button in (self.restart_button, self.back_button, self.play_button, self.forward_button):
            button.setEnabled(bool(replay))
        self.speed_slider.setEnabled(bool(replay))
        self.replay_bar.setVisible(bool(replay))
        self._describe_position()

    def _go_to(self, position: int) -> None:
        self._position = max(-1, min(position, len(self._replay)))
        self._describe_position()
        if 0 <= self._position < len(self._replay):
            entry = self._replay[self._position]
            self._select_row(entry.get("variable"))
            self.replay_step.emit(entry)
            self.active_node_changed.emit(int(entry["id"]))
        else:
            self.active_node_changed.emit(-1)

    def _set_playing(self, playing: bool) -> None:
        if playing:
            self._timer.start()
        else:
            self._timer.stop()
        icon = QStyle.StandardPixmap.SP_MediaPause if playing else QStyle.StandardPixmap.SP_MediaPlay
        self.play_button.setIcon(self.style().standardIcon(icon))
        self.play_button.setToolTip(tr("Pause the replay") if playing else tr("Play the backward pass node by node"))

    def _select_row(self, name: str | None) -> None:
        """Select the results row of the leaf whose .grad this step fills in."""
        for row in range(self.table.rowCount()):
            if name is not None and self.table.item(row, 0).text() == name:
                self.table.selectRow(row)
                return

    def _counted(self) -> str:
        """The replay's nodes, as what they are: ``5 nodes (3 backward functions, 2 AccumulateGrad)``."""
        leaves = sum(1 for e in self._replay if e.get("kind") == "leaf")
        functions = len(self._replay) - leaves
        parts = [tr("1 backward function") if functions == 1 else tr("{n} backward functions", n=functions)] \
            if functions else []
        parts += [f"{leaves} AccumulateGrad"] if leaves else []
        return tr("{nodes} ({parts})", nodes=nodes_text(len(self._replay)), parts=tr(", ").join(parts))

    def _handed_back(self) -> bool:
        """Whether the pass returned the leaves' gradients instead of adding them to .grad."""
        return any(e.get("kind") == "leaf" and e.get("stored") is False for e in self._replay)

    def _describe_position(self) -> None:
        count = len(self._replay)
        if self._position < 0:
            if self._replay_failed:
                text = N_("{nodes} ran before the error: press play or step forward.")
            elif self._handed_back():
                text = N_("{nodes} in this pass, from the root toward the leaves; the AccumulateGrad nodes hand "
                          "their gradients back instead of adding them to .grad: press play or step forward.")
            else:
                text = N_("{nodes} ran in this pass, from the root toward the leaves: press play or step forward.")
            text = tr(text, nodes=self._counted()) if count else ""
        elif self._position >= count:
            text = self._ending()
        else:
            text = self._describe(self._replay[self._position])
            question = self.drill.questions.get(self._position)
            if self.drill.enabled and question is not None and question.too_big:
                text += " " + tr(DRILL_TOO_BIG, n=MAX_VALUES)
        self.step_label.setText(text)

    def _ending(self) -> str:
        counted = self._counted()
        if self._replay_failed:
            return tr("Stopped after {nodes}: the next node failed (see the error above).", nodes=counted)
        if self._replay_kind == "backward":
            return tr("Done: {nodes} ran and every reachable leaf's .grad is filled in.", nodes=counted)
        if self._handed_back():
            return tr("Done: {nodes}; the gradients were handed back and no .grad was changed.", nodes=counted)
        return tr("Done: {nodes} ran; no .grad was changed.", nodes=counted)

    def _describe(self, entry: Mapping[str, Any]) -> str:
        head = f"{self._position + 1}/{len(self._replay)} {entry.get('name', '?')}"
        if entry.get("kind") == "leaf":
            variable = entry.get("variable") or self._leaf_names.get(entry["id"]) or tr("the leaf")
            grad = entry.get("grad")
            received = [value_text(g) for g in entry.get("grads_in", []) if g is not None]
            received = join_words(received) if received else tr("no gradient")
            if entry.get("stored") is False:
                return tr("{head}: receives {grads}; backward() would add it to {variable}.grad, this pass hands it "
                          "back and {variable}.grad stays as it was", head=head, grads=received, variable=variable)
            if grad is None:
                return tr("{head}: receives {grads} for {variable}.grad", head=head, grads=received,
                          variable=variable)
            return tr("{head}: {variable}.grad becomes {value}", head=head, variable=variable,
                      value=value_text(grad))
        incoming = [value_text(g) for g in entry.get("grads_in", []) if g is not None]
        if self._position == 0:
            received = tr("starts from the gradient {grads}", grads=join_words(incoming)) if incoming \
                else tr("starts the pass")
        elif len(incoming) > 1:
            received = tr("receives grads {grads} from its outputs", grads=join_words(incoming))
        else:
            received = tr("receives grad {grad} from its output", grad=incoming[0] if incoming else "None")
        return tr("{head}: {received}, {sends}", head=head, received=received, sends=self._sends(entry))

    def _sends(self, entry: Mapping[str, Any]) -> str:
        """Where a node's gradients go, named from the graph when it is known."""
        grads = [g for g in entry.get("grads_out", []) if g is not None]
        if not grads:
            return tr("sends nothing on")
        node = self._nodes.get(entry["id"])
        targets = [self._label(child) for child, _ in node.get("next", [])] if node else []
        if len(targets) != len(grads):  # a gradient that is None for a real input: the pairing is lost
            return tr("sends {grads} on toward the leaves", grads=join_words([value_text(g) for g in grads]))
        return tr("sends {grads}", grads=join_words([tr("{grad} to {target}", grad=value_text(g), target=t)
                                                     for g, t in zip(grads, targets, strict=True)]))

    def _label(self, node_id: int) -> str:
        node = self._nodes.get(node_id, {})
        if node.get("kind") == "leaf":
            return self._leaf_names.get(node_id) or node.get("variable") or tr("a leaf")
        names = node.get("variables") or []
        name = node.get("name") or tr("a node")
        return f"{name} ({', '.join(names)})" if names else name


def _row_name(grad: Mapping[str, Any]) -> str:
    return grad["name"] if grad.get("is_leaf", True) else tr("{name} (retains grad)", name=grad["name"])


def _split(text: str) -> list[str]:
    """Comma-separated expressions, commas inside brackets kept: ``x, torch.ones(2, 3)``."""
    parts, depth, start = [], 0, 0
    for i, char in enumerate(text):
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
        elif char == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return [part.strip() for part in parts if part.strip()]
