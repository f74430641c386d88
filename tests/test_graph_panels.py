"""The graph view and the backward panel in the main window, on a real lesson process."""

from __future__ import annotations

from unittest.mock import Mock

import pytest
import torch
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QGraphicsPathItem, QGraphicsSimpleTextItem, QGraphicsView, QLabel, QPlainTextEdit
from test_backward_panel import table_rows
from test_graph_view import boxes, canvas, click, outline
from test_main_window import press, wait_paused

from widgets.graph_items import PALETTE

LESSON = '''import torch
x = torch.tensor([1.0, 2.0], requires_grad=True)
w = torch.tensor([3.0, 4.0], requires_grad=True)
h = x * w
loss = (h ** 2).sum()
done = True
'''


@pytest.fixture
def window(window_on):
    return window_on(LESSON, "graph_lesson.py")


def step_to(qtbot, win, line):
    press(qtbot, win, Qt.Key.Key_F10)
    return wait_paused(qtbot, win, line)


def at_done(qtbot, win):
    """Run to the last line: the whole graph is built, nothing has run backward yet."""
    win.code_view.go_to_line(6)
    press(qtbot, win, Qt.Key.Key_F10, Qt.KeyboardModifier.ControlModifier)
    wait_paused(qtbot, win, 6)
    qtbot.waitUntil(lambda: win.backward_panel.backward_tab.root_combo.currentText() == "loss")


def pytorch_grads() -> dict[str, list[float]]:
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    w = torch.tensor([3.0, 4.0], requires_grad=True)
    ((x * w) ** 2).sum().backward()
    return {"x": x.grad.tolist(), "w": w.grad.tolist()}


def test_the_graph_grows_line_by_line_with_new_nodes_highlighted(qtbot, window):
    press(qtbot, window, Qt.Key.Key_F11)
    wait_paused(qtbot, window, 1)
    for line in (2, 3, 4):
        step_to(qtbot, window, line)
    assert boxes(window.graph_view) == {}
    snap = step_to(qtbot, window, 5)  # h = x * w ran: MulBackward0 and the two leaves appear
    drawn = boxes(window.graph_view)
    assert set(drawn) == {node["id"] for node in snap["graph"]["added"]} and len(drawn) == 3
    assert all(outline(item) == PALETTE["new"] for item in drawn.values())
    snap = step_to(qtbot, window, 6)  # loss = (h ** 2).sum() ran: two more, only they are new
    drawn = boxes(window.graph_view)
    newer = {node["id"] for node in snap["graph"]["added"]}
    assert len(drawn) == 5 and len(newer) == 2
    assert {i for i, item in drawn.items() if outline(item) == PALETTE["new"]} == newer
    mul = snap["graph"]["roots"]["h"]
    selected = Mock()
    window.graph_model.selected_changed.connect(selected)
    click(qtbot, window.graph_view, mul)
    selected.assert_called_once_with(mul)
    details = window.graph_view.findChild(QPlainTextEdit, "graph_details").toPlainText()
    assert details.startswith("MulBackward0") and "_saved_self" in details


def test_preview_then_backward_show_pytorchs_gradients_and_replay_walks_backwards(qtbot, window):
    at_done(qtbot, window)
    panel = window.backward_panel
    expected = pytorch_grads()
    with qtbot.waitSignal(window.bridge.replied, timeout=10_000) as preview:
        qtbot.mouseClick(panel.backward_tab.preview_button, Qt.MouseButton.LeftButton)
    assert {g["name"]: g["grad"]["values"].tolist() for g in preview.args[2]["grads"]} == expected
    assert {name: after for name, (_, after) in table_rows(panel).items()} == {"x": "[18, 64]", "w": "[6, 32]"}
    with qtbot.waitSignal(window.bridge.replied, timeout=10_000) as reply:
        qtbot.mouseClick(panel.backward_tab.backward_button, Qt.MouseButton.LeftButton)
    result = reply.args[2]
    assert result["ok"] and table_rows(panel)["w"] == ("None", "[6, 32]")
    assert result["vars"]["w"]["grad"]["values"].tolist() == expected["w"]
    # the replay is a valid reverse order: a node runs after every node that sends it a gradient
    with qtbot.waitSignal(window.bridge.replied, timeout=10_000) as graph_reply:
        window.requests.ask("graph", lambda _result: None)
    edges = graph_reply.args[2]["graph"]["edges"]
    order = [step["id"] for step in result["replay"]]
    position = {node_id: i for i, node_id in enumerate(order)}
    for source, target, _ in edges:
        if source in position and target in position:
            assert position[source] < position[target]
    assert result["replay"][0]["name"] == "SumBackward0"
    panel.form.replay.restart()
    seen = []
    for _ in order:
        panel.form.replay.step_forward()
        seen.append(window.graph_model.active)
    assert seen == order
    assert outline(boxes(window.graph_view)[order[-1]]) == PALETTE["active"][1]


def test_second_backward_shows_the_error_card_and_the_app_keeps_working(qtbot, window):
    at_done(qtbot, window)
    panel = window.backward_panel
    for _ in range(2):
        with qtbot.waitSignal(window.bridge.replied, timeout=10_000) as reply:
            qtbot.mouseClick(panel.backward_tab.backward_button, Qt.MouseButton.LeftButton)
    assert not reply.args[2]["ok"]
    assert panel.card.isVisible()
    assert "Trying to backward through the graph a second time" in panel.card.message.text()
    press(qtbot, window, Qt.Key.Key_F10)
    qtbot.waitUntil(lambda: window.session.state == "paused" and window.run.live["event"] == "return")
    press(qtbot, window, Qt.Key.Key_F5)
    qtbot.waitUntil(lambda: window.run is not None and window.run.ended is not None)
    assert window.run.ended.status == "ok"


def test_hovering_a_variable_highlights_its_subgraph(qtbot, window):
    at_done(qtbot, window)
    window.variables_view.variable_hovered.emit("h")
    roots = window.run.live["graph"]["roots"]
    highlighted = {i for i, item in boxes(window.graph_view).items() if outline(item) == PALETTE["highlight"]}
    assert roots["h"] in highlighted and roots["loss"] not in highlighted


def test_export_the_graph_of_a_pause(qtbot, window, tmp_path):
    at_done(qtbot, window)
    assert window.graph_view.export_png(tmp_path / "g.png") and window.graph_view.export_svg(tmp_path / "g.svg")
    assert (tmp_path / "g.png").stat().st_size > 1000
    assert "MulBackward0" in (tmp_path / "g.svg").read_text(encoding="utf-8")


def test_hovering_a_graph_node_tints_the_variables_behind_it(qtbot, window):
    at_done(qtbot, window)
    roots = window.run.live["graph"]["roots"]
    canvas = window.graph_view.findChild(QGraphicsView, "graph_canvas")
    box = boxes(window.graph_view)[roots["h"]]
    with qtbot.waitSignal(window.graph_view.node_hovered, timeout=3000) as hovered:
        qtbot.mouseMove(canvas.viewport(), canvas.mapFromScene(box.sceneBoundingRect().center()))
    assert hovered.args == [["h"]]
    model = window.variables_view.model
    tint = model.index_for_path(":h").data(Qt.ItemDataRole.BackgroundRole)
    assert tint is not None and tint != model.index_for_path(":x").data(Qt.ItemDataRole.BackgroundRole)
    window.graph_view.node_hovered.emit([])
    assert model.index_for_path(":h").data(Qt.ItemDataRole.BackgroundRole) is None



def test_an_empty_graph_names_a_modules_parameters_as_the_leaves_waiting_for_an_operation(qtbot, window_on):
    """Lesson 18 before its first forward pass: only ``nn.Linear``'s parameters require grad."""
    from PySide6.QtWidgets import QLabel

    win = window_on("import torch\nmodel = torch.nn.Linear(3, 1)\ny = model(torch.ones(2, 3))\ndone = True\n",
                    "modules.py")
    qtbot.waitUntil(win.isActiveWindow)  # the shortcuts work in the active window
    press(qtbot, win, Qt.Key.Key_F11)
    wait_paused(qtbot, win, 1)
    step_to(qtbot, win, 2)
    step_to(qtbot, win, 3)
    message = win.graph_view.findChild(QLabel, "graph_empty_message")
    assert message.isVisible()
    assert message.text().startswith("model.weight, model.bias require grad, but no operation has used them yet")
    step_to(qtbot, win, 4)
    qtbot.waitUntil(lambda: not message.isVisible())  # y's graph is drawn


@pytest.mark.parametrize("size", [(1280, 800), (1920, 1080)], ids=lambda s: f"{s[0]}x{s[1]}")
def test_a_click_on_a_node_never_shrinks_the_drawing_and_its_details_fill_their_pane(qtbot, open_window, tmp_path,
                                                                                     size):
    """Clicking a node grew the details pane and pushed the leaves out of view; at 1920×1080 after a restart the
    pane beside the graph took a fifth of the window, mostly empty."""
    path = tmp_path / "graph_lesson.py"
    path.write_text(LESSON, encoding="utf-8")
    first = open_window(path, size)
    first.close()  # saves the window's state: the second window is the restart
    window = open_window(path, size)
    window.code_view.go_to_line(6)
    window.commands.run_to_cursor()
    wait_paused(qtbot, window, 6)
    port = window.graph_view.findChild(QGraphicsView, "graph_canvas").viewport()
    before = port.size()
    mul = window.run.live_graph()["roots"]["h"]
    click(qtbot, window.graph_view, mul)
    assert window.graph_model.selected == mul
    assert port.width() >= before.width() and port.height() >= before.height()
    details = window.graph_view.findChild(QPlainTextEdit, "graph_details")
    lines = details.document().blockCount() * details.fontMetrics().lineSpacing()
    assert lines >= details.viewport().height() / 2, (lines, details.viewport().size())


HOOK_LESSON = '''import torch
x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
h = x * 2


def double_grad(grad):
    return grad * 2


h.register_hook(double_grad)
loss = (h ** 2).sum()
loss.backward()
done = True
'''


def test_inside_a_hook_the_empty_graph_says_backward_is_running(qtbot, window_on):
    """Lesson 14, F11 into the hook during backward: the graph said "No tensor requires grad yet" while x, h and
    loss require grad."""
    window = window_on(HOOK_LESSON, "hook_lesson.py")
    window.code_view.go_to_line(12)
    window.commands.run_to_cursor()
    wait_paused(qtbot, window, 12)
    message = window.graph_view.findChild(QLabel, "graph_empty_message")
    assert not message.isVisible()
    press(qtbot, window, Qt.Key.Key_F11)
    snapshot = wait_paused(qtbot, window, 6)
    assert snapshot["function"] == "double_grad" and snapshot["in_backward"] is True
    assert message.isVisible() and message.text().startswith("backward() is running")
    assert "No tensor requires grad" not in message.text()


def named(window, name: str) -> list[int]:
    """The ids of the drawn nodes whose box says ``name``."""
    return [item.data(0) for item in canvas(window.graph_view).scene().items()
            if isinstance(item, QGraphicsSimpleTextItem) and item.text() == name and item.isVisible()
            and not isinstance(item.parentItem(), QGraphicsPathItem)]


def freed_look(window, node_id: int) -> tuple[bool, list[str]]:
    """Whether the node's box is drawn dashed, and the marks on it (the texts of the small tags it carries)."""
    box = boxes(window.graph_view)[node_id]
    marks = [item.text() for item in canvas(window.graph_view).scene().items()
             if isinstance(item, QGraphicsSimpleTextItem) and item.data(0) == node_id and item.isVisible()
             and isinstance(item.parentItem(), QGraphicsPathItem) and not item.text().endswith("→")]
    return box.pen().style() == Qt.PenStyle.DashLine, marks


def test_run_backward_draws_the_nodes_whose_saved_tensors_it_freed_as_freed(qtbot, window):
    """Lesson 01 at 1280x800: after Run backward() the details said freed, but the drawing did not change."""
    at_done(qtbot, window)
    graph = window.graph_view
    [mul], [leaf] = named(window, "MulBackward0"), named(window, "x")
    before = graph.grab().toImage()
    assert freed_look(window, mul) == (False, [])
    with qtbot.waitSignal(window.bridge.replied, timeout=10_000):
        qtbot.mouseClick(window.backward_panel.backward_tab.backward_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: freed_look(window, mul) == (True, ["freed"]), timeout=10_000)
    assert boxes(graph)[mul].brush().color().name() == PALETTE["freed"][0]
    assert freed_look(window, leaf) == (False, [])  # a leaf saves nothing: it stays as it was
    assert graph.grab().toImage() != before
    click(qtbot, graph, mul)
    assert "freed by backward()" in graph.findChild(QPlainTextEdit, "graph_details").toPlainText()


def test_the_scripts_own_backward_leaves_its_graph_drawn_as_freed(qtbot, window_on):
    """Lesson 03 at 1600: after the script's loss.backward() every node looked live."""
    win = window_on(LESSON.replace("done = True", "loss.backward()\ndone = True"), "own_backward.py")
    qtbot.waitUntil(win.isActiveWindow)  # Ctrl+F10 works in the active window
    win.code_view.go_to_line(7)
    press(qtbot, win, Qt.Key.Key_F10, Qt.KeyboardModifier.ControlModifier)
    wait_paused(qtbot, win, 7)
    ops = named(win, "MulBackward0") + named(win, "PowBackward0")
    assert len(ops) == 2
    qtbot.waitUntil(lambda: all(freed_look(win, i) == (True, ["freed"]) for i in ops), timeout=10_000)


def test_the_freed_mark_holds_its_whole_label_in_chinese(qtbot, window):
    """In 中文 the "已释放" mark was cut at its top: sized by the font's height, not the Chinese glyphs'."""
    window.set_language("zh")
    at_done(qtbot, window)
    [mul] = named(window, "MulBackward0")
    with qtbot.waitSignal(window.bridge.replied, timeout=10_000):
        qtbot.mouseClick(window.backward_panel.backward_tab.backward_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: freed_look(window, mul) == (True, ["已释放"]), timeout=10_000)
    [label] = [item for item in canvas(window.graph_view).scene().items()
               if isinstance(item, QGraphicsSimpleTextItem) and item.data(0) == mul and item.text() == "已释放"]
    mark = label.parentItem()
    assert mark.path().boundingRect().contains(label.mapRectToParent(label.boundingRect()))
