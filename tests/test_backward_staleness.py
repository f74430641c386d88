"""The backward panel after stepping: results the lesson no longer matches are cleared, the rest stay."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from test_backward_form import LESSON_07
from test_backward_form import Lesson as FrameLesson

from app.graph_model import GraphModel
from app.i18n import tr
from app.messages import RESULTS_NAME
from widgets.backward_panel import EARLIER_GRAD_TEXT, EARLIER_TEXT, BackwardPanel


class Lesson(FrameLesson):
    """A paused module frame the test steps line by line, with the panel on the form the main window feeds."""

    def __init__(self, panel: BackwardPanel, source: str) -> None:
        self.panel = panel
        self.ids: list[int | None] = []
        panel.form.graph.active_changed.connect(self.ids.append)
        super().__init__(source, panel.form)

    def click(self, qtbot, button) -> None:
        """Click Preview or Run backward() and show what the lesson process answers, as MainWindow._after_action."""
        preview = button is self.panel.backward_tab.preview_button
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
        self.panel.form.set_variables(self.vars())  # the frame as the backward left it
        self.graph.apply_diff(self.tracker.update(self.namespace))

    def node(self, name: str) -> int:
        return next(n["id"] for n in self.tracker.full()["nodes"] if n["name"] == name)


def rows(panel: BackwardPanel) -> list[str]:
    return [panel.table.item(r, 0).text() for r in range(panel.table.rowCount())] if panel.table.isVisible() else []


def assert_cleared(panel: BackwardPanel, lesson: Lesson) -> None:
    assert rows(panel) == [] and panel.results_title.isHidden() and panel.notes.isHidden()
    assert panel.replay_bar.isHidden() and panel.form.replay.position == -1
    assert lesson.graph.active is None  # the graph's replay highlight goes
    assert panel.freshness_label.isVisible()


@pytest.fixture
def panel(qtbot) -> BackwardPanel:
    widget = BackwardPanel(GraphModel())
    qtbot.addWidget(widget)
    widget.resize(600, 520)
    widget.show()
    qtbot.waitExposed(widget)
    return widget


def test_stepping_over_the_lessons_backward_clears_the_preview_and_its_highlight(panel, qtbot):
    """Lesson 07: Preview, replay up to PowBackward0, then F10 over loss.backward(): the old table and the
    red PowBackward0 stayed."""
    lesson = Lesson(panel, LESSON_07)
    lesson.click(qtbot, panel.backward_tab.preview_button)
    assert rows(panel) == ["w"]
    qtbot.mouseClick(panel.replay_bar.forward_button, Qt.LeftButton)
    qtbot.mouseClick(panel.replay_bar.forward_button, Qt.LeftButton)
    assert lesson.ids[-1] == lesson.node("PowBackward0")

    lesson.step("loss.backward()")
    assert_cleared(panel, lesson)
    text = panel.freshness_label.text()
    assert text.startswith("The graph's saved tensors were freed since this preview")
    assert text.endswith("Preview again.")
    qtbot.mouseClick(panel.replay_bar.forward_button, Qt.LeftButton)  # nothing left to replay
    assert lesson.graph.active is None

    lesson.step("expected = 2 * w.detach() * x**2")
    assert panel.freshness_label.isHidden()  # the reason was news at that pause only


def test_a_rebuilt_graph_clears_a_backward_result(panel, qtbot):
    lesson = Lesson(panel, LESSON_07)
    qtbot.mouseClick(panel.backward_tab.retain_check, Qt.LeftButton)
    lesson.click(qtbot, panel.backward_tab.backward_button)
    assert panel.freshness_label.isHidden() and rows(panel) == ["w"]  # its own changes do not clear it
    qtbot.mouseClick(panel.replay_bar.forward_button, Qt.LeftButton)

    lesson.step("h = x * w; loss = (h**2).sum()")
    assert_cleared(panel, lesson)
    assert panel.freshness_label.text() == (
        "The graph changed since this backward(): 3 nodes it walked are no longer in it. "
        "Preview to see the gradients of the graph as it is now.")


def test_a_changed_grad_clears_a_backward_result(panel, qtbot):
    lesson = Lesson(panel, LESSON_07)
    qtbot.mouseClick(panel.backward_tab.retain_check, Qt.LeftButton)
    lesson.click(qtbot, panel.backward_tab.backward_button)
    lesson.step("w.grad.zero_()")
    assert_cleared(panel, lesson)
    assert panel.freshness_label.text().startswith("w.grad changed since this backward().")


def test_an_in_place_change_of_the_root_clears_the_preview(panel, qtbot):
    lesson = Lesson(panel, LESSON_07)
    lesson.click(qtbot, panel.backward_tab.preview_button)
    lesson.step("loss.mul_(2)")  # the same tensor, now made by MulBackward0 on top of the old graph
    assert_cleared(panel, lesson)
    assert panel.freshness_label.text().startswith("loss's grad_fn changed since this preview")


def test_a_result_that_still_matches_stays_marked_as_from_an_earlier_pause(panel, qtbot):
    lesson = Lesson(panel, LESSON_07)
    lesson.click(qtbot, panel.backward_tab.preview_button)
    qtbot.mouseClick(panel.replay_bar.forward_button, Qt.LeftButton)
    shown = lesson.ids[-1]
    assert panel.freshness_label.isHidden()

    lesson.step("scale = torch.tensor(2.0)")
    lesson.step("other = (scale * w).sum()")  # a new graph beside the previewed one
    assert rows(panel) == ["w"] and panel.replay_bar.isVisible()
    assert panel.freshness_label.text() == EARLIER_TEXT and panel.freshness_label.isVisible()
    assert lesson.ids[-1] == shown and panel.form.replay.position == 0

    lesson.click(qtbot, panel.backward_tab.preview_button)  # a fresh result is not from an earlier pause
    assert panel.freshness_label.isHidden()


def test_an_autograd_grad_result_from_an_earlier_pause_no_longer_offers_its_grads(panel, qtbot):
    lesson = Lesson(panel, LESSON_07)
    panel.show_result("grad", lesson.actions.autograd_grad("loss", "w", retain_graph=True))
    assert "_grads[0]" in panel.notes.text()
    lesson.step("scale = torch.tensor(2.0)")
    assert rows(panel) == ["w"]
    assert panel.freshness_label.text() == tr(EARLIER_GRAD_TEXT, results=RESULTS_NAME)
    assert "_grads[0]" not in panel.notes.text()
