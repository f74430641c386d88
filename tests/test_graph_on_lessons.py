"""The graph on the bundled lessons, as a learner sees it: F5, then F10 over the lines that grow the graph.

At each of the three window sizes learners use, after every such line the nodes it made are
in the graph's viewport with their text at least 9 px tall, the graph keeps a third of the
window's width and two thirds of its height, and the Variables grad-state columns are in
sight. Then the code and the graph point at each other through the origins the engine
recorded: hovering the line outlines its nodes, clicking one of them selects the code that
made it.
"""

from __future__ import annotations

from typing import Any

import pytest
from PySide6.QtCore import QPoint, QRectF, Qt
from PySide6.QtWidgets import QGraphicsView
from test_layout import SIZES, assert_grad_columns_in_sight, code_line, make_window  # noqa: F401 - a fixture

from app.workspace import LESSONS_DIR
from widgets.graph_framing import MIN_TEXT_PIXELS
from widgets.graph_items import FONT_PIXELS
from widgets.main_window import MainWindow

#: Lines that grow the graph, in the order a run meets them; ``#n`` is the line's n-th execution.
GROWING = {
    "01_dynamic_graphs.py": ["b = a * w", "c = torch.exp(b)", "loss = c.sum()"],
    "03_loops.py": ["x_t = inputs[t]", "h_t = torch.tanh(", "h_t = torch.tanh(#3", "loss = h_t.sum()"],
    "05_requires_grad.py": ["z = x * y + 1"],
    "07_backward.py": ["h = x * w", "loss = (h**2).sum()", "h2 = x * w", "y = A @ v"],
}


class Stepper:
    """Presses F10 in the window and keeps what each pause's graph diff added and removed."""

    def __init__(self, qtbot, window: MainWindow) -> None:
        self.qtbot, self.window = qtbot, window
        self.runs: dict[int, int] = {}  # line -> executions stepped over
        self.made: dict[int, dict[str, Any]] = {}  # node id -> node, for the nodes still in the graph

    def press(self, key: Qt.Key) -> dict[str, Any]:
        before = self.window.run.live if self.window.run else None
        self.qtbot.keyClick(self.window.code_view, key)
        self.qtbot.waitUntil(lambda: self.window.session.state == "paused"
                             and self.window.run.live is not before, timeout=30_000)
        graph = self.window.run.live.get("graph") or {}
        for node_id in graph.get("removed", []):
            self.made.pop(int(node_id), None)
        self.made.update({int(node["id"]): node for node in graph.get("added", [])})
        return graph

    def over(self, line: int, nth: int) -> dict[str, Any]:
        """F10 until the pause after the ``nth`` execution of ``line``; returns that pause's diff."""
        for _ in range(300):
            at = self.window.run.live["line"]
            diff = self.press(Qt.Key.Key_F10)
            if at == line:
                self.runs[line] = self.runs.get(line, 0) + 1
                if self.runs[line] == nth:
                    return diff
        raise AssertionError(f"line {line} did not run {nth} times")


def canvas(window: MainWindow) -> QGraphicsView:
    return window.graph_view.findChild(QGraphicsView, "graph_canvas")


def node_item(window: MainWindow, node_id: int):
    return next(item for item in canvas(window).scene().items()
                if item.parentItem() is None and item.data(0) == node_id)


def on_screen(window: MainWindow, node_id: int) -> QRectF:
    """Where the node's box is in the graph's viewport, in pixels."""
    view = canvas(window)
    return view.mapFromScene(node_item(window, node_id).sceneBoundingRect()).boundingRect()


def assert_learner_sees_the_new_nodes(window: MainWindow, diff: dict[str, Any]) -> None:
    view = canvas(window)
    port = QRectF(view.viewport().rect())
    added = [int(node["id"]) for node in diff["added"]]
    assert added, "the line made no node"
    readable = MIN_TEXT_PIXELS / FONT_PIXELS
    spread = QRectF()
    for node_id in added:
        spread |= node_item(window, node_id).sceneBoundingRect()
    # New leaves wider apart than the viewport holds at a readable zoom: what the line computed comes first.
    fits = spread.width() * readable <= port.width() and spread.height() * readable <= port.height()
    for node in diff["added"]:
        if fits or node["kind"] != "leaf":
            rect = on_screen(window, int(node["id"]))
            assert port.contains(QRectF(rect)), (node["name"], rect, port)
    assert view.transform().m11() * FONT_PIXELS >= MIN_TEXT_PIXELS


def assert_layout_for_learning(window: MainWindow) -> None:
    # The graph is the app's widest column and keeps two thirds of the height: the output under it
    # is a few lines tall (issue 22: a third of the width at every size, after resizes too).
    graph = window.docks["graph"].widget()
    assert graph.width() >= window.width() / 3
    assert graph.height() >= window.height() * 2 / 3
    assert_grad_columns_in_sight(window)


def assert_code_and_graph_linked(qtbot, window: MainWindow, stepper: Stepper, line: int) -> None:
    """Hovering ``line`` outlines the nodes its executions made; clicking one selects what made it."""
    made = {node_id for node_id, node in stepper.made.items()
            if node["origin"]["line"] == line and node["kind"] != "leaf"}
    assert made
    code = window.code_view
    code.go_to_line(line)
    block = code.document().findBlockByNumber(line - 1)

    def hover_line() -> None:  # aim again while the view settles its scroll
        y = int(code.blockBoundingGeometry(block).translated(code.contentOffset()).center().y())
        # off and back on: the last line hovered may have been scrolled to this very spot
        # at the line's left edge, in no operation's span: the whole line's nodes light up
        qtbot.mouseMove(code.viewport(), QPoint(2, y + code.viewport().height() // 2))
        qtbot.mouseMove(code.viewport(), QPoint(2, y))
        outlined = window.graph_view.origin_nodes()
        assert made <= outlined, (f"line {line} hovered as (line, column) {code._hovered_position} at y {y}, "
                                  f"scrolled to {code.horizontalScrollBar().value()}, "
                                  f"{code.verticalScrollBar().value()}: outlined {sorted(outlined)}")

    qtbot.waitUntil(hover_line, timeout=20_000)  # generous: a loaded machine settles the scroll late
    assert {node_id for node_id in window.graph_view.origin_nodes() if stepper.made[node_id]["kind"] != "leaf"} == made
    code.go_to_line(1)
    target = max(made)
    canvas(window).centerOn(node_item(window, target))
    qtbot.mouseClick(canvas(window).viewport(), Qt.MouseButton.LeftButton,
                     pos=on_screen(window, target).center())
    assert code.cursor_line() == line
    selected = code.textCursor().selectedText().strip()
    origin = stepper.made[target]["origin"]
    # a node made while stepping knows its operation: its sub-expression is selected, else the line
    assert selected == (origin["text"] if origin.get("span") else block.text().strip())
    assert selected and selected in block.text()


@pytest.mark.parametrize("name", list(GROWING))
@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_after_each_line_that_grows_the_graph_the_learner_sees_its_nodes(qtbot, make_window, name, size):  # noqa: F811
    window = make_window(*size, LESSONS_DIR / name)
    assert (window.width(), window.height()) == size  # the offscreen screen does not clamp these sizes
    qtbot.waitUntil(window.isActiveWindow)  # F5 and F10 work in the active window
    stepper = Stepper(qtbot, window)
    stepper.press(Qt.Key.Key_F5)
    assert window.run.live["line"] == 1
    lines = []
    for marker in GROWING[name]:
        start, _, nth = marker.partition("#")
        line = code_line(LESSONS_DIR / name, start)
        diff = stepper.over(line, int(nth or 1))
        assert_learner_sees_the_new_nodes(window, diff)
        assert_layout_for_learning(window)
        lines.append(line)
    for line in lines:
        assert_code_and_graph_linked(qtbot, window, stepper, line)
