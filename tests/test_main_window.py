"""The main window on a real session: what a learner does with the keyboard and mouse, and what they see."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QLabel, QMessageBox
from test_code_view import click_gutter

from app import messages as m
from app.lesson_format import list_lessons
from app.session import Session
from app.workspace import Workspace
from widgets import settings
from widgets.console_view import LINE_CHARS
from widgets.main_window import MainWindow

STEPS = '''import torch
x = torch.tensor([1.0, 2.0], requires_grad=True)
y = x * 3
with torch.no_grad():
    z = y * 2
total = y.sum()
print("total", total.item())
'''


@pytest.fixture
def window(qtbot, tmp_path):
    settings.use_file(str(tmp_path / "settings.ini"))
    lessons = tmp_path / "lessons"
    lessons.mkdir()
    (lessons / "01_steps.py").write_text(STEPS, encoding="utf-8")
    session = Session(warm_spare=False)
    win = MainWindow(session, Workspace(tmp_path / "data", lessons), lessons)
    qtbot.addWidget(win)
    win.show()
    win.open_file(lessons / "01_steps.py")
    yield win
    win.close()
    session.close()
    settings.use_file(None)


def press(qtbot, win, key, modifier=Qt.KeyboardModifier.NoModifier):
    qtbot.keyClick(win.code_view, key, modifier)


def wait_paused(qtbot, win, line=None, timeout=30_000):
    def check():
        assert win.session.state == "paused"
        assert (win.run.live if win.run else None) is not None
        if line is not None:
            assert (win.run.live if win.run else None)["line"] == line

    qtbot.waitUntil(check, timeout=timeout)
    return (win.run.live if win.run else None)


def wait_ended(qtbot, win, timeout=30_000):
    qtbot.waitUntil(lambda: win.session.state == "ended" and win.run is not None and win.run.ended is not None,
                    timeout=timeout)
    return win.run.ended


def variable_names(win) -> list[str]:
    model = win.variables_view.model
    return [model.index(r, 0).data() for r in range(model.rowCount())]


def test_stepping_with_the_shortcuts_moves_the_line_and_shows_variables(qtbot, window):
    press(qtbot, window, Qt.Key.Key_F11)
    wait_paused(qtbot, window, 1)
    assert "Paused" in window.state_label.text() and window.step_label.text() == "step 1"
    for line in (2, 3):
        press(qtbot, window, Qt.Key.Key_F10)
        wait_paused(qtbot, window, line)
    assert variable_names(window) == ["x"]
    assert window.code_view.set_current_line  # the view shows the line being run
    press(qtbot, window, Qt.Key.Key_F10)
    wait_paused(qtbot, window, 4)
    assert variable_names(window) == ["x", "y"]
    assert window.grad_label.text().strip() == "grad enabled"
    press(qtbot, window, Qt.Key.Key_F10)
    wait_paused(qtbot, window, 5)
    assert window.grad_label.text().strip() == "no_grad"  # the mode flips inside the with block
    assert not window.act_pause.isEnabled() and window.act_step_out.isEnabled()
    press(qtbot, window, Qt.Key.Key_F5)
    ended = wait_ended(qtbot, window)
    assert ended.status == "ok"
    qtbot.waitUntil(lambda: "total 9.0" in window.console.output.toPlainText())
    assert "Finished" in window.state_label.text()
    assert window.act_start.isEnabled() and not window.act_stop.isEnabled()


def test_breakpoint_from_a_gutter_click_then_continue_to_it(qtbot, window):
    assert click_gutter(qtbot, window.code_view, 5) == {5: None}
    press(qtbot, window, Qt.Key.Key_F8)  # Run to End: no pause at the first line
    snapshot = wait_paused(qtbot, window, 5)
    assert snapshot["vars"]["y"]["grad_fn"] == "MulBackward0" and window.step_label.text() == "step 1"
    assert window.session.breakpoints[str(window.path)] == {5: None}


def test_breakpoint_from_the_keyboard_then_continue_to_it(qtbot, window):
    window.code_view.go_to_line(6)
    press(qtbot, window, Qt.Key.Key_F9)
    assert window.code_view.breakpoints() == {6: None}
    press(qtbot, window, Qt.Key.Key_F8)  # Run to End: no pause at the first line
    snapshot = wait_paused(qtbot, window, 6)
    assert snapshot["vars"]["z"]["requires_grad"] is False and snapshot["vars"]["y"]["requires_grad"] is True
    window.commands.stop()
    assert wait_ended(qtbot, window).status == "stopped"


def test_run_to_cursor_from_a_stopped_lesson(qtbot, window):
    window.code_view.go_to_line(5)
    press(qtbot, window, Qt.Key.Key_F10, Qt.KeyboardModifier.ControlModifier)
    wait_paused(qtbot, window, 5)
    assert window.code_view.breakpoints() == {}  # the cursor's line is not left as a breakpoint


def test_edit_a_bundled_lesson_and_run_the_copy(qtbot, window, tmp_path):
    original = tmp_path / "lessons" / "01_steps.py"
    editor = window.code_view
    editor.go_to_line(3)  # y = x * 3
    qtbot.keyClick(editor, Qt.Key.Key_End)
    qtbot.keyClick(editor, Qt.Key.Key_Backspace)
    qtbot.keyClicks(editor, "5")
    assert editor.source() == STEPS.replace("x * 3", "x * 5") and window.isWindowModified()
    press(qtbot, window, Qt.Key.Key_F8)  # Run to End: no pause at the first line
    wait_ended(qtbot, window)
    qtbot.waitUntil(lambda: "total 15.0" in window.console.output.toPlainText())
    copy = tmp_path / "data" / "lessons" / "01_steps.py"
    assert copy.read_text(encoding="utf-8").count("x * 5") == 1
    assert original.read_text(encoding="utf-8") == STEPS  # the bundled lesson is untouched
    assert window.path == copy and window.act_revert.isEnabled()


def test_stop_ends_an_endless_lesson_and_the_window_stays_usable(qtbot, window, tmp_path):
    endless = tmp_path / "endless.py"
    endless.write_text("n = 0\nwhile True:\n    n += 1\n", encoding="utf-8")
    window.open_file(endless)
    press(qtbot, window, Qt.Key.Key_F8)  # Run to End: no pause at the first line
    qtbot.waitUntil(lambda: window.act_pause.isEnabled())
    assert window.code_view.isReadOnly()
    press(qtbot, window, Qt.Key.Key_F5, Qt.KeyboardModifier.ShiftModifier)
    assert wait_ended(qtbot, window).status == "stopped"
    assert not window.code_view.isReadOnly() and "Stopped" in window.state_label.text()


def test_a_crashing_lesson_is_reported_and_the_next_run_works(qtbot, window, tmp_path):
    crash = tmp_path / "crash.py"
    crash.write_text("import ctypes\nctypes.string_at(0)\n", encoding="utf-8")
    window.open_file(crash)
    press(qtbot, window, Qt.Key.Key_F8)  # Run to End: no pause at the first line
    ended = wait_ended(qtbot, window)
    assert ended.status == "crashed"
    assert "crashed (SIGSEGV)" in window.state_label.text()
    qtbot.waitUntil(lambda: "crashed" in window.console.output.toPlainText())
    window.open_file(tmp_path / "lessons" / "01_steps.py")
    press(qtbot, window, Qt.Key.Key_F11)
    wait_paused(qtbot, window, 1)


def test_an_error_pauses_post_mortem_and_marks_the_line(qtbot, window, tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("import torch\na = torch.ones(2, 3)\nb = a @ a\n", encoding="utf-8")
    window.open_file(bad)
    press(qtbot, window, Qt.Key.Key_F8)  # Run to End: no pause at the first line
    snapshot = wait_paused(qtbot, window, 3)
    assert snapshot["post_mortem"]
    assert "Error: RuntimeError on line 3" in window.state_label.text()
    qtbot.waitUntil(lambda: "RuntimeError" in window.console.output.toPlainText())
    press(qtbot, window, Qt.Key.Key_F5)
    assert wait_ended(qtbot, window).status == "error"


def test_selecting_a_large_tensor_fills_the_inspector_with_all_its_values(qtbot, window, tmp_path):
    big = tmp_path / "big.py"
    big.write_text("import torch\nm = torch.arange(200 * 300, dtype=torch.float32).reshape(200, 300)\ndone = 1\n",
                   encoding="utf-8")
    window.open_file(big)
    window.code_view.go_to_line(3)
    press(qtbot, window, Qt.Key.Key_F10, Qt.KeyboardModifier.ControlModifier)
    wait_paused(qtbot, window, 3)
    view = window.variables_view
    index = view.model.index_for_path(view.model.paths()[0])
    view.tree.setCurrentIndex(index)
    model = window.inspector.value_panel.model
    qtbot.waitUntil(lambda: model.rowCount() == 200 and model.columnCount() == 300)
    qtbot.waitUntil(lambda: model.index(199, 299).data() == "6e+04" or model.index(199, 299).data() == "59999")


def test_console_evaluates_in_the_paused_frame(qtbot, window):
    press(qtbot, window, Qt.Key.Key_F11)
    wait_paused(qtbot, window, 1)
    window.code_view.go_to_line(4)
    press(qtbot, window, Qt.Key.Key_F10, Qt.KeyboardModifier.ControlModifier)
    wait_paused(qtbot, window, 4)
    qtbot.keyClicks(window.console.input, "y.grad_fn")
    qtbot.keyClick(window.console.input, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: "MulBackward0" in window.console.output.toPlainText())


def test_layout_and_language_are_saved_and_restored(qtbot, tmp_path):
    settings.use_file(str(tmp_path / "settings.ini"))
    try:
        first = MainWindow(Session(warm_spare=False), Workspace(tmp_path / "data"))
        qtbot.addWidget(first)
        first.show()
        first.docks["watch"].hide()
        first.set_language("zh")
        first.resize(1200, 730)
        first.close()
        second = MainWindow(Session(warm_spare=False), Workspace(tmp_path / "data"))
        qtbot.addWidget(second)
        second.show()
        assert second.docks["watch"].isHidden() and second.language == "zh"
        # The offscreen screen is 800 px square: the width is clamped to the window's minimum, the height comes back.
        assert second.height() == 730 and second.width() >= second.minimumWidth()
        second.reset_layout()
        assert not second.docks["watch"].isHidden()
        second.close()
    finally:
        settings.use_file(None)


def test_unusable_file_says_why_and_keeps_the_current_one(qtbot, window, tmp_path):
    latin = tmp_path / "latin.py"
    latin.write_bytes("s = 'caf\xe9'\n".encode("latin-1"))
    before = window.path
    assert not window.open_file(latin)
    assert window.path == before and "not UTF-8" in window.state_label.text()
    assert Path(window.code_view.path()) == before


WATCHED = """import torch
w = torch.zeros(2, requires_grad=True)
n = 0
for step in range(3):
    n = n + 1
    loss = (w * n).sum()
print("done")
"""


@pytest.mark.parametrize("how", ["continue", "run to end"])
def test_a_watch_with_stop_on_change_stops_where_it_changes_not_where_it_first_appears(qtbot, window, tmp_path,
                                                                                        how):
    """Run to End from stopped ignored the watch; and an expression's first value counted as a change."""
    path = tmp_path / "watched.py"
    path.write_text(WATCHED, encoding="utf-8")
    window.open_file(path)
    window.watch_view.set_expressions(["n"], stop_on_change=["n"])
    if how == "continue":
        press(qtbot, window, Qt.Key.Key_F11)
        wait_paused(qtbot, window, 1)
        press(qtbot, window, Qt.Key.Key_F5)
    else:
        press(qtbot, window, Qt.Key.Key_F8)  # Run to End, from stopped
    wait_paused(qtbot, window, 6)  # n = n + 1 ran: 0 -> 1; n = 0 on line 3 was its first value, not a change
    assert "n changed" in window.state_label.text()
    assert window.run.live["vars"]["n"]["repr"] == "1"
    qtbot.waitUntil(lambda: window.watch_view.model.index(0, 1).data() == "1")


def test_unsaved_edits_of_a_users_file_survive_a_crash_of_the_app(qtbot, window, tmp_path):
    own = tmp_path / "own.py"
    own.write_text("a = 1\n", encoding="utf-8")
    window.open_file(own)
    qtbot.keyClick(window.code_view, Qt.Key.Key_End)
    qtbot.keyClicks(window.code_view, "  # edited")
    window.files.autosave.due.emit()  # as the autosave timer does
    assert own.read_text(encoding="utf-8") == "a = 1\n"
    window.code_view.document().setModified(False)  # the app dies without asking
    window.open_file(tmp_path / "lessons" / "01_steps.py")
    window.open_file(own)  # the next session opens the file again
    assert window.code_view.source() == "a = 1  # edited\n" and window.isWindowModified()
    assert "Recovered unsaved changes" in window.state_label.text()
    window.code_view.document().setModified(False)  # or closing the window would ask about them


def test_a_print_flood_leaves_the_window_usable_with_bounded_output(qtbot, window, tmp_path):
    flood = tmp_path / "flood.py"
    flood.write_text("for i in range(300_000):\n    print('line', i)\nprint('the end')\n", encoding="utf-8")
    window.open_file(flood)
    press(qtbot, window, Qt.Key.Key_F8)  # Run to End: no pause at the first line
    assert wait_ended(qtbot, window, timeout=60_000).status == "ok"
    output = window.console.output
    qtbot.waitUntil(lambda: "the end" in output.toPlainText(), timeout=30_000)
    assert output.document().blockCount() <= window.console.max_lines + 5
    press(qtbot, window, Qt.Key.Key_F11)  # and the window still steps
    wait_paused(qtbot, window, 1)



def test_a_five_megabyte_line_leaves_the_window_usable(qtbot, window, tmp_path):
    """One print of a 5 MB string froze the window for good, Stop included: the console draws
    the line in part and says how much more it had."""
    wide = tmp_path / "wide.py"
    wide.write_text("text = 'A' * 5_000_000\nprint(text)\nprint('the end')\n", encoding="utf-8")
    window.open_file(wide)
    press(qtbot, window, Qt.Key.Key_F8)
    assert wait_ended(qtbot, window, timeout=60_000).status == "ok"
    output = window.console.output
    qtbot.waitUntil(lambda: "the end" in output.toPlainText(), timeout=30_000)
    lines = output.toPlainText().splitlines()
    lines = lines[:lines.index("the end")]
    # The line is drawn in part; the bridge's flood bound may skip some of it (its middle, under load), said
    # on a line of its own, and each part drawn ends with the count of what it left out.
    skipped = [int(line.split()[1].replace(",", "")) for line in lines if "characters of output skipped" in line]
    parts = [line for line in lines if line.startswith("A")]
    assert parts[0][:LINE_CHARS] == "A" * LINE_CHARS
    notes = [part[len(part) - len(part.lstrip("A")):] for part in parts]
    assert all(note.startswith(" … and ") and note.endswith(" more characters on this line") for note in notes)
    shown = sum(len(part) - len(note) for part, note in zip(parts, notes, strict=True))
    cut = sum(int(note.split()[2].replace(",", "")) for note in notes)
    assert shown + cut + sum(skipped) == 5_000_000  # every character is shown or counted
    press(qtbot, window, Qt.Key.Key_F11)  # and the window still steps
    wait_paused(qtbot, window, 1)

def test_output_skipped_in_the_middle_of_a_line_is_said_on_a_line_of_its_own(qtbot, window):
    """Beside two busy loops, the flood bound skipped the middle of a 5 MB line, and its notice was drawn into
    the line's cut count, unseen."""
    hear = window.bridge._on_session_message  # what the session's reader thread calls
    hear(m.Output("stdout", "A" * 100))
    output = window.console.output
    qtbot.waitUntil(lambda: "A" * 100 in output.toPlainText())
    for text in ("B" * 1_500_000, "C" * 1_500_000, "\nthe end\n"):  # faster than the window takes them
        hear(m.Output("stdout", text))
    qtbot.waitUntil(lambda: "the end" in output.toPlainText())
    lines = output.toPlainText().splitlines()
    assert lines[-4:] == ["A" * 100, "[… 1,500,000 characters of output skipped: the lesson printed faster than "
                          "they could be shown …]", "C" * LINE_CHARS + " … and 1,490,000 more characters on this line",
                          "the end"]


def test_a_note_of_the_engine_starts_on_a_line_of_its_own(qtbot, window):
    """A breakpoint note came while the lesson's output ended inside a line: it was glued to the line's end."""
    from app.lesson.hooks import OTHER_THREAD

    hear = window.bridge._on_session_message
    hear(m.Output("stdout", "loss so far: "))
    hear(m.Notice.of("breakpoint", OTHER_THREAD, 3, line=3, function="work", thread="worker"))
    output = window.console.output
    qtbot.waitUntil(lambda: "in work()" in output.toPlainText())
    lines = output.toPlainText().splitlines()
    assert lines[-2] == "loss so far: "
    assert lines[-1].startswith("The breakpoint at line 3 is in work()")


def test_skipped_output_is_said_in_the_chosen_language_and_follows_a_change(qtbot, window):
    hear = window.bridge._on_session_message
    window.set_language("zh")
    try:
        for text in ("B" * 1_500_000, "C" * 1_500_000, "\nthe end\n"):  # faster than the window takes them
            hear(m.Output("stdout", text))
        output = window.console.output
        qtbot.waitUntil(lambda: "the end" in output.toPlainText())
        assert "[… 跳过了 1,500,000 个字符的输出：课程打印得太快，来不及显示 …]" in output.toPlainText().splitlines()
        assert "characters of output skipped" not in output.toPlainText()
    finally:
        window.set_language("en")  # the console draws its transcript again
    assert ("[… 1,500,000 characters of output skipped: the lesson printed faster than they could be shown …]"
            in window.console.output.toPlainText().splitlines())


def test_a_run_that_ended_without_pausing_does_not_ask_for_a_tensor_that_requires_grad(qtbot, window, tmp_path):
    """After F8 the graph said "No tensor requires grad yet: step over a line that creates one", though the lesson
    had made one: the run had ended, and no step of it holds tensors to draw."""
    lesson = tmp_path / "to_end.py"
    lesson.write_text("import torch\nx = torch.ones(2, requires_grad=True)\ny = (x * 2).sum()\n", encoding="utf-8")
    window.open_file(lesson)
    empty = window.graph_view.findChild(QLabel, "graph_empty_message")
    press(qtbot, window, Qt.Key.Key_F8)
    assert wait_ended(qtbot, window).status == "ok"
    assert empty.isVisible() and empty.text().startswith("The run ended without pausing")
    window.set_language("zh")
    assert empty.text().startswith("这次运行没有暂停就结束了")
    window.set_language("en")
    press(qtbot, window, Qt.Key.Key_F10)  # a new run, paused at its first line: nothing requires grad yet
    wait_paused(qtbot, window, 1)
    assert empty.text().startswith("No tensor requires grad yet")


def test_notes_follow_the_line_in_the_chosen_language(qtbot, tmp_path):
    settings.use_file(str(tmp_path / "settings.ini"))
    try:
        win = MainWindow(Session(warm_spare=False), Workspace(tmp_path / "data"))
        qtbot.addWidget(win)
        win.show()
        from app.workspace import LESSONS_DIR

        lesson = LESSONS_DIR / "06_no_grad.py"
        win.open_file(lesson)
        first = win.notes_view.text()
        win.set_language("zh")
        header_zh = win.notes_view.text()
        assert header_zh != first and any("\u4e00" <= ch <= "\u9fff" for ch in header_zh)
        lines = lesson.read_text(encoding="utf-8").splitlines()
        later = max(i for i, text in enumerate(lines, 1) if text.startswith("# %%") and "markdown" not in text)
        win.notes_view.show_line(later + 1)  # the last code section has notes of its own
        assert win.notes_view.text() not in (header_zh, first)
        assert any("\u4e00" <= ch <= "\u9fff" for ch in win.notes_view.text())
        win.close()
    finally:
        settings.use_file(None)


def click_lesson(qtbot, win, stem: str) -> None:
    """Click a lesson in the Lessons list, as the learner does."""
    browser = win.lesson_browser.list
    item = next(browser.item(row) for row in range(browser.count()) if stem in browser.item(row).data(Qt.UserRole))
    browser.scrollToItem(item)
    qtbot.mouseClick(browser.viewport(), Qt.LeftButton, pos=browser.visualItemRect(item).center())


@pytest.mark.parametrize("answer", ["Yes", "Cancel"])
def test_opening_another_lesson_while_paused_asks_and_leaves_nothing_of_the_old_run(qtbot, window, monkeypatch,
                                                                                    tmp_path, answer):
    """Pause in one lesson, click another: the run stopped silently, and Step Back then showed the old
    lesson's variables, output and call stack over the new lesson's code; the empty graph still named
    the old lesson's tensors, and after Cancel the list marked the lesson refused."""
    (tmp_path / "lessons" / "02_other.py").write_text("import torch\nq = torch.ones(2)\n", encoding="utf-8")
    window.lesson_browser.set_lessons(list_lessons(tmp_path / "lessons"), "en")
    asked = []
    monkeypatch.setattr("widgets.lesson_files.QMessageBox.question",
                        lambda *args, **kwargs: asked.append(args[2]) or getattr(QMessageBox.StandardButton, answer))
    press(qtbot, window, Qt.Key.Key_F11)
    wait_paused(qtbot, window, 1)
    for line in (2, 3):
        press(qtbot, window, Qt.Key.Key_F10)
        wait_paused(qtbot, window, line)
    empty = window.graph_view.findChild(QLabel, "graph_empty_message")
    assert empty.text().startswith("x requires grad")  # x has no node yet: the empty graph names it
    click_lesson(qtbot, window, "02_other")
    assert asked and "01_steps.py is running" in asked[0] and "02_other.py" in asked[0]
    selected = window.lesson_browser.list.currentItem().data(Qt.UserRole)
    if answer == "Cancel":  # nothing changes, and the list marks the lesson still open, not the one refused
        assert window.path.name == "01_steps.py" and window.session.state == "paused"
        assert variable_names(window) == ["x"] and selected.endswith("01_steps.py")
        return
    assert window.path.name == "02_other.py" and window.session.state in ("ended", "idle")
    assert selected.endswith("02_other.py")
    assert window.console.input.placeholderText().startswith("F10 or F5 starts the lesson")  # not "The run has ended"
    assert "x" not in empty.text() and empty.text().startswith("No tensor requires grad")  # not the old lesson's x
    press(qtbot, window, Qt.Key.Key_F10, Qt.KeyboardModifier.ShiftModifier)  # Step Back: no old run to show
    stack = window.stack_view.list
    assert variable_names(window) == []
    assert [stack.item(row).text() for row in range(stack.count())] == ["(the lesson is not paused)"]
    assert window.run is None and not window.act_step_back.isEnabled()  # the new lesson has no run yet
    assert "total" not in window.console.output.toPlainText()


def test_status_texts_say_the_state_there_is_past_ended_and_stopped(qtbot, window):
    """The Backward panel said "not paused… Pause it (F6)" while a past step was in view and after
    the run ended, the timeline said "(live)" after the end (and "(finished)" after Stop), and the
    call stack kept the last pause."""
    panel = window.backward_panel
    press(qtbot, window, Qt.Key.Key_F11)
    wait_paused(qtbot, window, 1)
    for line in (2, 3):
        press(qtbot, window, Qt.Key.Key_F10)
        wait_paused(qtbot, window, line)
    assert "(live)" in window.timeline.label_text() and panel.state_label.isHidden()
    window.act_step_back.trigger()
    assert "past step" in panel.state_label.text() and "Go to Live" in panel.state_label.text()
    window.act_go_live.trigger()
    window.act_start.trigger()  # Continue (F5): to the end
    wait_ended(qtbot, window)
    assert "(finished)" in window.timeline.label_text()
    assert "has ended" in panel.state_label.text() and "Pause it (F6)" not in panel.state_label.text()
    window.act_step_back.trigger()  # a past step of the ended run: there is no live step to go to
    assert "has ended" in panel.state_label.text() and "Go to Live" not in panel.state_label.text()
    window.act_go_live.trigger()
    stack = window.stack_view.list
    assert [stack.item(row).text() for row in range(stack.count())] == ["(the lesson is not paused)"]
    press(qtbot, window, Qt.Key.Key_F11)  # a new run: live again
    wait_paused(qtbot, window, 1)
    assert "(live)" in window.timeline.label_text()
    window.act_stop.trigger()  # Stop: the run did not finish, it was stopped
    wait_ended(qtbot, window)
    assert window.timeline.label_text() == "step 1 of 1 (stopped)"


def test_the_just_ran_arrow_follows_steps_only_not_a_run_to_cursor(qtbot, window):
    """After Run to Cursor the arrow marked the line of the pause before, which was not the line that ran last."""
    press(qtbot, window, Qt.Key.Key_F11)
    wait_paused(qtbot, window, 1)
    press(qtbot, window, Qt.Key.Key_F10)
    wait_paused(qtbot, window, 2)
    assert window.code_view.previous_line() == 1  # a step: line 1 is the line that ran
    window.code_view.go_to_line(6)
    window.commands.run_to_cursor()
    wait_paused(qtbot, window, 6)
    assert window.code_view.previous_line() is None  # lines 2-5 ran: no arrow rather than a false one
    press(qtbot, window, Qt.Key.Key_F10)
    wait_paused(qtbot, window, 7)
    assert window.code_view.previous_line() == 6


def test_at_the_end_variables_show_the_module_as_the_run_left_it_and_no_arrow_stays(qtbot, window):
    """After F5 to the end the arrow and Variables stayed at the last pause: a variable set after
    it was missing."""
    window.code_view.go_to_line(3)
    window.toggle_breakpoint()
    press(qtbot, window, Qt.Key.Key_F8)
    wait_paused(qtbot, window, 3)
    press(qtbot, window, Qt.Key.Key_F10)
    wait_paused(qtbot, window, 4)
    assert "total" not in variable_names(window)
    press(qtbot, window, Qt.Key.Key_F5)
    wait_ended(qtbot, window)
    assert variable_names(window) == ["x", "y", "z", "total"]
    assert window.code_view.previous_line() is None and window.code_view.current_line() is None


def test_after_the_end_the_past_leads_back_to_the_end_as_the_end_looks(qtbot, window):
    """After Record to End the graph stayed empty; a past step said "Ctrl+Shift+F10 goes back to live"
    beside "Go to live" (and the console "Pause the lesson"), and going back left the last pause's
    call stack and the past step's arrow over a finished run."""
    window.commands.record_to_end()
    wait_ended(qtbot, window)
    total = window.run.live_index + 1
    # the recording ran to the end: the graph shows the end's nodes (it stayed empty, "No tensor requires grad")
    assert len(window.graph_view._scene.drawn) == len(window.run.live_graph()["nodes"]) > 0
    for _ in range(3):
        press(qtbot, window, Qt.Key.Key_F10, Qt.KeyboardModifier.ShiftModifier)  # Step Back
    shown = window.run.viewing
    assert shown == total - 4 and window.timeline.label_text() == f"step {shown + 1} of {total} (past)"
    assert window.state_label.text().endswith("Ctrl+Shift+F10 goes back to the end of the run")
    assert window.status.step_label.text() == f"step {shown + 1}"  # as the timeline counts
    assert window.timeline.live_button.text() == "Go to the end"
    assert window.timeline.compare_button.text() == "Diff with the end"
    assert window.code_view.previous_line() is not None  # the past step's arrow
    assert window.console.input.placeholderText() == "The run has ended: F5 or F10 runs it again"
    assert window.console.input.toolTip().startswith("The run has ended: F5 or F10 starts it again")  # the whole reason
    press(qtbot, window, Qt.Key.Key_F10, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
    stack = window.stack_view.list
    assert window.run.viewing is None and window.timeline.label_text() == f"step {total} of {total} (finished)"
    assert [stack.item(row).text() for row in range(stack.count())] == ["(the lesson is not paused)"]
    assert window.code_view.previous_line() is None and window.code_view.current_line() is None
    assert window.state_label.text().startswith("Finished")
    assert "total" in variable_names(window)  # the module as the run left it


def test_going_back_to_live_restores_the_live_arrow_and_the_step_counts_agree(qtbot, window):
    """Back to live after a look at the past, the green arrow stayed on the past step's line (and in the
    past the console said "Pause the lesson" to a paused lesson); after a backward() from the Backward
    panel the status bar said "step 3" beside the timeline's "step 4 of 4"."""
    press(qtbot, window, Qt.Key.Key_F11)
    wait_paused(qtbot, window, 1)
    for line in (2, 3, 4):
        press(qtbot, window, Qt.Key.Key_F10)
        wait_paused(qtbot, window, line)
    assert window.code_view.previous_line() == 3
    for _ in range(2):
        press(qtbot, window, Qt.Key.Key_F10, Qt.KeyboardModifier.ShiftModifier)
    assert window.code_view.previous_line() == 1
    # the lesson is paused, but not at the step in view: the console says how to evaluate again
    assert window.console.input.placeholderText() == "The past: Ctrl+Shift+F10 leads back to evaluating"
    assert window.console.input.toolTip().startswith("Viewing the past: Ctrl+Shift+F10 goes back to live")
    press(qtbot, window, Qt.Key.Key_F10, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
    assert window.code_view.current_line() == 4 and window.code_view.previous_line() == 3
    panel = window.backward_panel
    panel.backward_tab.root_combo.setCurrentText("y")
    steps = window.run.live_index
    panel.backward_tab.backward_button.click()
    qtbot.waitUntil(lambda: window.run.live_index == steps + 1, timeout=30_000)
    total = window.run.live_index + 1
    assert window.timeline.label_text() == f"step {total} of {total} (live)"
    assert window.status.step_label.text() == f"step {total}"


def test_the_window_takes_the_keys_back_when_a_dialog_over_it_closes(qtbot, window):
    """After "Stop it and open …?" (or any dialog) no window was active without a window manager: F10 went nowhere."""
    from PySide6.QtCore import QTimer

    window.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is window)
    window.code_view.setFocus()
    box = QMessageBox(QMessageBox.Icon.Question, "Stop the running lesson?", "Stop it and open b.py?",
                      QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.Cancel, window)
    QTimer.singleShot(100, box.reject)
    box.exec()  # as QMessageBox.question does
    qtbot.waitUntil(lambda: QApplication.activeWindow() is window)
    assert QApplication.focusWidget() is window.code_view
    press(qtbot, window, Qt.Key.Key_F10)  # and the keys work at once
    wait_paused(qtbot, window)


def test_variables_keep_the_order_they_were_defined_in_at_pauses_as_at_the_end(qtbot, window, tmp_path):
    """While paused the rows were alphabetical (the snapshot crossed a Qt signal as a QVariantMap, sorted by key);
    at the end, in definition order: the rows jumped around as the run finished."""
    lesson = tmp_path / "order.py"
    lesson.write_text("zeta = 1\nalpha = [3, 2]\nmid = {'b': 1, 'a': 2}\nprint('done')\n", encoding="utf-8")
    window.open_file(lesson)
    press(qtbot, window, Qt.Key.Key_F10)
    wait_paused(qtbot, window, 1)
    for line in (2, 3, 4):
        press(qtbot, window, Qt.Key.Key_F10)
        wait_paused(qtbot, window, line)
    assert variable_names(window) == ["zeta", "alpha", "mid"]
    press(qtbot, window, Qt.Key.Key_F5)
    wait_ended(qtbot, window)
    assert variable_names(window) == ["zeta", "alpha", "mid"]


def test_a_chosen_lesson_gives_the_keys_to_its_code_not_to_the_list_behind_the_notes(qtbot, window, tmp_path):
    """Clicking the open lesson raised its notes over the list, but the hidden list kept the keys: Down x6
    highlighted lesson 07 while lesson 01 was still open."""
    (tmp_path / "lessons" / "02_other.py").write_text("import torch\nq = torch.ones(2)\n", encoding="utf-8")
    window.lesson_browser.set_lessons(list_lessons(tmp_path / "lessons"), "en")
    window.window_layout.go_to("lessons")
    click_lesson(qtbot, window, "01_steps")
    assert QApplication.focusWidget() is window.code_view
    qtbot.keyClick(QApplication.focusWidget(), Qt.Key.Key_Down)
    assert window.lesson_browser.list.currentItem().data(Qt.UserRole).endswith("01_steps.py")


def test_an_empty_graph_after_a_backward_does_not_say_its_leaves_were_never_used(qtbot, window, tmp_path):
    """Lesson 16 after f(leaf).backward(): the graph said "leaf requires grad, but no operation has used it yet"
    beside a Variables row whose .grad said "has grad"."""
    lesson = tmp_path / "used.py"
    lesson.write_text("import torch\nw = torch.ones(2, requires_grad=True)\nb = torch.zeros(2, requires_grad=True)\n"
                      "(w * 3).sum().backward()\nprint(w.grad)\n", encoding="utf-8")
    window.open_file(lesson)
    empty = window.graph_view.findChild(QLabel, "graph_empty_message")
    press(qtbot, window, Qt.Key.Key_F10)
    for line in (1, 2, 3, 4, 5):
        wait_paused(qtbot, window, line)
        if line == 4:
            assert empty.text().startswith("w, b require grad, but no operation has used them yet")
        if line < 5:
            press(qtbot, window, Qt.Key.Key_F10)
    assert empty.isVisible() and empty.text().startswith("w has a .grad: a backward() ran through the graph that")
    window.set_language("zh")
    assert empty.text().startswith("w 已有 .grad")
