"""In 中文 the whole window is Chinese, in every state a lesson passes through; back in English it is English again."""

from __future__ import annotations

import re

from PySide6.QtCore import QModelIndex
from PySide6.QtWidgets import (
    QAbstractButton,
    QApplication,
    QDockWidget,
    QLabel,
    QLineEdit,
    QMenu,
    QPlainTextEdit,
    QTabBar,
    QTableView,
    QTreeView,
    QWidget,
)
from test_main_window import wait_paused

from app.session import ENDED, PAUSED
from tests.conftest import line_of

LESSON = """\
import torch

x = torch.tensor([1.0, 2.0], requires_grad=True)
y = (x * x).sum()
z = y * 2
print("done")
raise ValueError("boom")
"""

#: Words that stay as they are in Chinese: PyTorch's and Python's names, keys, the app's name.
ALLOWED = {
    "torch", "autograd", "grad", "backward", "PyTorch", "Python", "GradStep", "README", "None", "True", "False",
    "Ctrl", "Shift", "Alt", "Enter", "MB", "PNG", "SVG", "CPU", "GPU", "UTF", "NaN", "Inf", "English",
    "no_grad", "inference_mode", "retain_graph", "create_graph", "allow_unused", "grad_outputs", "outputs",
    "inputs", "gradient", "requires_grad", "is_leaf", "grad_fn", "shape", "dtype", "device", "Function",
    "ones_like", "root", "leaf", "sum", "AccumulateGrad", "Parameter", "await", "yield", "meta", "nnz",
    "train", "eval", "markdown", "py", "ValueError", "RuntimeError", "Error", "x", "y", "z", "v", "e", "g", "d",
    "Traceback", "lesson", "line", "tensor", "float32",
}
#: Widgets whose text is the lesson's own (its code, notes, titles, output) or PyTorch's, not the app's.
OWN_TEXT = ("code_view", "notes_view", "lesson_browser", "console", "error_message")


def english_words(text: str) -> list[str]:
    """The words of ``text`` that are English prose: not code, identifiers, names, numbers or file names."""
    # menu accelerators (文件(&F)), a quoted comment ('# predict:'), shortcuts (Ctrl+Shift+F10)
    text = re.sub(r"\(&?[A-Za-z]\)|&(?=\w)|'#[^']*'|(?:Ctrl|Shift|Alt)\+[\w+]+", "", text)
    text = re.sub(r"<code>.*?</code>|`[^`]*`|<[^>]+>|&\w+;", " ", text)
    code = re.compile(r"\b\S+\.py\b|\b[\w.]+\(\)?|\b\w*[_.\d]\w*\b")  # file names, calls, identifiers
    text = code.sub(lambda m: " " if re.search(r"[_.\d(]", m[0]) else m[0], text)
    words = re.findall(r"[A-Za-z][A-Za-z']*", text)
    return [w for w in words if w not in ALLOWED and not re.fullmatch(r"F\d+|[A-Z][a-z]+[A-Z]\w*", w)]


def own_text(widget: QWidget, window) -> bool:
    owners = [getattr(window, name, None) for name in OWN_TEXT]
    while widget is not None:
        if widget in owners or widget.objectName() in OWN_TEXT:
            return True
        widget = widget.parentWidget()
    return False


def visible_texts(window) -> list[tuple[str, str]]:
    """(where, text) for every text the learner can see or hover in the window, its menus included."""
    found: list[tuple[str, str]] = [("window title", window.windowTitle())]
    for widget in window.findChildren(QWidget):
        if not widget.isVisibleTo(window) or own_text(widget, window):
            continue
        where = f"{type(widget).__name__} {widget.objectName()}"
        found.append((f"{where} tooltip", widget.toolTip()))
        if isinstance(widget, (QLabel, QAbstractButton)):
            found.append((where, widget.text()))
        if isinstance(widget, QLineEdit):
            found.append((f"{where} placeholder", widget.placeholderText()))
        if isinstance(widget, QPlainTextEdit) and widget.objectName() == "graph_details":
            found.append((where, widget.toPlainText() or widget.placeholderText()))
        if isinstance(widget, QDockWidget):
            found.append((where, widget.windowTitle()))
        if isinstance(widget, QTabBar):
            found += [(f"{where} tab", widget.tabText(i)) for i in range(widget.count())]
        if isinstance(widget, (QTableView, QTreeView)) and widget.model() is not None:
            model = widget.model()
            found += [(f"{where} header", str(model.headerData(c, _horizontal()) or ""))
                      for c in range(model.columnCount(QModelIndex()))]

    def walk(actions, path):
        for action in actions:
            found.extend([(f"{path} > {action.text()}", action.text()), (f"{path} tooltip", action.toolTip())])
            if action.menu() is not None:
                walk(action.menu().actions(), f"{path} > {action.text()}")

    walk(window.menuBar().actions(), "menu")
    walk(window.toolbar.actions(), "toolbar")
    for menu in window.findChildren(QMenu):
        walk(menu.actions(), "menu")
    return [(where, text) for where, text in found if text]


def _horizontal():
    from PySide6.QtCore import Qt

    return Qt.Orientation.Horizontal


def english_in(window) -> dict[str, list[str]]:
    return {where: words for where, text in visible_texts(window) if (words := english_words(text))}


def assert_chinese(window, state: str) -> None:
    english = english_in(window)
    assert english == {}, f"{state}: English texts on screen: {english}"


def test_in_chinese_every_state_of_the_window_speaks_chinese_and_english_comes_back(window_on, qtbot):
    window = window_on(LESSON)
    window.set_language("zh")
    assert_chinese(window, "idle")

    window.commands.step_over()
    wait_paused(qtbot, window)  # the window has shown the pause, not only the session heard it
    window.run_to_cursor_line = line_of(window.path, "z = y * 2")
    window.code_view.go_to_line(window.run_to_cursor_line)
    window.commands.run_to_cursor()
    wait_paused(qtbot, window, 5)
    window.docks["backward"].raise_()
    assert_chinese(window, "paused")

    # a teaching card: backward() twice on a graph without retain_graph
    panel = window.backward_panel
    panel.backward_tab.root_combo.setCurrentText("y")
    panel.backward_tab.backward_button.click()
    qtbot.waitUntil(lambda: panel.results_title.isVisible(), timeout=30_000)
    panel.backward_tab.backward_button.click()
    qtbot.waitUntil(lambda: panel.card.isVisible(), timeout=30_000)
    assert "第 09 课" in panel.card.lesson_link.text()
    assert "retain_graph=True" in panel.card.fix.text()
    panel.form.replay.step_forward()
    window.graph_model.select(next(iter(window.graph_model.nodes)))
    assert_chinese(window, "teaching card")

    window.commands.step_back()
    qtbot.waitUntil(lambda: window.run.viewing is not None)
    assert "正在查看过去" in window.state_label.text()
    assert_chinese(window, "a past step")

    window.commands.go_live()
    window.commands.start_or_continue()
    qtbot.waitUntil(lambda: window.session.state == PAUSED and window.run.live is not None
                    and window.run.live.get("post_mortem"), timeout=30_000)
    assert "ValueError" in window.state_label.text() and "错误" in window.state_label.text()
    assert_chinese(window, "post-mortem")

    window.commands.start_or_continue()
    qtbot.waitUntil(lambda: window.session.state == ENDED and window.run.ended is not None, timeout=30_000)
    assert "因错误而停止" in window.state_label.text()
    assert_chinese(window, "ended")

    window.set_language("en")
    assert len(english_in(window)) > 50  # the same walk finds the English texts: it does look at them
    assert window.menus["file"].title() == "&File"
    assert window.docks["graph"].windowTitle() == "Autograd graph"
    assert window.act_step_over.text() == "Step &Over"
    assert window.state_label.text().startswith("Stopped by an error: ValueError on line 7")
    assert panel.state_label.text().startswith("The run has ended")
    assert "Fix:" in panel.card.fix.text()
    assert not re.search("[\u4e00-\u9fff]", " ".join(text for _, text in visible_texts(window)
                                                    if "English" not in text and "简体中文" not in text))


def test_the_engines_notices_and_the_input_message_reach_the_learner_in_chinese(qtbot):
    """Notices the lesson process sends (a long call, a replaced trace function, a breakpoint in another
    thread) and the input() message were English in 中文 mode."""
    from app import i18n
    from app import messages as m
    from app.lesson.hooks import OTHER_THREAD
    from app.session import Session
    from widgets.console_view import ConsoleView
    from widgets.session_bridge import SessionBridge

    session = Session(warm_spare=False)
    bridge = SessionBridge(session)
    try:
        i18n.set_language("zh")
        notice = m.Notice.of("breakpoint", OTHER_THREAD, 3, line=3, function="work", thread="worker")
        assert notice.text.startswith("The breakpoint at line 3 is in work()")  # engine readers get English
        with qtbot.waitSignal(bridge.noticed) as shown:
            bridge._message_arrived.emit(session.generation, (([], 0), notice))
        assert shown.args[1] == ("第 3 行的断点位于 work() 中，它在线程“worker”里运行："
                                 "GradStep 只暂停主线程，所以不会在那里停下。")
        console = ConsoleView()
        qtbot.addWidget(console)
        console.append_error({"type": "RuntimeError", "message": m.NO_INPUT_MESSAGE, "traceback": []})
        assert "GradStep 暂不支持" in console.output.toPlainText()
    finally:
        bridge.detach()
        session.close()


def test_a_run_the_lesson_process_broke_ends_with_words_in_chinese():
    from app import i18n
    from app import messages as m
    from app.lesson_process import malformed_error
    from widgets.run_status_bar import end_text

    ended = m.Ended("crashed", error=malformed_error(m.MalformedMessage("a frame starting with b'xx'")))
    assert end_text(ended).startswith("The lesson process sent a malformed message (a frame starting with")
    i18n.set_language("zh")
    assert end_text(ended) == ("课程进程发来了一条格式错误的消息（a frame starting with b'xx'）"
                               "；下一次运行会启动一个新的进程")


def test_qt_s_own_buttons_follow_the_language(window_on):
    """The diff dialog's Close and the questions' Yes / Cancel stayed English in 中文 mode: Qt's own texts
    come from Qt's translations, which the window now installs with the language."""
    from PySide6.QtWidgets import QDialogButtonBox

    window = window_on(LESSON)
    buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close | QDialogButtonBox.StandardButton.Cancel)
    window.set_language("zh")
    QApplication.processEvents()  # buttons made before the change hear of it
    assert [button.text() for button in buttons.buttons()] == ["关闭", "取消"]
    window.set_language("en")
    QApplication.processEvents()
    assert [button.text() for button in buttons.buttons()] == ["Close", "Cancel"]


def output_pane_own_lines(window) -> list[str]:
    """The lines of the Output pane that the app wrote (its messages), not the lesson's printed output."""
    printed = {line for entry in window.console.transcript.entries if entry[0] == "output"
               for line in entry[2].splitlines()}
    return [line for line in window.console.output.toPlainText().splitlines() if line and line not in printed]


def test_a_window_tour_in_chinese_with_a_lesson_paused_finds_almost_no_english(open_window, qtbot):
    """Lesson 01 paused, started in English, then View > Language > 简体中文: every visible widget's
    text, tooltip and placeholder, the menus, the toolbar and the Output pane's own lines. The Output
    pane kept "▶ Running 01_dynamic_graphs.py" in English (its messages were worded once, when written)."""
    from app.workspace import LESSONS_DIR

    window = open_window(LESSONS_DIR / "01_dynamic_graphs.py", (1280, 800))
    window.commands.start_or_continue()
    # the session hears of a pause on its reader thread before the window's run shows it
    step = wait_paused(qtbot, window)["step"]
    for _ in range(3):
        window.commands.step_over()
        qtbot.waitUntil(lambda s=step: window.session.state == PAUSED and window.run.live is not None
                        and window.run.live["step"] > s, timeout=30_000)
        step = window.run.live["step"]
    assert "▶ Running 01_dynamic_graphs.py" in output_pane_own_lines(window)
    window.set_language("zh")
    texts = visible_texts(window) + [("Output pane", line) for line in output_pane_own_lines(window)]
    english = [(where, text) for where, text in texts if english_words(text)]
    print(f"tour in 中文: {len(english)} English texts of {len(texts)}: {english}")
    assert len(texts) > 100  # the walk does see the window
    assert len(english) <= 3, english
    assert "▶ 正在运行 01_dynamic_graphs.py" in output_pane_own_lines(window)
    window.set_language("en")
    assert "▶ Running 01_dynamic_graphs.py" in output_pane_own_lines(window)


def test_the_open_dialog_speaks_the_interface_s_language(window_on, qtbot):
    """File > Open in 中文: "Look in:" and "Files of type:" stayed English (Qt's translation has them
    without the accelerator the dialog's labels carry)."""
    from PySide6.QtWidgets import QFileDialog

    window = window_on(LESSON)
    window.set_language("zh")
    window.act_open.trigger()
    dialog = window.findChild(QFileDialog, "open_dialog")
    assert dialog is not None and dialog.isVisible()
    texts = [label.text() for label in dialog.findChildren(QLabel) if label.isVisibleTo(dialog)]
    texts += [text for button in dialog.findChildren(QAbstractButton) if button.isVisibleTo(dialog)
              for text in (button.text(), button.toolTip())]
    assert "查找范围(&L)：" in texts and "文件类型(&T)：" in texts
    assert [text for text in texts if english_words(text)] == []
    dialog.reject()
