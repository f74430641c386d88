"""The timeline under the code: every recorded pause of the run, and where the view is in it.

Features
--------
* A slider over the recorded pauses, with ticks for breakpoint hits, exceptions and
  watch changes; dragging it asks for that pause.
* "step N of M" with the live position always visible, and a tinted "viewing the past"
  state with a button back to the live pause.
* A note when the oldest pauses were dropped to stay within the history's memory budget.
"""

from __future__ import annotations

from PySide6.QtCore import QRect, Qt, Signal
from PySide6.QtGui import QColor, QGuiApplication, QPainter, QPaintEvent, QPalette
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QSlider,
    QStyle,
    QStyleOptionSlider,
    QToolButton,
    QWidget,
)

from app.i18n import N_, tr
from widgets.colours import ensure_contrast, tint
from widgets.theme import follow_palette, high_contrast

#: Tick colours by the reason a pause is marked.
MARK_COLOURS = {"breakpoint": "#d32f2f", "exception": "#8e24aa", "post_mortem": "#8e24aa", "watch": "#ef6c00",
                "action": "#1e88e5"}
PAST_TINT = "#fff4d6"
#: The label of an ended run's last step, by how it ended (an exit counts as finished).
_ENDINGS = {"ok": N_("step {step} of {total} (finished)"), "exited": N_("step {step} of {total} (finished)"),
            "stopped": N_("step {step} of {total} (stopped)"),
            "error": N_("step {step} of {total} (stopped by an error)"),
            "crashed": N_("step {step} of {total} (stopped by an error)")}


class _MarkedSlider(QSlider):
    """A horizontal slider that draws a tick under each marked position."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(Qt.Orientation.Horizontal, parent)
        self.marks: dict[int, str] = {}
        self.live = 0

    def paintEvent(self, event: QPaintEvent) -> None:
        super().paintEvent(event)
        if self.maximum() <= self.minimum():
            return
        option = QStyleOptionSlider()
        self.initStyleOption(option)
        groove = self.style().subControlRect(QStyle.ComplexControl.CC_Slider, option,
                                             QStyle.SubControl.SC_SliderGroove, self)
        handle = self.style().subControlRect(QStyle.ComplexControl.CC_Slider, option,
                                             QStyle.SubControl.SC_SliderHandle, self)
        span = groove.width() - handle.width()
        painter = QPainter(self)
        for position, kind in self.marks.items():
            x = groove.x() + handle.width() // 2 + QStyle.sliderPositionFromValue(
                self.minimum(), self.maximum(), position, span)
            painter.fillRect(QRect(x - 1, self.height() - 5, 3, 5), mark_colour(kind))
        painter.end()


def mark_colour(kind: str) -> QColor:
    """A tick's colour; in high contrast, made to read at 7:1 on the base."""
    colour = QColor(MARK_COLOURS.get(kind, "#555555"))
    return ensure_contrast(colour, QGuiApplication.palette().color(QPalette.ColorRole.Base)) if high_contrast() \
        else colour


class TimelineBar(QWidget):
    """The run's recorded pauses as a slider, with step back and back-to-live controls."""

    position_requested = Signal(int)
    """The learner moved the slider to a pause (its history index)."""
    live_requested = Signal()
    """The learner asked to see the live pause again."""
    compare_requested = Signal()
    """The learner asked what changed between the pause shown and the live one."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("timeline_bar")
        self.setAutoFillBackground(True)
        self.back_button = QToolButton(self)
        self.slider = _MarkedSlider(self)
        self.slider.setObjectName("timeline_slider")
        self.slider.setPageStep(10)
        self.label = QLabel(self)
        self.label.setMinimumWidth(110)
        self.compare_button = QToolButton(self)
        self.live_button = QToolButton(self)
        self.retranslate()
        layout = QHBoxLayout(self)
        layout.setContentsMargins(4, 2, 4, 2)
        layout.addWidget(self.back_button)
        layout.addWidget(self.slider, 1)
        layout.addWidget(self.label)
        layout.addWidget(self.compare_button)
        layout.addWidget(self.live_button)
        self._first = 0
        self._live = -1
        self._shown = -1
        self._dropped = 0
        self._recording = False
        self._finished = False
        self._end_status = "ok"
        follow_palette(self, self._refresh)  # the past's tint, in the theme's colours
        self.slider.sliderMoved.connect(self._on_slider_moved)
        self.slider.actionTriggered.connect(self._on_slider_action_triggered)
        self.live_button.clicked.connect(self.live_requested)
        self.compare_button.clicked.connect(self.compare_requested)
        self.clear()

    def retranslate(self) -> None:
        """Set the buttons' and the label's texts again, in the current language."""
        self.compare_button.setToolTip(tr("List the names, tensors and graph nodes that changed since this pause"))
        self.slider.setAccessibleName(tr("Step in view"))
        if hasattr(self, "_recording"):
            self._refresh()

    def clear(self) -> None:
        """No run yet: an empty timeline."""
        self.set_range(0, -1, {}, 0)

    def set_range(self, first: int, live: int, marks: dict[int, str], dropped: int) -> None:
        """The recorded pauses ``first``..``live`` (history indices), their marks, and how many were dropped."""
        self._first, self._live, self._dropped = first, live, dropped
        self.slider.blockSignals(True)
        self.slider.setRange(first, max(first, live))
        self.slider.marks = marks
        self.slider.blockSignals(False)
        self.setEnabled(live >= first)
        if self._shown < first or self._shown > live or self._shown == -1:
            self._shown = live
        self._refresh()

    def set_position(self, index: int) -> None:
        """Show pause ``index`` as the one in view (the live one ends the past view)."""
        self._shown = index
        self._refresh()

    def set_finished(self, finished: bool, status: str = "ok") -> None:
        """Say that the run has ended (``status`` as :class:`~app.messages.Ended` has it): its last step
        is no longer live."""
        self._finished = finished
        self._end_status = status
        self._refresh()

    def set_recording(self, recording: bool) -> None:
        """Say that the run is being recorded step by step."""
        self._recording = recording
        self._refresh()

    def is_past(self) -> bool:
        """Whether the pause in view is an earlier one than the live pause."""
        return self._first <= self._shown < self._live

    def shown(self) -> int:
        return self._shown

    def label_text(self) -> str:
        return self.label.text()

    def _refresh(self) -> None:
        self.slider.blockSignals(True)
        self.slider.setValue(self._shown)
        self.slider.blockSignals(False)
        total = self._live + 1
        if self._live < self._first:
            text = tr("no steps recorded yet")
        elif self._recording:
            text = tr("recording… {n} steps", n=f"{total:,}")
        elif self.is_past():
            text = tr("step {step} of {total} (past)", step=f"{self._shown + 1:,}", total=f"{total:,}")
        elif self._finished:
            how = _ENDINGS.get(self._end_status, _ENDINGS["ok"])
            text = tr(how, step=f"{total:,}", total=f"{total:,}")
        else:
            text = tr("step {step} of {total} (live)", step=f"{total:,}", total=f"{total:,}")
        if self._dropped:
            text += " · " + tr("{n} oldest dropped", n=f"{self._dropped:,}")
        self.label.setText(text)
        # once the run has ended its last step is the end, not live
        self.compare_button.setText(tr("Diff with the end") if self._finished else tr("Diff with live"))
        self.live_button.setText(tr("Go to the end") if self._finished else tr("Go to live"))
        self.label.setToolTip("" if not self._dropped else
                              tr("The oldest steps were dropped to keep the history within its memory budget "
                                 "(Run > History Budget)."))
        past = self.is_past()
        self.live_button.setEnabled(past)
        self.compare_button.setEnabled(past)
        palette = QPalette()  # the past's tint, or no colour of its own: the rest follows the theme
        if past:
            palette.setColor(QPalette.ColorRole.Window, tint(QColor(PAST_TINT), 1.0))
        self.setPalette(palette)

    def _on_slider_moved(self, value: int) -> None:
        self.position_requested.emit(value)

    def _on_slider_action_triggered(self, action: int) -> None:
        if action != QSlider.SliderAction.SliderMove:  # clicks on the groove, keys: ask once it moved
            self.position_requested.emit(self.slider.sliderPosition())
