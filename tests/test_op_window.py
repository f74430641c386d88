"""Step Into Expression in the window: the sub-expression highlighted, its result as a pseudo-variable."""

from __future__ import annotations

from PySide6.QtCore import Qt

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
    window.run_to_cursor()
    qtbot.waitUntil(lambda: window.session.state == "paused" and window._last_snapshot is not None, timeout=30_000)
    assert window._last_snapshot["line"] == LINE
    assert window.act_step_expression.isEnabled() and window.code_view.operation_span() is None
    for step, text in enumerate(TEXTS):
        qtbot.keyClick(window.code_view, Qt.Key.Key_F11, Qt.KeyboardModifier.AltModifier)
        qtbot.waitUntil(lambda: window.session.state == "paused" and window._last_snapshot.get("op", {}).get(
            "text") == text, timeout=30_000)
        assert window._last_snapshot["step"] == step + 2
        assert highlighted(window) == text
        assert f"⟨{text}⟩" in variable_names(window)
        roots = [window.backward_panel.root_combo.itemText(i) for i in range(window.backward_panel.root_combo.count())]
        assert not any(root.startswith("⟨") for root in roots)  # backward() needs a name the frame has
        added = {node["id"] for node in window._last_snapshot["graph"]["added"]}
        # amber: the operation's nodes (and a leaf's accumulator the graph meets for the first time)
        assert set(window._last_snapshot["op"]["nodes"]) <= added == set(window.graph_view._new)
    qtbot.keyClick(window.code_view, Qt.Key.Key_F10)  # F10 finishes the line
    qtbot.waitUntil(lambda: window.session.state == "paused" and window._last_snapshot["line"] == LINE + 1,
                    timeout=30_000)
    assert window.code_view.operation_span() is None
    assert not any(name.startswith("⟨") for name in variable_names(window))
