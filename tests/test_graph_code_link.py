"""In the window the graph and the code point at each other: hover a line for its nodes, click a node for its line.

The origins here are injected into the graph view by hand (the engine's own come with a
later change); the links do not care where they came from.
"""

from __future__ import annotations

from origin_graphs import FILE, STEP_LINE, rnn_with_origins
from PySide6.QtCore import QPoint, Qt
from PySide6.QtWidgets import QGraphicsView

LESSON = "".join(f"value_{number} = {number}\n" for number in range(1, 21))


def test_hovering_a_code_line_marks_its_nodes_and_clicking_a_node_selects_its_line(window_on, qtbot):
    window = window_on(LESSON, name=FILE)
    graph, diffs = rnn_with_origins(3)
    window.graph_model.set_graph(graph)
    code = window.code_view
    block = code.document().findBlockByNumber(STEP_LINE - 1)
    y = int(code.blockBoundingGeometry(block).translated(code.contentOffset()).center().y())
    qtbot.mouseMove(code.viewport(), QPoint(80, y))
    made = {node["id"] for diff in diffs[:3] for node in diff["added"] if node["kind"] != "leaf"}
    qtbot.waitUntil(lambda: window.graph_view.origin_nodes() == made)
    canvas = window.graph_view.findChild(QGraphicsView, "graph_canvas")
    code.go_to_line(1)
    target = next(item for item in canvas.scene().items() if item.data(0) == min(made) and item.parentItem() is None)
    canvas.centerOn(target)
    qtbot.mouseClick(canvas.viewport(), Qt.LeftButton, pos=canvas.mapFromScene(target.sceneBoundingRect().center()))
    assert code.cursor_line() == STEP_LINE
    assert code.textCursor().selectedText() == f"value_{STEP_LINE} = {STEP_LINE}"
