"""The backward panel: run backward() or torch.autograd.grad from a paused frame, see the .grads, replay the pass.

Features
--------
- The ``backward()`` and ``torch.autograd.grad`` forms (:mod:`widgets.backward_forms`) in two tabs:
  Preview gradients (changes nothing in the lesson), Run backward() (changes ``.grad`` for real), and
  ``torch.autograd.grad``, so a second derivative can be taken from the UI.
- The form and the results side by side in a wide dock, one above the other in a narrow one; in a wide
  dock the replay bar (:mod:`widgets.replay_bar`) is a strip of its own under both, always whole and in sight.
- Results: each tensor's ``.grad`` before → after, accumulation pointed out, a note when the
  graph's saved tensors were freed; a preview shows what the gradients would be.
- An error comes back as a teaching card: PyTorch's exact message (selectable), what it means,
  the fix and a link to the lesson that covers it. The panel stays usable.
- The replay of the pass node by node, with an opt-in drill; the graph view marks the node it is at
  through the graph model. A preview and a real backward of one graph list the same nodes.
- A result that a later pause no longer matches (its graph rebuilt, its root recomputed, the
  ``.grad`` it showed changed, the graph it previewed freed) is cleared, replay and highlight
  included, with a sentence saying why; one that still matches stays, marked as from an earlier
  pause (see :class:`~app.result_basis.ResultBasis`).

The truth is :class:`~app.backward_form.BackwardForm`'s (requests, result, staleness, replay); the
graph is :class:`~app.graph_model.GraphModel`'s. The panel shows them and lays its parts out.
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
    QFrame,
    QHeaderView,
    QLabel,
    QScrollArea,
    QSizePolicy,
    QTableWidget,
    QTableWidgetItem,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from app.backward_drill import BackwardDrill
from app.backward_form import BackwardForm
from app.graph_model import GraphModel
from app.i18n import N_, tr
from app.messages import RESULTS_NAME
from app.progress import Progress
from app.result_basis import STALE_WHAT
from app.value_text import full_text, value_text
from widgets.backward_forms import BackwardTab, GradTab
from widgets.colours import change_highlight, keep_readable, readable_color, retint_changes
from widgets.error_card import ErrorCard
from widgets.replay_bar import ReplayBar
from widgets.theme import follow_palette

#: From this width on, the form and the results sit side by side.
SIDE_BY_SIDE_WIDTH = 560
#: Below this height a narrow panel scrolls the replay controls under the results, and a drill's question
#: scrolls with the form, instead of taking a strip of their own (it would leave the form a keyhole).
OWN_STRIP_HEIGHT = 360
#: Result rows shown before the table scrolls.
VISIBLE_ROWS = 12

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
PREDICTING_TEXT = N_("Predict first: answer or skip the question above the code (Esc skips). A preview or a "
                     "backward now would show, and change, what the line is about.")
LATER_TEXT = N_("The result of the live step was computed at step {step}, after the step in view: "
                "Go to Live to see it again.")
FREED_NOTE = N_("the graph's saved tensors were freed: a second backward needs retain_graph=True")
PREVIEW_NOTE = N_("preview: nothing changed in the lesson; Run backward() would add these to .grad")
EARLIER_TEXT = N_("From an earlier pause: the graph and the .grad values it shows have not changed since.")
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
    them in the lesson process and hands the result dict back to :meth:`show_result`. The result,
    its staleness and the replay are :attr:`form`'s; the graph they name is the graph model's.

    Parameters
    ----------
    graph_model : GraphModel
        The graph of the step in view, which the replay marks its node in.
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

    drill_judged = Signal(object)
    """A drill answer was judged and recorded in the progress; carries the :class:`~app.backward_drill.DrillVerdict`."""

    def __init__(self, graph_model: GraphModel, parent: QWidget | None = None, progress: Progress | None = None,
                 lesson: Callable[[], str | None] | None = None) -> None:
        super().__init__(parent)
        self.form = BackwardForm(graph_model, BackwardDrill(progress, lesson or (lambda: None)))
        self._notes: list[str] = []  # the result's notes, before an earlier pause takes some away
        self._hiding = False  # the result widgets are hidden for a past step before the result's
        self.state_label = QLabel()
        self.state_label.setWordWrap(True)
        keep_readable(self.state_label, "#8a5a00", "#ffcc80")
        self.state_label.hide()
        self.backward_tab = BackwardTab(self.form)
        self.backward_tab.preview_requested.connect(self.preview_requested)
        self.backward_tab.backward_requested.connect(self.backward_requested)
        self.grad_tab = GradTab(self.form)
        self.grad_tab.grad_requested.connect(self.grad_requested)
        self.tabs = QTabWidget()
        self.tabs.addTab(self.backward_tab, "backward()")
        self.tabs.addTab(self.grad_tab, "torch.autograd.grad")
        self.tabs.currentChanged.connect(self._on_tabs_current_changed)
        self._on_tabs_current_changed(self.tabs.currentIndex())
        self.replay_bar = ReplayBar(self.form.replay)
        self.replay_bar.drill_judged.connect(self.drill_judged)
        self.replay_bar.drill_toggled.connect(self._on_replay_bar_drill_toggled)
        self._build_results()
        self._lay_out()
        self.form.result_changed.connect(self._on_form_result_changed)
        self.form.freshness_changed.connect(self._on_form_freshness_changed)
        self.form.state_changed.connect(self._on_form_state_changed)
        self.form.replay.moved.connect(self._on_replay_moved)
        self.form.replay.asked.connect(self._on_replay_asked)
        self._on_form_result_changed()
        self._on_form_freshness_changed()
        follow_palette(self, self._restyle)

    def _build_results(self) -> None:
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
        self.table.setTabKeyNavigation(False)  # Tab goes on to the replay, not from cell to cell
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

    def _lay_out(self) -> None:
        self.tabs.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Maximum)
        self._form_side = form_side = QVBoxLayout()
        form_side.addWidget(self.state_label)
        form_side.addWidget(self.tabs)
        form_side.addStretch(1)
        self._result_side = result_side = QVBoxLayout()
        for widget in (self.results_title, self.table, self.notes):
            result_side.addWidget(widget)
        result_side.addStretch(1)
        content = QWidget()
        self._column = column = QVBoxLayout(content)
        column.setContentsMargins(0, 0, 0, 0)
        column.addWidget(self.freshness_label)  # first: whether what follows is of this pause (it was under the card)
        column.addWidget(self._card_box)  # narrow: the whole width, PyTorch's long messages wrap onto few lines
        # Side by side in a wide, short dock (the window's bottom strip), so the results are in
        # sight beside the form; one above the other in a narrow one.
        self._sides = QBoxLayout(QBoxLayout.Direction.LeftToRight)
        self._sides.addLayout(form_side, 1)
        self._sides.addLayout(result_side, 1)
        column.addLayout(self._sides, 1)
        # A narrow dock scrolls the form and the results; the replay controls stay in sight below.
        self._scroll = scroll = QScrollArea()
        scroll.setAccessibleName(tr("Backward"))
        self.tabs.setAccessibleName(tr("backward() or torch.autograd.grad"))
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        scroll.setWidgetResizable(True)
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        scroll.setWidget(content)
        self._outer = layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(scroll, 1)
        layout.addWidget(self.replay_bar)

    # -- public API -----------------------------------------------------------------------------

    def show_result(self, kind: str, result: Mapping[str, Any], step: int | None = None) -> None:
        """Show what a request did; ``step`` is the run's step it belongs to (see :meth:`BackwardForm.show_result`)."""
        self.form.show_result(kind, result, step)

    def clear(self) -> None:
        """Forget the snapshot, the results and the replay."""
        self.form.clear()

    def forget_expressions(self) -> None:
        """Another lesson: drop what the learner typed or chose for this one (the root, the form's expressions
        and options; retain_graph is ticked again, so the new lesson's graph survives the form)."""
        self.form.forget_expressions()

    def retranslate(self) -> None:
        """Set every text again in the current language: the forms, the result on screen, the replay."""
        self._scroll.setAccessibleName(tr("Backward"))
        self.tabs.setAccessibleName(tr("backward() or torch.autograd.grad"))
        self.backward_tab.retranslate()
        self.grad_tab.retranslate()
        self._show_off_text()
        self.card.retranslate()
        if self.form.shown is not None:
            self._show_texts(*self.form.shown)
        self._show_freshness()
        self.replay_bar.retranslate()

    # -- layout -----------------------------------------------------------------------------------

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
        drilling = self.form.replay.drill.enabled
        home = self._result_side if short and not wide else self._column if short and drilling else self._outer
        if home.indexOf(self.replay_bar) < 0:
            for layout in (self._form_side, self._result_side, self._outer, self._column):
                layout.removeWidget(self.replay_bar)
            if home is self._result_side:
                home.insertWidget(home.count() - 1, self.replay_bar)  # before the closing stretch
            else:
                home.addWidget(self.replay_bar)
        self.replay_bar.place_step_label(size.width())

    def _scroll_to_results(self) -> None:
        """Scroll as little as brings the results' title and first rows into sight: the buttons above
        stay in sight where the panel allows both, for the next Preview or Run."""
        peek = 2 * self.table.verticalHeader().defaultSectionSize()
        top = self.results_title.mapTo(self._scroll.widget(), QPoint(0, 0)).y()
        needed = top + self.results_title.height() + peek
        down = self._scroll.verticalScrollBar()  # down only: a narrow dock's form must not slide sideways
        if needed > down.value() + self._scroll.viewport().height():
            down.setValue(min(top, needed - self._scroll.viewport().height()))

    def _scroll_to_drill(self) -> None:
        """Where the replay bar scrolls with the form and results: the controls and the question in sight."""
        if self._outer.indexOf(self.replay_bar) < 0:
            # the bar may have just moved into the scroll area: lay it out there before scrolling to it
            QApplication.sendPostedEvents(None, QEvent.Type.LayoutRequest)
            self._scroll.ensureWidgetVisible(self.replay_bar, 0, 0)
            self._scroll.ensureWidgetVisible(self.replay_bar.drill_view, 0, 0)

    # -- the model's changes ---------------------------------------------------------------------

    def _on_form_result_changed(self) -> None:
        shown = self.form.shown
        error = shown[1].get("error") if shown is not None else None
        self.card.setVisible(error is not None)
        if error is not None:
            kind, result = shown
            root = result.get("root")
            self.card.show_error(error, "torch.autograd.grad" if kind == "grad" else root and f"{root}.backward()")
            # Once laid out, scroll so the whole card, lesson link included, is in sight.
            QTimer.singleShot(0, self, self._fit_card)
            QTimer.singleShot(0, self, lambda: self._scroll.ensureWidgetVisible(self._card_box, 0, 0))
        if shown is None:
            self._fill_rows("", (), [])
            self._show_notes([])
        else:
            self._show_texts(*shown)
        if shown is not None and error is None:  # in a short panel the results are below the form: into sight
            QTimer.singleShot(0, self, self._scroll_to_results)
        self._show_hidden_for_past()

    def _on_form_freshness_changed(self) -> None:
        self._show_freshness()
        self._show_notes(self._notes)  # a grad result from an earlier pause no longer offers its results

    def _on_form_state_changed(self) -> None:
        self._show_off_text()
        self._show_hidden_for_past()

    def _on_replay_moved(self) -> None:
        entry = self.form.replay.entry()
        if entry is not None:
            self._select_row(entry.get("variable"))

    def _on_replay_asked(self, _question: Any) -> None:
        QTimer.singleShot(0, self, self._scroll_to_drill)  # once laid out

    def _on_replay_bar_drill_toggled(self, _on: bool) -> None:
        self._place_replay_bar()
        # the bar may have moved into another parent's layout, and Qt hides a widget it reparents
        self.replay_bar.setVisible(bool(self.form.replay.entries) and not self._hiding)
        QTimer.singleShot(0, self, self._scroll_to_drill)  # where it moved into the scroll area, into sight

    def _on_tabs_current_changed(self, index: int) -> None:
        # As tall as the page shown: the taller autograd.grad form would leave a gap under the backward()
        # buttons that pushes the replay controls down in the short bottom dock.
        for i in range(self.tabs.count()):
            page = self.tabs.widget(i)
            vertical = QSizePolicy.Policy.Preferred if i == index else QSizePolicy.Policy.Ignored
            page.setSizePolicy(QSizePolicy.Policy.Preferred, vertical)
        self.tabs.updateGeometry()

    # -- what the learner sees -------------------------------------------------------------------

    def _show_off_text(self) -> None:
        """Why requests are off (nothing while paused), and where a hidden later result came from."""
        form = self.form
        if form.open:
            text = ""
        elif form.paused:  # a prediction waits for its answer
            text = tr(PREDICTING_TEXT)
        else:
            text = tr(OFF_TEXT.get(form.why_off, OFF_TEXT["running"]))
        if form.hidden:
            text += " " + tr(LATER_TEXT, step=form.step + 1)
        self.state_label.setText(text)
        self.state_label.setVisible(bool(text))

    def _show_hidden_for_past(self) -> None:
        """Hide the result while a step before it is in view; show what it has again when that step goes."""
        hidden = self.form.hidden
        if hidden == self._hiding:
            return
        self._hiding = hidden
        shown, replay = self.form.shown, self.form.replay
        has = {self.card: shown is not None and shown[1].get("error") is not None,
               self.freshness_label: self.form.freshness is not None,
               self.results_title: bool(self.results_title.text()),
               self.table: self.table.rowCount() > 0,
               self.notes: bool(self.notes.text()),
               self.replay_bar: bool(replay.entries)}
        for widget, visible in has.items():
            widget.setVisible(visible and not hidden)

    def _restyle(self) -> None:
        """View > High Contrast: the freshness note's and the changed values' colours of the theme in use."""
        self._show_freshness()
        retint_changes(self.table)

    def _show_freshness(self) -> None:
        """Say why a result was cleared, or that the one shown is from an earlier pause."""
        form = self.form
        if form.freshness is None:
            self.freshness_label.hide()
            return
        what, reason = form.freshness
        if what == "stale":
            # the reason was worded by ResultBasis when the result was cleared; what to do next follows it
            self.freshness_label.setText(f"{reason} {tr(STALE_WHAT[form.stale_kind][1])}")
            self.freshness_label.setStyleSheet(f"color: {readable_color('#8a5a00', '#ffcc80').name()};")
        else:
            grad = form.basis is not None and form.basis.kind == "grad"
            self.freshness_label.setText(tr(EARLIER_GRAD_TEXT, results=RESULTS_NAME) if grad else tr(EARLIER_TEXT))
            self.freshness_label.setStyleSheet("color: palette(placeholder-text);")
        self.freshness_label.setVisible(not form.hidden)

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
        vector = result.get("vector_jacobian_product") or (kind != "grad" and self.form.is_vector(result.get("root")))
        if vector and error is None:
            root = result.get("root") or tr("the root")
            v = f"v = {value_text(result['gradient'])}" if result.get("gradient") else tr("the gradient v you gave")
            notes.append(tr("{root} is not a scalar: these are vector-Jacobian products vᵀ·∂{root}/∂leaf, for {v}",
                            root=root, v=v))
        self._show_notes(notes)

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
        self.results_title.setVisible(bool(title) and not self.form.hidden)
        self.table.setVisible(bool(cells) and not self.form.hidden)
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
        """The result's notes; one from an earlier pause no longer offers autograd.grad's results (the lesson
        dropped them at the resume)."""
        self._notes = notes
        form = self.form
        if form.basis is not None and form.basis.kind == "grad" and form.freshness == ("earlier", None):
            notes = [note for note in notes if RESULTS_NAME not in note]
        self.notes.setText("\n".join(f"• {note}" for note in notes))
        self.notes.setVisible(bool(notes) and not form.hidden)

    def _select_row(self, name: str | None) -> None:
        """Select the results row of the leaf whose .grad this step fills in."""
        for row in range(self.table.rowCount()):
            if name is not None and self.table.item(row, 0).text() == name:
                self.table.selectRow(row)
                return


def _row_name(grad: Mapping[str, Any]) -> str:
    return grad["name"] if grad.get("is_leaf", True) else tr("{name} (retains grad)", name=grad["name"])
