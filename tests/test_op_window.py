"""Step Into Expression in the window: the sub-expression highlighted, its result as a pseudo-variable."""

from __future__ import annotations

from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QTextCursor
from PySide6.QtWidgets import QGraphicsView, QPlainTextEdit

RNN = """import torch
torch.manual_seed(0)
W_xh = torch.randn(3, 4, requires_grad=True)
W_hh = torch.randn(4, 4, requires_grad=True)
b_h = torch.zeros(4, requires_grad=True)
h_t = torch.zeros(4)
x_t = torch.randn(3)
h_t = torch.tanh(x_t @ W_xh + h_t @ W_hh + b_h)
print("done")
"""
LINE = 8
TEXTS = ["x_t @ W_xh", "h_t @ W_hh", "x_t @ W_xh + h_t @ W_hh", "x_t @ W_xh + h_t @ W_hh + b_h",
         "torch.tanh(x_t @ W_xh + h_t @ W_hh + b_h)"]


def variable_names(window) -> list[str]:
    model = window.variables_view.model
    return [model.index(row, 0).data() for row in range(model.rowCount())]


def highlighted(window) -> str:
    start, end = window.code_view.operation_span()
    return window.code_view.toPlainText()[start:end]


def test_step_into_expression_walks_the_line_operation_by_operation(qtbot, window_on):
    window = window_on(RNN)
    assert "Step Into E&xpression" in [action.text() for action in window.run_actions]
    window.code_view.go_to_line(LINE)
    window.commands.run_to_cursor()
    qtbot.waitUntil(lambda: window.session.state == "paused" and window.run.live is not None, timeout=30_000)
    assert window.run.live["line"] == LINE
    assert window.act_step_expression.isEnabled() and window.code_view.operation_span() is None
    for step, text in enumerate(TEXTS):
        qtbot.keyClick(window.code_view, Qt.Key.Key_F11, Qt.KeyboardModifier.AltModifier)
        qtbot.waitUntil(lambda text=text: window.session.state == "paused"
                        and window.run.live.get("op", {}).get("text") == text, timeout=30_000)
        assert window.run.live["step"] == step + 2
        assert highlighted(window) == text
        assert f"⟨{text}⟩" in variable_names(window)
        combo = window.backward_panel.backward_tab.root_combo
        roots = [combo.itemText(i) for i in range(combo.count())]
        assert not any(root.startswith("⟨") for root in roots)  # backward() needs a name the frame has
        added = {node["id"] for node in window.run.live["graph"]["added"]}
        # amber: the operation's nodes (and a leaf's accumulator the graph meets for the first time)
        assert set(window.run.live["op"]["nodes"]) <= added == window.graph_model.new
    qtbot.keyClick(window.code_view, Qt.Key.Key_F10)  # F10 finishes the line
    qtbot.waitUntil(lambda: window.session.state == "paused" and window.run.live["line"] == LINE + 1,
                    timeout=30_000)
    assert window.code_view.operation_span() is None
    assert not any(name.startswith("⟨") for name in variable_names(window))


#: The RNN line in a loop over inputs that require grad, so each ``@`` of the second pass makes three nodes.
LOOP = "".join(RNN.splitlines(keepends=True)[:6]) + """for x_t in torch.randn(2, 3, requires_grad=True):
    h_t = torch.tanh(x_t @ W_xh + h_t @ W_hh + b_h)
print("done")
"""
LOOP_LINE = 8


def paused_at(qtbot, window, line: int, text: str | None = None) -> dict:
    """Wait for the pause at ``line`` (at the operation ``text``, when given); returns its snapshot."""
    def there() -> bool:
        snap = window.run.live
        return (window.session.state == "paused" and snap is not None and snap["line"] == line
                and (snap.get("op") or {}).get("text") == text)

    qtbot.waitUntil(there, timeout=30_000)
    return window.run.live


def step_expression(qtbot, window, text: str) -> dict:
    qtbot.keyClick(window.code_view, Qt.Key.Key_F11, Qt.KeyboardModifier.AltModifier)
    return paused_at(qtbot, window, window.run.live["line"], text)


def run_to(qtbot, window, line: int) -> dict:
    window.code_view.go_to_line(line)
    window.commands.run_to_cursor()
    return paused_at(qtbot, window, line)


def click_node(qtbot, window, node_id: int) -> None:
    canvas = window.graph_view.findChild(QGraphicsView, "graph_canvas")
    target = next(item for item in canvas.scene().items() if item.data(0) == node_id and item.parentItem() is None)
    canvas.centerOn(target)
    qtbot.mouseClick(canvas.viewport(), Qt.LeftButton, pos=canvas.mapFromScene(target.sceneBoundingRect().center()))


def hover_text(qtbot, window, line: int, fragment: str, offset: int = 0) -> None:
    """Move the mouse onto character ``offset`` of ``fragment`` (its first occurrence in ``line``)."""
    code = window.code_view
    block = code.document().findBlockByNumber(line - 1)
    cursor = QTextCursor(block)
    cursor.setPosition(block.position() + block.text().index(fragment) + offset)
    left = code.cursorRect(cursor)
    cursor.movePosition(QTextCursor.NextCharacter)
    right = code.cursorRect(cursor)
    qtbot.mouseMove(code.viewport(), QPoint((left.left() + right.left()) // 2, left.center().y()))


def test_clicking_an_operation_node_selects_its_sub_expression_and_names_what_else_it_made(qtbot, window_on):
    window = window_on(LOOP)
    run_to(qtbot, window, LOOP_LINE)
    snap = step_expression(qtbot, window, "x_t @ W_xh")
    names = {node["id"]: node["name"] for node in snap["graph"]["added"]}
    (matmul,) = [nid for nid in snap["op"]["nodes"] if names[nid] == "MmBackward0"]
    window.code_view.go_to_line(1)
    click_node(qtbot, window, matmul)
    assert window.code_view.textCursor().selectedText() == "x_t @ W_xh"
    details = window.graph_view.findChild(QPlainTextEdit, "graph_details").toPlainText()
    # no pass after run to cursor (the lesson ran untraced before): the operation's own nodes are told apart
    assert (f"made by x_t @ W_xh (Tensor.matmul) on line {LOOP_LINE}, "
            "which also made UnsqueezeBackward0 and SqueezeBackward4") in details
    qtbot.keyClick(window.code_view, Qt.Key.Key_F10)
    paused_at(qtbot, window, LOOP_LINE - 1)
    qtbot.keyClick(window.code_view, Qt.Key.Key_F10)
    paused_at(qtbot, window, LOOP_LINE)
    snap = step_expression(qtbot, window, "x_t @ W_xh")  # the second pass: the same span, other nodes
    names = {node["id"]: node["name"] for node in snap["graph"]["added"]}
    (matmul,) = [nid for nid in snap["op"]["nodes"] if names[nid] == "MmBackward0"]
    click_node(qtbot, window, matmul)
    details = window.graph_view.findChild(QPlainTextEdit, "graph_details").toPlainText()
    assert "which also made UnsqueezeBackward0 and SqueezeBackward4\n" in details


def test_hovering_a_sub_expression_outlines_the_nodes_it_made_in_every_pass(qtbot, window_on):
    window = window_on(LOOP)
    run_to(qtbot, window, LOOP_LINE)
    qtbot.keyClick(window.code_view, Qt.Key.Key_F10)
    first = paused_at(qtbot, window, LOOP_LINE - 1)["ops"]
    qtbot.keyClick(window.code_view, Qt.Key.Key_F10)
    paused_at(qtbot, window, LOOP_LINE)
    qtbot.keyClick(window.code_view, Qt.Key.Key_F10)
    second = paused_at(qtbot, window, LOOP_LINE - 1)["ops"]
    by_text = {op["text"]: set(op["nodes"]) for op in first}
    for op in second:
        by_text[op["text"]] |= set(op["nodes"])
    graph = window.graph_view
    hover_text(qtbot, window, LOOP_LINE, "h_t @ W_hh", 4)  # the @
    qtbot.waitUntil(lambda: graph.origin_nodes() == by_text["h_t @ W_hh"])
    assert len(by_text["h_t @ W_hh"]) == 5  # two nodes on the first pass, three on the second
    hover_text(qtbot, window, LOOP_LINE, "x_t")  # inside every span around it: the innermost wins
    qtbot.waitUntil(lambda: graph.origin_nodes() == by_text["x_t @ W_xh"])
    hover_text(qtbot, window, LOOP_LINE, "+ h_t")
    qtbot.waitUntil(lambda: graph.origin_nodes() == by_text["x_t @ W_xh + h_t @ W_hh"])
    hover_text(qtbot, window, LOOP_LINE, "h_t =")  # no operation there: the whole line's nodes
    qtbot.waitUntil(lambda: graph.origin_nodes() > set().union(*by_text.values()))  # and the leaves it first used
    leaves = graph.origin_nodes() - set().union(*by_text.values())
    assert {window.graph_model.nodes[i]["kind"] for i in leaves} == {"leaf"}


def test_step_back_walks_back_through_operation_pauses(qtbot, window_on):
    window = window_on(LOOP)
    run_to(qtbot, window, LOOP_LINE)
    step_expression(qtbot, window, "x_t @ W_xh")
    step_expression(qtbot, window, "h_t @ W_hh")
    qtbot.keyClick(window.code_view, Qt.Key.Key_F10, Qt.KeyboardModifier.ShiftModifier)
    qtbot.waitUntil(lambda: window.run.viewing is not None)
    assert highlighted(window) == "x_t @ W_xh"
    assert "⟨x_t @ W_xh⟩" in variable_names(window) and "⟨h_t @ W_hh⟩" not in variable_names(window)
    qtbot.keyClick(window.code_view, Qt.Key.Key_F10, Qt.KeyboardModifier.ShiftModifier)
    qtbot.waitUntil(lambda: window.code_view.operation_span() is None)  # the line pause before the operations
    assert not any(name.startswith("⟨") for name in variable_names(window))
    qtbot.keyClick(window.code_view, Qt.Key.Key_F10,
                   Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)  # back to live
    qtbot.waitUntil(lambda: window.run.viewing is None)
    assert highlighted(window) == "h_t @ W_hh" and "⟨h_t @ W_hh⟩" in variable_names(window)


def test_inspecting_an_operation_result_shows_it_without_asking_the_frame_for_its_name(qtbot, window_on):
    window = window_on("""import torch
a = torch.randn(200, 100, requires_grad=True)
b = (a * 2).exp().sum()
print("done")
""")
    run_to(qtbot, window, 3)
    sent = []
    request = window.session.request

    def recording(kind, **params):
        sent.append((kind, params.get("expression")))
        return request(kind, **params)

    window.session.request = recording
    step_expression(qtbot, window, "a * 2")
    view = window.variables_view
    view.tree.setCurrentIndex(view.model.index_for_path(next(p for p in view.model.paths() if p.endswith("⟨a * 2⟩"))))
    inspector = window.inspector
    qtbot.waitUntil(lambda: inspector.expression == "⟨a * 2⟩" and inspector.value_panel.model.rowCount() == 200)
    assert "⟨a * 2⟩" in inspector.header.text()
    qtbot.waitUntil(lambda: inspector.value_panel.model.columnCount() == 100)  # all values, from the op log
    step_expression(qtbot, window, "(a * 2).exp()")
    assert not [kind for kind, expression in sent if kind != "values" and (expression or "").startswith("⟨")]
    assert ("values", "⟨a * 2⟩") in sent
