"""The backward panel after stepping: results the lesson no longer matches are cleared, the rest stay."""

from __future__ import annotations

import textwrap

import pytest
import torch
from PySide6.QtCore import Qt

from app.i18n import tr
from app.lesson.autograd_actions import AutogradActions
from app.lesson.autograd_graph import GraphTracker
from app.lesson.summaries import Summarizer
from app.messages import RESULTS_NAME
from widgets.backward_panel import EARLIER_GRAD_TEXT, EARLIER_TEXT, BackwardPanel

LESSON_07 = """
    x = torch.tensor([1.0, 2.0, 3.0])
    w = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
    h = x * w
    loss = (h**2).sum()
"""


class Lesson:
    """A paused module frame the test steps line by line, told to the panel as the main window does."""

    def __init__(self, panel: BackwardPanel, source: str) -> None:
        self.panel = panel
        self.namespace: dict = {"torch": torch}
        self.actions = AutogradActions(self.namespace, self.namespace, Summarizer())
        self.tracker = GraphTracker(Summarizer().tensors)
        self.ids: list[int] = []
        panel.active_node_changed.connect(self.ids.append)
        exec(textwrap.dedent(source), self.namespace)
        self._pause()

    def vars(self) -> dict:
        summarize = Summarizer().summarize
        return {name: summarize(value) for name, value in self.namespace.items()
                if name not in ("torch", "__builtins__")}

    def step(self, line: str) -> None:
        """Resume, run one line of the lesson, pause after it."""
        self.panel.set_enabled_for_state(False)
        exec(line, self.namespace)
        self._pause()

    def _pause(self) -> None:
        self._apply_graph()  # as MainWindow._on_bridge_paused: the graph, the variables, then paused
        self.panel.set_snapshot(self.vars())
        self.panel.set_enabled_for_state(True)

    def _apply_graph(self) -> None:
        diff = self.tracker.update(self.namespace)
        if diff["changed"]:
            self.panel.apply_diff(diff)

    def click(self, qtbot, button) -> None:
        """Click Preview or Run backward() and show what the lesson process answers, as MainWindow._after_action."""
        preview = button is self.panel.preview_button
        signal = self.panel.preview_requested if preview else self.panel.backward_requested
        with qtbot.waitSignal(signal) as sent:
            qtbot.mouseClick(button, Qt.LeftButton)
        params = sent.args[0]
        if preview:
            result = self.actions.preview_gradients(params["root"], gradient=params["gradient"])
            self.panel.show_result("preview", result)
            return
        result = self.actions.run_backward(params["root"], params["gradient"], params["retain_graph"])
        self.panel.show_result("backward", result)
        self.panel.set_snapshot(self.vars())  # the frame as the backward left it
        self._apply_graph()

    def node(self, name: str) -> int:
        return next(n["id"] for n in self.tracker.full()["nodes"] if n["name"] == name)


def rows(panel: BackwardPanel) -> list[str]:
    return [panel.table.item(r, 0).text() for r in range(panel.table.rowCount())] if panel.table.isVisible() else []


def assert_cleared(panel: BackwardPanel, lesson: Lesson) -> None:
    assert rows(panel) == [] and panel.results_title.isHidden() and panel.notes.isHidden()
    assert panel.replay_bar.isHidden() and panel.replay_position() == -1
    assert lesson.ids[-1] == -1  # the graph's replay highlight goes
    assert panel.freshness_label.isVisible()


@pytest.fixture
def panel(qtbot) -> BackwardPanel:
    widget = BackwardPanel()
    qtbot.addWidget(widget)
    widget.resize(600, 520)
    widget.show()
    qtbot.waitExposed(widget)
    return widget


def test_stepping_over_the_lessons_backward_clears_the_preview_and_its_highlight(panel, qtbot):
    """Lesson 07: Preview, replay up to PowBackward0, then F10 over loss.backward(): the old table and the
    red PowBackward0 stayed."""
    lesson = Lesson(panel, LESSON_07)
    lesson.click(qtbot, panel.preview_button)
    assert rows(panel) == ["w"]
    qtbot.mouseClick(panel.forward_button, Qt.LeftButton)
    qtbot.mouseClick(panel.forward_button, Qt.LeftButton)
    assert lesson.ids[-1] == lesson.node("PowBackward0")

    lesson.step("loss.backward()")
    assert_cleared(panel, lesson)
    text = panel.freshness_label.text()
    assert text.startswith("The graph's saved tensors were freed since this preview")
    assert text.endswith("Preview again.")
    qtbot.mouseClick(panel.forward_button, Qt.LeftButton)  # nothing left to replay
    assert lesson.ids[-1] == -1

    lesson.step("expected = 2 * w.detach() * x**2")
    assert panel.freshness_label.isHidden()  # the reason was news at that pause only


def test_a_rebuilt_graph_clears_a_backward_result(panel, qtbot):
    lesson = Lesson(panel, LESSON_07)
    qtbot.mouseClick(panel.retain_check, Qt.LeftButton)
    lesson.click(qtbot, panel.backward_button)
    assert panel.freshness_label.isHidden() and rows(panel) == ["w"]  # its own changes do not clear it
    qtbot.mouseClick(panel.forward_button, Qt.LeftButton)

    lesson.step("h = x * w; loss = (h**2).sum()")
    assert_cleared(panel, lesson)
    assert panel.freshness_label.text() == (
        "The graph changed since this backward(): 3 nodes it walked are no longer in it. "
        "Preview to see the gradients of the graph as it is now.")


def test_a_changed_grad_clears_a_backward_result(panel, qtbot):
    lesson = Lesson(panel, LESSON_07)
    qtbot.mouseClick(panel.retain_check, Qt.LeftButton)
    lesson.click(qtbot, panel.backward_button)
    lesson.step("w.grad.zero_()")
    assert_cleared(panel, lesson)
    assert panel.freshness_label.text().startswith("w.grad changed since this backward().")


def test_an_in_place_change_of_the_root_clears_the_preview(panel, qtbot):
    lesson = Lesson(panel, LESSON_07)
    lesson.click(qtbot, panel.preview_button)
    lesson.step("loss.mul_(2)")  # the same tensor, now made by MulBackward0 on top of the old graph
    assert_cleared(panel, lesson)
    assert panel.freshness_label.text().startswith("loss's grad_fn changed since this preview")


def test_a_result_that_still_matches_stays_marked_as_from_an_earlier_pause(panel, qtbot):
    lesson = Lesson(panel, LESSON_07)
    lesson.click(qtbot, panel.preview_button)
    qtbot.mouseClick(panel.forward_button, Qt.LeftButton)
    shown = lesson.ids[-1]
    assert panel.freshness_label.isHidden()

    lesson.step("scale = torch.tensor(2.0)")
    lesson.step("other = (scale * w).sum()")  # a new graph beside the previewed one
    assert rows(panel) == ["w"] and panel.replay_bar.isVisible()
    assert panel.freshness_label.text() == EARLIER_TEXT and panel.freshness_label.isVisible()
    assert lesson.ids[-1] == shown and panel.replay_position() == 0

    lesson.click(qtbot, panel.preview_button)  # a fresh result is not from an earlier pause
    assert panel.freshness_label.isHidden()


def test_an_autograd_grad_result_from_an_earlier_pause_no_longer_offers_its_grads(panel, qtbot):
    lesson = Lesson(panel, LESSON_07)
    panel.show_result("grad", lesson.actions.autograd_grad("loss", "w", retain_graph=True))
    assert "_grads[0]" in panel.notes.text()
    lesson.step("scale = torch.tensor(2.0)")
    assert rows(panel) == ["w"]
    assert panel.freshness_label.text() == tr(EARLIER_GRAD_TEXT, results=RESULTS_NAME)
    assert "_grads[0]" not in panel.notes.text()
