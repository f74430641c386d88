"""Autograd through the lesson process: graph diffs at each pause and actions requested while paused."""

from __future__ import annotations

import pytest
from conftest import line_of

LESSON = """
import torch
x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
w = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
h = x * w
loss = (h ** 2).sum()
done = True   # end
"""


@pytest.fixture
def at_end(session, events, lesson):
    path = lesson(LESSON)
    session.breakpoints[path] = {line_of(path, "# end"): None}
    session.start(path, stop_on_entry=False)
    return events.pause()


def test_each_pause_reports_the_nodes_new_since_the_previous_one(session, events, lesson):
    path = lesson(LESSON)
    session.start(path)
    added = []
    for _ in range(6):
        snap = events.pause()
        added.append(sorted(node["name"] for node in snap["graph"]["added"]))
        session.step_into()
    assert added[:4] == [[], [], [], []]
    assert added[4] == ["AccumulateGrad", "AccumulateGrad", "MulBackward0"]  # h = x * w ran
    assert added[5] == ["PowBackward0", "SumBackward0"]  # loss = ... ran
    assert snap["graph"]["roots"].keys() == {"h", "loss"}


def test_preview_changes_nothing_and_backward_fills_grad(session, events, at_end):
    preview = events.reply(session.request("preview_gradients", root="loss"))
    assert preview["ok"] and not preview["vector_jacobian_product"]
    grads = {g["name"]: g["grad"]["values"].tolist() for g in preview["grads"]}
    # d/dw sum((x*w)^2) = 2 x^2 w and d/dx = 2 x w^2
    assert grads["w"] == pytest.approx([1.0, -8.0, 36.0]) and grads["x"] == pytest.approx([0.5, 4.0, 24.0])
    assert events.reply(session.request("evaluate", expression="w.grad"))["value"]["type"] == "NoneType"
    result = events.reply(session.request("run_backward", root="loss"))
    assert result["ok"] and result["freed"]
    assert result["vars"]["w"]["grad"]["values"].tolist() == pytest.approx([1.0, -8.0, 36.0])
    assert [step["name"] for step in result["replay"]][0] == "SumBackward0"
    freed = [n for n in result["graph"]["updated"] if n["name"] == "PowBackward0"]
    saved = {entry["name"]: entry["freed"] for entry in freed[0]["saved"]}
    assert saved == {"_saved_self": True, "_saved_exponent": False}  # a plain number is never freed


def test_second_backward_is_an_explained_error_and_the_lesson_stays_usable(session, events, at_end):
    assert events.reply(session.request("run_backward", root="loss"))["ok"]
    again = events.reply(session.request("run_backward", root="loss"))
    assert not again["ok"]
    assert "Trying to backward through the graph a second time" in again["error"]["message"]
    assert again["error"]["lesson"] == "09_retain_graph"
    assert events.reply(session.request("evaluate", expression="loss.item()"))["value"]["value"] == pytest.approx(40.25)
    session.resume()
    assert events.end().status == "ok"


def test_autograd_grad_second_derivative(session, events, at_end):
    first = events.reply(session.request("autograd_grad", outputs="loss", inputs="w", create_graph=True))
    assert first["ok"]
    second = events.reply(session.request("evaluate", expression="torch.autograd.grad(_grads[0].sum(), w)[0]"))
    # d2/dw2 sum((x*w)^2) = 2 x^2
    assert second["value"]["values"].tolist() == pytest.approx([2.0, 8.0, 18.0])


def test_statements_in_the_console_change_the_lesson(session, events, at_end):
    result = events.reply(session.request("evaluate", expression="w.requires_grad_(False); extra = 5"))
    assert result["ok"] and result["vars"]["extra"]["value"] == 5
    assert result["vars"]["w"]["requires_grad"] is False
