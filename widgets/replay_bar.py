"""The Backward panel's replay bar: play a backward pass node by node, each step in words, and the drill.

Features
--------
- Play / pause, step back / forward and restart, at 0.5–10 nodes per second; each step is described
  in words (:func:`app.backward_replay.position_text`), beside the controls where the bar is wide
  enough, under them otherwise. The graph view marks the node through the graph model.
- An opt-in **Drill**: before each backward function fires, the learner is asked for the gradients
  it sends (:class:`~widgets.backward_drill_view.DrillView`); the replay waits for the answer.

It shows a :class:`~app.backward_replay.BackwardReplay` and runs its timer; the moves are the model's.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import QCheckBox, QFrame, QHBoxLayout, QLabel, QSlider, QStyle, QToolButton, QVBoxLayout, QWidget

from app.backward_replay import BackwardReplay, position_text
from app.i18n import N_, tr
from widgets.backward_drill_view import DrillView
from widgets.theme import follow_palette, standard_icon
from widgets.translated_texts import TranslatedTexts

#: Replay speeds, in steps per second; the slider moves in half steps.
MIN_SPEED, MAX_SPEED, DEFAULT_SPEED = 0.5, 10.0, 2.0
#: The replay's description goes beside its controls when it gets at least this width there.
STEP_BESIDE_WIDTH = 280

DRILL_TIP = N_("Drill: before each backward function fires, work out the gradients it sends to its inputs from "
               "the gradient it receives and its saved tensors; judged like a prediction and kept in the lesson's "
               "progress. AccumulateGrad leaves are not asked.")


class ReplayBar(QFrame):
    """Controls, speed, drill and description of a :class:`BackwardReplay`; hidden while there is nothing to replay.

    Parameters
    ----------
    replay : BackwardReplay
    """

    drill_judged = Signal(object)
    """A drill answer was judged and recorded; carries the :class:`~app.backward_drill.DrillVerdict`."""

    drill_toggled = Signal(bool)
    """The learner turned the drill on or off."""

    def __init__(self, replay: BackwardReplay, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.replay = replay
        self._texts = TranslatedTexts()
        self._timer = QTimer(self)
        self._timer.timeout.connect(self._on_timer_timeout)
        self._build_controls()
        self.drill_view = DrillView(replay.drill)
        self.drill_view.judged.connect(self._on_drill_view_judged)
        self.drill_view.skipped.connect(self._on_drill_view_skipped)
        self.step_label = QLabel()
        self.step_label.setObjectName("replay_step")
        self.step_label.setWordWrap(True)
        self.step_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self._layout = layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 4, 6, 4)
        layout.addLayout(self._controls)
        layout.addWidget(self.drill_view)
        layout.addWidget(self.step_label)
        self._on_speed_slider_value_changed(self.speed_slider.value())
        replay.loaded.connect(self._on_replay_loaded)
        replay.moved.connect(self._on_replay_moved)
        replay.playing_changed.connect(self._on_replay_playing_changed)
        replay.asked.connect(self._on_replay_asked)
        replay.question_closed.connect(self._on_replay_question_closed)
        self._on_replay_loaded()
        self._on_replay_playing_changed()
        follow_palette(self, self._restyle_icons)

    def _build_controls(self) -> None:
        pixmap = QStyle.StandardPixmap
        self.restart_button = self._tool_button(pixmap.SP_MediaSkipBackward, N_("Restart the replay from the root"))
        self.back_button = self._tool_button(pixmap.SP_MediaSeekBackward, N_("Step back one node"))
        self.play_button = self._tool_button(pixmap.SP_MediaPlay, N_("Play the backward pass node by node"))
        self.forward_button = self._tool_button(pixmap.SP_MediaSeekForward, N_("Step forward one node"))
        self.restart_button.clicked.connect(self.replay.restart)
        self.back_button.clicked.connect(self.replay.step_back)
        self.play_button.clicked.connect(self._on_play_button_clicked)
        self.forward_button.clicked.connect(self.replay.step_forward)
        self.speed_slider = QSlider(Qt.Orientation.Horizontal)
        self.speed_slider.setRange(int(MIN_SPEED * 2), int(MAX_SPEED * 2))
        self.speed_slider.setValue(int(DEFAULT_SPEED * 2))
        self.speed_slider.setMaximumWidth(120)
        self._texts.set(self.speed_slider.setToolTip, "Replay speed, in nodes per second")
        self.speed_slider.valueChanged.connect(self._on_speed_slider_value_changed)
        self.speed_label = QLabel()
        self.drill_check = QCheckBox()
        self.drill_check.setObjectName("drill_check")
        self._texts.set(self.drill_check.setText, "Drill")
        self._texts.set(self.drill_check.setToolTip, DRILL_TIP)
        self.drill_check.toggled.connect(self._on_drill_check_toggled)
        self._controls = controls = QHBoxLayout()
        controls.setContentsMargins(0, 0, 0, 0)
        replay_label = QLabel()
        self._texts.set(replay_label.setText, "Replay")
        controls.addWidget(replay_label)
        for button in (self.restart_button, self.back_button, self.play_button, self.forward_button):
            controls.addWidget(button)
        controls.addSpacing(8)
        controls.addWidget(self.speed_slider)
        controls.addWidget(self.speed_label)
        controls.addSpacing(8)
        controls.addWidget(self.drill_check)
        controls.addStretch(1)

    def _restyle_icons(self) -> None:
        """The buttons' icons in the colours of the theme in use (View > High Contrast)."""
        for button in (self.restart_button, self.back_button, self.forward_button):
            button.setIcon(standard_icon(self, button.property("standard_pixmap")))
        self._on_replay_playing_changed()

    def _tool_button(self, pixmap: QStyle.StandardPixmap, tip: str) -> QToolButton:
        button = QToolButton()
        button.setIcon(standard_icon(self, pixmap))
        button.setProperty("standard_pixmap", pixmap)  # its icon again after a change of theme
        self._texts.set(button.setToolTip, tip)
        button.setAutoRaise(True)
        return button

    def place_step_label(self, width: int) -> None:
        """Beside the controls where a bar ``width`` wide has room (it stays a line or two high), else under them."""
        controls = sum(item.sizeHint().width() + self._controls.spacing() for i in range(self._controls.count())
                       if (item := self._controls.itemAt(i)).widget() is not self.step_label)
        beside = width - controls - 24 >= STEP_BESIDE_WIDTH  # 24: the margins of the panel and the bar
        if (self._controls.indexOf(self.step_label) >= 0) == beside:
            return
        self._controls.removeWidget(self.step_label)
        self._layout.removeWidget(self.step_label)
        end = self._controls.count() - 1  # the closing stretch: the description takes its room
        self._controls.setStretch(end, 0 if beside else 1)
        if beside:
            self._controls.insertWidget(end, self.step_label, 1)
        else:
            self._layout.insertWidget(2, self.step_label)

    def retranslate(self) -> None:
        """Set every text again in the current language."""
        self._texts.apply()
        self._on_speed_slider_value_changed(self.speed_slider.value())
        self._on_replay_playing_changed()
        self._describe()
        self.drill_view.retranslate()

    def _describe(self) -> None:
        self.step_label.setText(position_text(self.replay))

    # ---- the model's changes --------------------------------------------------------------

    def _on_replay_loaded(self) -> None:
        self.drill_view.clear()
        has_steps = bool(self.replay.entries)
        for button in (self.restart_button, self.back_button, self.play_button, self.forward_button):
            button.setEnabled(has_steps)
        self.speed_slider.setEnabled(has_steps)
        self.setVisible(has_steps)
        self._describe()

    def _on_replay_moved(self) -> None:
        self._describe()

    def _on_replay_playing_changed(self) -> None:
        playing = self.replay.playing
        if playing:
            self._timer.start()
        else:
            self._timer.stop()
        icon = QStyle.StandardPixmap.SP_MediaPause if playing else QStyle.StandardPixmap.SP_MediaPlay
        self.play_button.setIcon(standard_icon(self, icon))
        self.play_button.setToolTip(tr("Pause the replay") if playing else tr("Play the backward pass node by node"))

    def _on_replay_asked(self, _question: Any) -> None:
        self.drill_view.ask()

    def _on_replay_question_closed(self) -> None:
        self.drill_view.close_question()

    # ---- the learner's input --------------------------------------------------------------

    def _on_play_button_clicked(self) -> None:
        if self.replay.playing:
            self.replay.pause()
        else:
            self.replay.play()

    def _on_speed_slider_value_changed(self, value: int) -> None:
        speed = value / 2
        self.speed_label.setText(tr("{speed} nodes/s", speed=f"{speed:g}"))
        self._timer.setInterval(round(1000 / speed))

    def _on_timer_timeout(self) -> None:
        self.replay.step_forward()

    def _on_drill_check_toggled(self, on: bool) -> None:
        self.replay.set_drill(on)
        self._describe()
        self.drill_toggled.emit(on)

    def _on_drill_view_judged(self, verdict: Any) -> None:
        self.drill_judged.emit(verdict)
        self.replay.fire(verdict.question.position)

    def _on_drill_view_skipped(self, question: Any) -> None:
        self.replay.fire(question.position)
