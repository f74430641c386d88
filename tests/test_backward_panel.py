"""The backward panel on real autograd results: root picker, requests, .grad table, error card, replay."""

from __future__ import annotations

import pytest
import torch
from PySide6.QtCore import QPoint, QRect, Qt
from PySide6.QtWidgets import QLabel

from app.graph_model import GraphModel
from app.lesson.autograd_actions import AutogradActions
from app.lesson.autograd_graph import GraphTracker
from app.lesson.summaries import Summarizer
from app.value_text import value_text
from app.workspace import LESSONS_DIR
from widgets.backward_panel import ACCUMULATED_NOTE, FREED_NOTE, BackwardPanel


class Frame:
    """A paused frame made of real tensors, with the engine's actions and a snapshot's ``vars``."""

    def __init__(self, **values) -> None:
        self.namespace = {"torch": torch, **values}
        self.actions = AutogradActions(self.namespace, self.namespace, Summarizer())

    def vars(self) -> dict:
        summarizer = Summarizer()
        return {name: summarizer.summarize(value) for name, value in self.namespace.items() if name != "torch"}

    def graph(self) -> dict:
        tracker = GraphTracker(Summarizer().tensors)
        tracker.update(self.namespace)
        return tracker.full()


def linear_frame() -> Frame:
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    w = torch.tensor([3.0, 4.0], requires_grad=True)
    c = torch.tensor([5.0, 6.0])
    y = x * w
    loss = y.sum()
    return Frame(x=x, w=w, c=c, y=y, loss=loss, n=3)


@pytest.fixture
def panel(qtbot) -> BackwardPanel:
    widget = BackwardPanel(GraphModel())
    qtbot.addWidget(widget)
    widget.resize(600, 520)
    widget.show()
    qtbot.waitExposed(widget)
    return widget


def roots(panel: BackwardPanel) -> list[str]:
    return [panel.backward_tab.root_combo.itemText(i) for i in range(panel.backward_tab.root_combo.count())]


def table_rows(panel: BackwardPanel) -> dict[str, tuple[str, str]]:
    table = panel.table
    return {table.item(r, 0).text(): (table.item(r, 1).text(), table.item(r, 2).text())
            for r in range(table.rowCount())}


def test_root_picker_offers_tensors_with_grad_fn_or_requires_grad(panel):
    frame = linear_frame()
    panel.form.set_variables(frame.vars())
    assert roots(panel) == ["x", "w", "y", "loss"]  # c needs no grad, n is not a tensor
    assert panel.backward_tab.root_combo.currentText() == "loss"  # the last scalar an operation computed
    assert panel.backward_tab.root_info.text().startswith("scalar")
    assert not panel.backward_tab.gradient_combo.isEnabled()
    assert panel.backward_tab.vjp_label.isHidden()

    panel.backward_tab.root_combo.setCurrentText("y")
    combo = panel.backward_tab.root_combo
    combo.activated.emit(combo.currentIndex())  # as when the learner picks it
    frame.namespace["z"] = frame.namespace["y"] * 2
    panel.form.set_variables(frame.vars())
    assert panel.backward_tab.root_combo.currentText() == "y"  # the learner's choice survives a new pause
    assert "z" in roots(panel)


def test_without_a_choice_the_root_follows_the_newest_loss(panel):
    frame = linear_frame()
    del frame.namespace["loss"]
    panel.form.set_variables(frame.vars())
    assert panel.backward_tab.root_combo.currentText() != "loss"
    frame.namespace["loss"] = (frame.namespace["y"] ** 2).sum()
    panel.form.set_variables(frame.vars())
    assert panel.backward_tab.root_combo.currentText() == "loss"


def test_non_scalar_root_explains_the_vector_jacobian_product(panel, qtbot):
    panel.form.set_variables(linear_frame().vars())
    panel.backward_tab.root_combo.setCurrentText("y")
    assert panel.backward_tab.root_info.text().startswith("[2], not a scalar")
    assert panel.backward_tab.vjp_label.isVisible()
    assert "vector-Jacobian product" in panel.backward_tab.vjp_label.text()
    assert panel.backward_tab.gradient_combo.isEnabled()
    assert panel.backward_tab.gradient_combo.currentText() == "ones_like(y)"

    with qtbot.waitSignal(panel.backward_requested) as sent:
        qtbot.mouseClick(panel.backward_tab.backward_button, Qt.LeftButton)
    assert sent.args[0]["gradient"] == "torch.ones_like(y)"

    panel.backward_tab.gradient_combo.setCurrentIndex(1)  # an expression of the learner's
    assert panel.backward_tab.gradient_edit.isEnabled()
    qtbot.keyClicks(panel.backward_tab.gradient_edit, "torch.tensor([1., 0.])")
    with qtbot.waitSignal(panel.preview_requested) as sent:
        qtbot.mouseClick(panel.backward_tab.preview_button, Qt.LeftButton)
    assert sent.args[0]["gradient"] == "torch.tensor([1., 0.])"


def test_preview_button_emits_the_chosen_params(panel, qtbot):
    panel.form.set_variables(linear_frame().vars())
    assert "changes nothing" in panel.backward_tab.preview_button.toolTip()
    assert "for real" in panel.backward_tab.backward_button.toolTip()
    qtbot.mouseClick(panel.backward_tab.retain_check, Qt.LeftButton)
    with qtbot.waitSignal(panel.preview_requested) as sent:
        qtbot.mouseClick(panel.backward_tab.preview_button, Qt.LeftButton)
    assert sent.args == [{"root": "loss", "gradient": None, "retain_graph": True, "create_graph": False}]


def test_real_backward_shows_pytorchs_grads_and_their_accumulation(panel):
    frame = linear_frame()
    panel.form.set_variables(frame.vars())
    panel.show_result("backward", frame.actions.run_backward("loss", retain_graph=True))
    w, x = frame.namespace["w"], frame.namespace["x"]
    rows = table_rows(panel)
    assert rows["w"] == ("None", value_text(Summarizer().summarize(w.grad)))
    assert rows["w"][1] == "[1, 2]" and w.grad.tolist() == [1.0, 2.0]
    assert rows["x"][1] == "[3, 4]" and x.grad.tolist() == [3.0, 4.0]
    assert ACCUMULATED_NOTE not in panel.notes.text()

    panel.show_result("backward", frame.actions.run_backward("loss"))
    assert table_rows(panel)["w"] == ("[1, 2]", "[2, 4]")  # adds up, as PyTorch does
    assert w.grad.tolist() == [2.0, 4.0]
    assert ACCUMULATED_NOTE in panel.notes.text()
    assert FREED_NOTE in panel.notes.text()
    assert panel.card.isHidden()


def test_preview_shows_what_the_gradients_would_be_and_changes_nothing(panel):
    frame = linear_frame()
    panel.form.set_variables(frame.vars())
    panel.show_result("preview", frame.actions.preview_gradients("y"))
    assert table_rows(panel)["x"][1] == "[3, 4]"
    assert panel.table.isColumnHidden(1)
    assert panel.table.horizontalHeaderItem(2).text() == "gradient would be"
    assert "vector-Jacobian product" in panel.notes.text()
    assert frame.namespace["x"].grad is None


def test_second_backward_shows_the_teaching_card_and_links_the_lesson(panel, qtbot):
    frame = linear_frame()
    panel.form.set_variables(frame.vars())
    panel.show_result("backward", frame.actions.run_backward("loss"))
    with pytest.raises(RuntimeError) as raised:
        frame.namespace["loss"].backward()
    pytorch_says = str(raised.value)
    result = frame.actions.run_backward("loss")
    panel.show_result("backward", result)

    assert panel.card.isVisible()
    assert panel.card.title.text() == "loss.backward() raised RuntimeError; PyTorch said"  # which call raised
    assert panel.card.message.text() == pytorch_says
    assert panel.card.message.textInteractionFlags() & Qt.TextInteractionFlag.TextSelectableByMouse
    assert panel.card.explanation.text() == result["error"]["explanation"]
    assert "retain_graph=True" in panel.card.fix.text()
    assert panel.card.lesson_link.text() == "Open lesson 09: retain_graph"
    with qtbot.waitSignal(panel.lesson_requested) as asked:
        qtbot.mouseClick(panel.card.lesson_link, Qt.LeftButton)
    assert asked.args == ["09_retain_graph"]

    # At the next pause that still matches it, the card says first that it is from an earlier pause: the
    # note was under the card (in sight after a scroll), and the root box may name another root by then.
    panel.form.set_state(False)
    panel.form.set_state(True)
    note = panel.freshness_label
    assert note.isVisible() and note.text().startswith("From an earlier pause")
    assert note.mapTo(panel, QPoint(0, 0)).y() < panel.card.mapTo(panel, QPoint(0, 0)).y()

    # Still usable: a fresh forward and a backward clear the card.
    frame.namespace["loss"] = (frame.namespace["x"] ** 2).sum()
    panel.form.set_variables(frame.vars())
    assert panel.backward_tab.backward_button.isEnabled()
    panel.show_result("backward", frame.actions.run_backward("loss"))
    assert panel.card.isHidden()
    assert table_rows(panel)["x"] == ("[3, 4]", "[5, 8]")


def test_replay_steps_through_every_node_in_order(panel, qtbot):
    frame = linear_frame()
    panel.form.set_variables(frame.vars())
    panel.form.graph.set_graph(frame.graph())
    result = frame.actions.run_backward("loss")
    panel.show_result("backward", result)
    replay = result["replay"]
    assert [e["name"] for e in replay] == ["SumBackward0", "MulBackward0", "AccumulateGrad", "AccumulateGrad"]
    assert panel.form.replay.position == -1

    ids, steps, texts = [], [], []
    panel.form.graph.active_changed.connect(ids.append)
    for _ in replay:
        qtbot.mouseClick(panel.replay_bar.forward_button, Qt.LeftButton)
        steps.append(panel.form.replay.entry())
        texts.append(panel.replay_bar.step_label.text())
    assert ids == [e["id"] for e in replay]
    assert steps == replay
    assert texts[1] == "2/4 MulBackward0: receives grad [1, 1] from its output, sends [3, 4] to x and [1, 2] to w"
    leaf_texts = sorted(texts[2:])
    assert leaf_texts == ["3/4 AccumulateGrad: w.grad becomes [1, 2]", "4/4 AccumulateGrad: x.grad becomes [3, 4]"] \
        or leaf_texts == ["3/4 AccumulateGrad: x.grad becomes [3, 4]", "4/4 AccumulateGrad: w.grad becomes [1, 2]"]
    qtbot.mouseClick(panel.replay_bar.forward_button, Qt.LeftButton)
    assert ids[-1] is None and panel.form.replay.position == len(replay)
    assert panel.replay_bar.step_label.text().startswith("Done")

    qtbot.mouseClick(panel.replay_bar.back_button, Qt.LeftButton)
    assert ids[-1] == replay[-1]["id"] and panel.form.replay.position == len(replay) - 1


def lesson_01_frame() -> Frame:
    torch.manual_seed(0)
    a = torch.randn(3, requires_grad=True)
    w = torch.randn(3, requires_grad=True)
    b = a * w
    c = torch.exp(b)
    return Frame(a=a, w=w, b=b, c=c, loss=c.sum())


def test_preview_and_backward_count_the_same_nodes(panel, qtbot):
    """Lesson 01's loss: the preview said "3 nodes ran", Run backward() "5 nodes ran"."""
    frame = lesson_01_frame()
    panel.form.set_variables(frame.vars())
    panel.form.graph.set_graph(frame.graph())
    counted = "5 nodes (3 backward functions, 2 AccumulateGrad)"
    with qtbot.waitSignal(panel.preview_requested) as sent:
        qtbot.mouseClick(panel.backward_tab.preview_button, Qt.LeftButton)
    panel.show_result("preview", frame.actions.preview_gradients(sent.args[0]["root"]))
    assert panel.replay_bar.step_label.text().startswith(f"{counted} in this pass")
    assert "hand their gradients back instead of adding them to .grad" in panel.replay_bar.step_label.text()
    previewed, texts = [], []
    panel.form.graph.active_changed.connect(previewed.append)
    for _ in range(5):
        qtbot.mouseClick(panel.replay_bar.forward_button, Qt.LeftButton)
        texts.append(panel.replay_bar.step_label.text())
    assert texts[3].startswith("4/5 AccumulateGrad: receives [")
    assert "this pass hands it back" in texts[3]
    qtbot.mouseClick(panel.replay_bar.forward_button, Qt.LeftButton)
    done = f"Done: {counted}; the gradients were handed back and no .grad was changed."
    assert panel.replay_bar.step_label.text() == done
    assert frame.namespace["a"].grad is None

    with qtbot.waitSignal(panel.backward_requested):
        qtbot.mouseClick(panel.backward_tab.backward_button, Qt.LeftButton)
    panel.show_result("backward", frame.actions.run_backward("loss"))
    assert panel.replay_bar.step_label.text().startswith(f"{counted} ran in this pass")
    ran = []
    panel.form.graph.active_changed.connect(ran.append)
    panel.form.graph.active_changed.disconnect(previewed.append)
    for _ in range(6):
        qtbot.mouseClick(panel.replay_bar.forward_button, Qt.LeftButton)
    assert ran == previewed  # the same nodes, in the same order, and the end
    assert panel.replay_bar.step_label.text() == f"Done: {counted} ran and every reachable leaf's .grad is filled in."


def test_playing_reaches_the_end_on_the_timer(panel, qtbot):
    frame = linear_frame()
    panel.form.set_variables(frame.vars())
    panel.form.graph.set_graph(frame.graph())
    result = frame.actions.run_backward("loss")
    panel.show_result("backward", result)
    panel.replay_bar.speed_slider.setValue(panel.replay_bar.speed_slider.maximum())
    assert panel.replay_bar.speed_label.text() == "10 nodes/s"

    ids = []
    panel.form.graph.active_changed.connect(ids.append)
    qtbot.mouseClick(panel.replay_bar.play_button, Qt.LeftButton)
    qtbot.waitUntil(lambda: not panel.form.replay.playing, timeout=5000)
    assert ids == [e["id"] for e in result["replay"]] + [None]
    assert panel.form.replay.position == len(result["replay"])


def test_grad_form_emits_lists_and_a_second_derivative_works(panel, qtbot):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    frame = Frame(x=x, y=(x**3).sum())
    panel.tabs.setCurrentIndex(1)
    qtbot.keyClicks(panel.grad_tab.outputs_edit, "y")
    qtbot.keyClicks(panel.grad_tab.inputs_edit, "x, torch.ones(2, requires_grad=True)")
    qtbot.mouseClick(panel.grad_tab.grad_create_check, Qt.LeftButton)
    qtbot.mouseClick(panel.grad_tab.allow_unused_check, Qt.LeftButton)
    with qtbot.waitSignal(panel.grad_requested) as sent:
        qtbot.mouseClick(panel.grad_tab.grad_button, Qt.LeftButton)
    assert sent.args == [{"outputs": ["y"], "inputs": ["x", "torch.ones(2, requires_grad=True)"],
                          "grad_outputs": None, "retain_graph": True, "create_graph": True, "allow_unused": True}]

    frame.actions.autograd_grad(["y"], ["x"], create_graph=True)
    panel.grad_tab.outputs_edit.setText("_grads[0].sum()")
    panel.grad_tab.inputs_edit.setText("x")
    panel.grad_tab.grad_outputs_edit.setText("torch.ones(())")
    with qtbot.waitSignal(panel.grad_requested) as sent:
        qtbot.mouseClick(panel.grad_tab.grad_button, Qt.LeftButton)
    params = sent.args[0]
    assert params["grad_outputs"] == ["torch.ones(())"]
    result = frame.actions.autograd_grad(params["outputs"], params["inputs"], params["grad_outputs"])
    panel.show_result("grad", result)
    assert table_rows(panel)["x"][1] == "[6, 12]"  # d²(x³)/dx² = 6x
    assert "_grads[0]" in panel.notes.text()


def test_requests_are_off_while_the_lesson_runs(panel, qtbot):
    panel.form.set_variables(linear_frame().vars())
    panel.form.set_state(False)
    assert not panel.backward_tab.preview_button.isEnabled() and not panel.backward_tab.backward_button.isEnabled()
    assert not panel.grad_tab.grad_button.isEnabled()
    assert "is running" in panel.state_label.text() and panel.state_label.isVisible()
    assert "paused" in panel.backward_tab.backward_button.toolTip()
    panel.form.set_state(True)
    assert panel.backward_tab.backward_button.isEnabled() and panel.state_label.isHidden()

    panel.clear()
    assert roots(panel) == [] and not panel.backward_tab.backward_button.isEnabled()
    assert panel.replay_bar.isHidden()


def test_the_grad_form_keeps_the_graph_the_lessons_next_line_needs(open_window, qtbot):
    """Lesson 08 at its first autograd.grad line: outputs z, inputs x, y, Compute, then F10 raised "Trying
    to backward through the graph a second time" from the lesson's own line."""
    from test_main_window import wait_paused

    from app.workspace import LESSONS_DIR

    lesson = LESSONS_DIR / "08_autograd_grad.py"
    lines = lesson.read_text(encoding="utf-8").splitlines()
    first, then = (next(n for n, text in enumerate(lines, 1) if text.startswith(start)) for start in
                   ("(grad_x,) = ", "(grad_y,) = "))
    window = open_window(lesson)
    window.code_view.go_to_line(first)
    window.commands.run_to_cursor()
    wait_paused(qtbot, window, first)
    panel = window.backward_panel
    panel.tabs.setCurrentIndex(1)
    panel.grad_tab.outputs_edit.setText("z")
    panel.grad_tab.inputs_edit.setText("x, y")
    assert panel.grad_tab.grad_retain_check.isChecked()
    with qtbot.waitSignal(window.bridge.replied, timeout=30_000):
        qtbot.mouseClick(panel.grad_tab.grad_button, Qt.LeftButton)
    for line in (then - 1, then, then + 1):  # the lesson's own autograd.grad calls on the same graph still work
        window.session.step_over()
        wait_paused(qtbot, window, line)
    assert not window.run.live.get("post_mortem")
    qtbot.waitUntil(lambda: "dz/dx" in window.console.output.toPlainText())


def test_the_grad_form_keeps_its_expressions_for_a_rerun_but_not_for_another_lesson(open_window, tmp_path):
    """The autograd.grad form carried one lesson's expressions into the next lesson opened, and its
    retain_graph unticked, which frees the new lesson's graph without a word."""
    first, second = tmp_path / "first.py", tmp_path / "second.py"
    first.write_text("import torch\nz = torch.ones(1)\n", encoding="utf-8")
    second.write_text("import torch\nq = torch.ones(1)\n", encoding="utf-8")
    window = open_window(first)
    panel = window.backward_panel
    panel.grad_tab.outputs_edit.setText("z")
    panel.grad_tab.inputs_edit.setText("x, y")
    warning = panel.grad_tab.grad_free_warning
    assert warning.isHidden()
    panel.grad_tab.grad_retain_check.click()  # unticked: the form now frees the graph, and says what that does
    assert not warning.isHidden() and "Trying to backward through the graph a second time" in warning.text()
    panel.grad_tab.grad_create_check.click()  # create_graph keeps the graph too
    assert warning.isHidden()
    panel.grad_tab.grad_create_check.click()
    window.open_file(first)  # the same lesson again (a rerun keeps what was typed)
    assert (panel.grad_tab.outputs_edit.text(), panel.grad_tab.inputs_edit.text()) == ("z", "x, y")
    assert not panel.grad_tab.grad_retain_check.isChecked()
    window.open_file(second)
    tab = panel.grad_tab
    assert (tab.outputs_edit.text(), tab.inputs_edit.text(), tab.grad_outputs_edit.text()) == ("", "", "")
    assert panel.grad_tab.grad_retain_check.isChecked() and warning.isHidden()


def seen_whole(widget, panel: BackwardPanel) -> bool:
    """Whether the learner sees all of ``widget`` in the panel without scrolling (a label: every line of it)."""
    if not widget.isVisible() or (isinstance(widget, QLabel) and widget.wordWrap()
                                  and widget.height() < widget.heightForWidth(widget.width())):
        return False
    rect = QRect(widget.mapTo(panel, QPoint(0, 0)), widget.size())
    viewport = panel._scroll.viewport()
    if viewport.isAncestorOf(widget) and not QRect(viewport.mapTo(panel, QPoint(0, 0)), viewport.size()).contains(rect):
        return False
    return panel.rect().contains(rect)


def replay_row(panel: BackwardPanel) -> list:
    bar = panel.replay_bar
    return [bar.restart_button, bar.back_button, bar.play_button, bar.forward_button, bar.speed_slider,
            bar.speed_label, bar.drill_check, bar.step_label]


@pytest.mark.parametrize("drill", [False, True], ids=["plain", "drill"])
@pytest.mark.parametrize("language", ["en", "zh"])
@pytest.mark.parametrize("size", [(1280, 800), (1600, 1000), (1920, 1080), (1920, 1280)],
                         ids=["1280", "1600", "1920", "1920to1280"])
def test_the_replay_row_is_whole_in_sight_at_every_window_size(qtbot, open_window, size, language, drill):
    """The replay row ("Replay ⏮ ◀ ▶ ⏭ 2 nodes/s") sat under the form at the bottom of the scroll area,
    cut in half, at 1280×800, 1920×1080 and after a resize from 1920 to 1280."""
    from test_backward_drill_view import run_backward, step

    lesson = LESSONS_DIR / "01_dynamic_graphs.py"
    window = open_window(lesson, (1920, 1080) if size[1] == 1280 else size)
    window.set_language(language)
    lines = lesson.read_text(encoding="utf-8").splitlines()
    panel = run_backward(qtbot, window, next(n for n, text in enumerate(lines, 1)
                                             if text.startswith('print("nodes behind loss:"')))
    if size[1] == 1280:
        window.resize(1280, 800)
    qtbot.waitUntil(lambda: all(seen_whole(w, panel) for w in replay_row(panel)))
    if not drill:  # the form's buttons stay in sight with it, for the next Preview or Run
        tab = panel.backward_tab
        assert seen_whole(tab.preview_button, panel) and seen_whole(tab.backward_button, panel)
        assert seen_whole(panel.results_title, panel)
        return
    panel.replay_bar.drill_check.click()
    qtbot.waitUntil(lambda: all(seen_whole(w, panel) for w in replay_row(panel)))
    step(qtbot, panel)
    view = panel.replay_bar.drill_view
    assert view.asking
    qtbot.waitUntil(lambda: all(seen_whole(w, panel) for w in [*replay_row(panel), view.question_label,
                                                                  view.answer_edit, view.check_button]))


@pytest.mark.parametrize("language", ["en", "zh"])
@pytest.mark.parametrize("size", [(1280, 800), (1600, 1000), (1920, 1080)], ids=["1280", "1600", "1920"])
def test_after_an_error_the_form_stays_in_sight_beside_the_card(qtbot, open_window, size, language):
    """Lesson 3 after its own loss.backward(): Run backward() raised "Trying to backward through the graph a
    second time", and the card filled the panel at 1600×1000, the Root, Preview and Run controls scrolled away."""
    from test_layout import code_line, run_to

    lesson = LESSONS_DIR / "03_loops.py"
    window = open_window(lesson, size)
    window.set_language(language)
    run_to(qtbot, window, code_line(lesson, 'print("every input step got a gradient:"'))
    window.docks["backward"].raise_()
    panel = window.backward_panel
    tab = panel.backward_tab
    qtbot.waitUntil(lambda: tab.root_combo.currentText() == "loss" and tab.backward_button.isEnabled())
    with qtbot.waitSignal(window.bridge.replied, timeout=30_000):
        qtbot.mouseClick(panel.backward_tab.backward_button, Qt.LeftButton)
    qtbot.waitUntil(panel.card.isVisible)
    assert "backward through the graph a second time" in panel.card.message.text()
    form = [panel.tabs, tab.root_combo, tab.preview_button, tab.backward_button]
    qtbot.waitUntil(lambda: all(seen_whole(w, panel) for w in [*form, panel.card.title, *replay_row(panel)]))
    box = panel._card_box  # the card scrolls on its own: its lesson link is a scroll away, the form stays
    box.ensureWidgetVisible(panel.card.lesson_link, 0, 0)
    qtbot.waitUntil(lambda: box.viewport().rect().contains(
        QRect(panel.card.lesson_link.mapTo(box.viewport(), QPoint(0, 0)), panel.card.lesson_link.size())))
    assert all(seen_whole(w, panel) for w in form)
