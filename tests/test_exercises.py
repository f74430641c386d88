"""Every lesson asks before it tells: its predictions judge right, and its exercise checks see the change.

Every lesson asks at least three predictions and has one check per exercise of its Try it
cell, the lesson's last note, numbered alike in English and Chinese. Through the engine, as
the app runs a lesson:

* the lesson as shipped, written to a temporary folder with ``course.py`` beside it, is run
  once with a breakpoint on each prediction line: at the first stop there the test steps
  over the line and asks the lesson process to judge the stored right answer (right) and
  the obvious wrong ones, the other choices included (wrong). The same run ends "ok" with
  every check False and none raising: no exercise is done before the learner does it;
* for each exercise, a copy with the change it asks for (``CHANGES``: old text, new text
  replacements on the source) keeps the lesson's checks, runs to the end "ok", and that
  exercise's check is True;
* a copy with every exercise's change at once ends with every check True: the exercises of a
  lesson can all be done in one run;
* a change done another way than ``CHANGES`` (``ALSO_RIGHT``) passes its check too;
* for each exercise, at least four copies with a wrong solution (``WRONG``, in
  :mod:`wrong_solutions`: written as a learner would, of at least three kinds, a value typed
  in among them) end "ok" with that exercise's check False, so a check tests what its
  exercise teaches, not a proxy that a wrong edit also satisfies. One test per lesson runs
  its all-together copy and its wrong copies in turn, through the same engine driver.

The tables name each prediction by its expression, never its line, so editing a lesson
does not break them; an old text must occur exactly once in the lesson.
"""

from __future__ import annotations

import queue
import re
import shutil
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from conftest import WARM_SESSIONS, borrow, give_back, warm_session
from wrong_solutions import CHECKPOINTED_BLOCKS, FINITE_DIFFERENCE, KINDS, LOAD, STORE, WRONG

from app import messages as m
from app.lesson_format import Lesson, Prediction, parse_lesson

LESSONS = Path(__file__).resolve().parent.parent / "lessons"
STEMS = [path.stem for path in sorted(LESSONS.glob("[0-9][0-9]_*.py"))]

#: Seconds to wait for the next message of a run (lesson 10 compiles with Dynamo).
WAIT = 120

#: Per lesson, in file order: (expression, right answer) or (expression, right answer, wrong
#: answer). A prediction with choices is also judged wrong for every other choice; a free
#: one for its wrong answer.
ANSWERS: dict[str, list[tuple[str, ...]]] = {
    "01_dynamic_graphs": [("b.grad_fn", "MulBackward0"), ("first_nan", "logged"),
                          ("where.line", "product = left @ right")],
    "02_if_else": [("y_high.grad_fn", "SinBackward0"), ("decision.requires_grad", "False"),
                   ("high_ok", "True")],  # the mean picks the branch for every entry
    "03_loops": [("h_t.grad_fn", "TanhBackward0"), ("nodes", "13"), ("bool(inputs.grad[0].any())", "True")],
    "04_variable_length": [("padded.shape", "(3, 5, 3)", "(3, 4, 3)"),
                           ("packed.batch_sizes", "[3, 3, 2, 2, 1]", "[3, 3, 3, 2, 1]"),
                           ("bool(padded.grad[1, 2:].any())", "False")],
    "05_requires_grad": [("z.is_leaf", "False"), ("scaled.is_leaf", "True"), ("y.grad", "tensor([1., 2., 3.])"),
                         ("shares_memory", "True"),
                         ("t.grad", "tensor([0., 1., 4., 9.])")],  # detach() stops the gradient: u, not 3t**2
    "06_no_grad": [("x.requires_grad", "True"), ("doubled.requires_grad", "False"),
                   ("prediction.requires_grad", "False"),
                   ("w.grad", "tensor([2., 4., 6.])"),  # backward() inside no_grad still fills .grad
                   ("x.grad", "tensor([1., 1., 1.])")],
    "07_backward": [("w.grad", "tensor([1., -8., 36.])"), ("w.grad", "tensor([2., -16., 72.])"),
                    ("v.grad", "tensor([1., -8., 30.])")],
    "08_autograd_grad": [("x.grad", "None"), ("first.requires_grad", "True"), ("len(combined)", "1")],
    "09_retain_graph": [("y.grad_fn is None", "False"), ("saved_megabytes()", "4.0"), ("saved_megabytes()", "0.0"),
                        ("x.grad", "tensor([2., 2., 2.])")],
    "10_trace_vs_script": [("torch.allclose(traced_out, expected)", "False"),
                           ("torch.allclose(scripted_out, expected)", "True"), ("break_count", "1")],
    "11_inplace_version": [("b._version", "1", "0"), ("b._version", "2"), ("x.grad", "tensor([6., 6., 6.])"),
                           ("s._version", "1", "0"),
                           ("x.grad is None", "False")],  # .data hides the change: backward runs, wrongly
    "12_custom_function": [("y.grad_fn", "CubeBackward", "PowBackward0"), ("x.grad", "tensor([3., 12., 0.75])"),
                           ("unchecked.grad", "tensor([3., -6., 1.5])")],  # autograd trusts a wrong backward
    "13_putting_it_together": [("w.grad_fn", "None"), ("w.grad", "tensor([0.])"), ("same", "True", "False")],
    "14_hooks": [("h.grad", "[8., 16., 24.]", "[4., 8., 12.]"),  # retain_grad() stores the hook's result
                 ('torch.equal(seen["grad_output"], weights)', "True", "False"),
                 ("out.grad_fn", "BackwardHookFunctionBackward", "AddmmBackward0"),
                 ("fired[3]", "out: tensor hook", "inputs: tensor hook")],
    "15_eval_nograd_inference": [("same_twice", "False", "True"),
                                 # no_grad() leaves BatchNorm counting
                                 ("norm.num_batches_tracked.item()", "3", "2"),
                                 ("evaluated.requires_grad", "True", "False")],  # eval() leaves autograd on
    "16_torch_func": [("x.grad", "None", "[9., 15., 29.]"),
                      ("summed", "[11., 16., 21.]", "[6., 12., 18.]"),  # row sums of the Hessian, not its diagonal
                      ("per_sample.shape", "[5, 3]", "[3]")],
    "17_nan_gradients": [("abs_grad[1].item()", "0", "nan"),
                         ("int(x.grad.isnan().sum())", "2", "1"),  # 0 x inf at 0 and 0 x nan at -1
                         ("clamp_grad[1].item()", "inf", "0"), ("v.grad[0].item()", "nan", "0")],
    "18_accumulation_and_two_losses": [("accumulated_grad.allclose(full_grad)", "True", "False"),
                                       # clipped to max_norm, not the norm it had
                                       ("norm_after.item()", "0.5", "6.211"),
                                       ("micro_model.weight.grad", "None", "[[0., 0., 0.]]"),
                                       ("w.grad.requires_grad", "True", "False")],
    "19_variable_length_no_padding": [("count_nodes(h)", "10", "8"),  # 4 per step and the two AccumulateGrad nodes
                                      ("h_n.shape", "[1, 3, 1]", "[3, 5, 1]"), ("same_states", "True", "False")],
    "20_be_the_engine": [("len(order)", "6"),  # the leaves are in the order, z once though used twice
                         ("z.grad", "-1.0"),  # both factors of z * z add their share
                         ("out_t.grad_fn", "MulBackward0")],
    "21_views_and_inplace": [("view._version", "1"),  # the view shares its base's version counter
                             ("y.grad_fn", "CopySlices"), ("x.grad", "tensor([20., 20., 2., 2.])"),
                             ("hidden._version", "0")],  # .data has a version counter of its own
    "22_saved_tensors_checkpointing": [("len(shapes)", "2"),  # mm saves inputs only: inputs needs no gradient
                                       ("plain_kib", "768.0", "1024.0"), ("checkpointed_kib", "512.0")],
    "23_forward_mode_ad": [("tangent", "12.0", "8.0"), ("forward_passes", "2"), ("reverse_passes", "6")],
}


#: Per lesson, per exercise of its Try it cell: the change it asks for, as (old, new) replacements.
CHANGES: dict[str, list[list[tuple[str, str]]]] = {
    "01_dynamic_graphs": [
        [("data = torch.tensor([2.0, 0.5, 3.0, -1.0])", "data = torch.tensor([2.0, 1.5, 3.0, 4.0])")],
        [("right = torch.randn(2, 3)\n", "right = torch.randn(3, 2)\n"),
         ("product = left @ right.T\n", "product = left @ right\n")],
    ],
    "02_if_else": [
        [("THRESHOLD = 0.5\n", "THRESHOLD = -3.0\n")],
        [("    if torch.mean(x) > THRESHOLD:\n        y = torch.sin(x)\n    else:\n        y = torch.cos(x)\n",
          "    y = torch.where(x > THRESHOLD, torch.sin(x), torch.cos(x))\n")],
    ],
    "03_loops": [
        [("NUM_STEPS = 3, 4, 5\n", "NUM_STEPS = 3, 4, 20\n")],
        [("torch.randn(HIDDEN_SIZE, HIDDEN_SIZE) * 0.5", "torch.randn(HIDDEN_SIZE, HIDDEN_SIZE) * 3")],
    ],
    "04_variable_length": [
        [("[torch.randn(4, FEATURES), torch.randn(2, FEATURES), torch.randn(5, FEATURES)]",
          "[torch.randn(5, FEATURES), torch.randn(5, FEATURES), torch.randn(5, FEATURES)]")],
        [("gru = nn.GRU(", "gru = nn.LSTM("), ("packed_out, h_n = gru(packed)", "packed_out, (h_n, c_n) = gru(packed)"),
         ("_, h_unpacked = gru(padded)", "_, (h_unpacked, _) = gru(padded)")],
    ],
    "05_requires_grad": [
        [("\ny.requires_grad_(True)\n", "\n")],
        [('print("clone shares memory:", clone_shares_memory)\n',
          'print("clone shares memory:", clone_shares_memory)\n'
          "layer.weight.requires_grad_(False)\nlayer(x).sum().backward()\n")],
    ],
    "06_no_grad": [
        [('"| x.requires_grad:", x.requires_grad)\n',
          '"| x.requires_grad:", x.requires_grad)\n    x.requires_grad_(False)\n'),
         ('"after the block, tracked.grad_fn:", tracked.grad_fn, "| x.requires_grad:", x_required_grad)\n',
          '"after the block, tracked.grad_fn:", tracked.grad_fn, "| x.requires_grad:", x_required_grad)\n'
          "x.requires_grad_(True)\n")],
        [("with torch.inference_mode():\n", "with torch.no_grad():\n")],
    ],
    "07_backward": [
        [("u = torch.tensor([1.0, 10.0])", "u = torch.ones(2)")],
        [("\nh2.retain_grad()\n", "\n")],
    ],
    "08_autograd_grad": [
        [("weights = [torch.ones_like(y), torch.tensor(1.0)]", "weights = [torch.ones_like(y), torch.tensor(0.0)]")],
        [("(second,) = torch.autograd.grad(first.sum(), x)\n",
          "(second,) = torch.autograd.grad(first.sum(), x, create_graph=True)\n"
          "(third,) = torch.autograd.grad(second.sum(), x)\n")],
    ],
    "09_retain_graph": [
        [("simple = (x + 1).sum()\nsimple.backward()\n",
          "simple = (x * 2).sum()\nsimple.backward(retain_graph=True)\n")],
        [("\ndeep.backward()  # predict:", "\ndeep.backward(retain_graph=True)  # predict:")],
    ],
    "10_trace_vs_script": [
        [("        example = positive  #", "        example = negative  #")],
        [("        if x.mean() > 0:\n            return self.linear(x)\n        return -self.linear(x)\n",
          "        return torch.where(x.mean() > 0, 1.0, -1.0) * self.linear(x)\n")],
    ],
    "11_inplace_version": [
        [("\ns = torch.sigmoid(x)\n", "\ns = x * 2\n")],
        [("\ns.mul_(2)  # predict: s._version\n", "\ns = s * 2\n")],
    ],
    "12_custom_function": [
        [("        return grad_output * 3 * x\n", "        return grad_output * 3 * x**2\n")],
        [("dtype=torch.float64, requires_grad=True)", "dtype=torch.float32, requires_grad=True)"),
         ("cube_ok = torch.autograd.gradcheck(Cube.apply, (probe,))",
          "cube_ok = torch.autograd.gradcheck(Cube.apply, (probe,), raise_exception=False)")],
    ],
    "13_putting_it_together": [
        [("LEARNING_RATE, STEPS = 0.2, 10", "LEARNING_RATE, STEPS = 1.5, 10")],
        [("torch.optim.SGD(model.parameters(), lr=LEARNING_RATE)", "torch.optim.Adam(model.parameters(), lr=0.1)")],
    ],
    "14_hooks": [
        [("    return grad * 2\n", "    return None\n")],
        [('    print("post-accumulate hook sees w.grad:", param.grad)\n',
          '    print("post-accumulate hook sees w.grad:", param.grad)\n    param.grad = None\n'),
         ("(w * torch.tensor([1.0, 2.0])).sum().backward()\n",
          "(w * torch.tensor([1.0, 2.0])).sum().backward()\n(w * torch.tensor([1.0, 2.0])).sum().backward()\n")],
    ],
    "15_eval_nograd_inference": [
        [("with torch.no_grad():\n    quiet = model(batch)",
          "model.eval()\nwith torch.no_grad():\n    quiet = model(batch)")],
        [("with torch.inference_mode():\n", "with torch.no_grad():\n")],
    ],
    "16_torch_func": [
        [("by_jacrev = jacrev(spread)(x)\n",
          "by_jacrev = jacrev(spread)(x)\nsummed_grad = grad(lambda v: spread(v).sum())(x)\n")],
        [("    return (x**3).sum() + x.prod()\n", "    return torch.sin(x).sum() * x.prod()\n")],
    ],
    "17_nan_gradients": [
        [("masked = torch.where(x > 0, root, 0.0)", "masked = torch.where(x >= 0, root, 0.0)")],
        [("torch.sqrt((v**2).sum()).backward()", "torch.sqrt((v**2).sum() + 1e-12).backward()")],
    ],
    "18_accumulation_and_two_losses": [
        [("targets[:8].chunk(ACCUMULATE), strict=True):\n"
          "    (mse_loss(micro_model(micro_x), micro_y) / ACCUMULATE).backward()",
          "targets[:8].chunk(ACCUMULATE), strict=True):\n    mse_loss(micro_model(micro_x), micro_y).backward()")],
        [("zip(inputs.chunk(8), targets.chunk(8), strict=True)",
          "zip(inputs.split([3, 1, 2, 2, 3, 1, 2, 2]), targets.split([3, 1, 2, 2, 3, 1, 2, 2]), strict=True)")],
    ],
    "19_variable_length_no_padding": [
        [("sequences = [torch.randn(2), torch.randn(5), torch.randn(3)]",
          "sequences = [torch.randn(2), torch.randn(5), torch.randn(3), torch.randn(1)]")],
        [('print("one level further:", node.name(), "->", [parent.name() for parent, _ in node.next_functions])\n',
          'print("one level further:", node.name(), "->", [parent.name() for parent, _ in node.next_functions])\n'
          "node = node.next_functions[0][0]\nnode = node.next_functions[0][0]\n")],
    ],
    "20_be_the_engine": [
        [("            self.grad += other.data * out.grad\n            other.grad += self.data * out.grad\n",
          "            self.grad = other.data * out.grad\n            other.grad = self.data * out.grad\n")],
        [("        for node in reversed(order):\n", "        for node in order:\n")],
    ],
    "21_views_and_inplace": [
        [("    head = t[:2]\n    head.mul_(10)\n    return t\n", "    return torch.cat([t[:2] * 10, t[2:]])\n")],
        [("    leaf[:2].add_(amount)\n", "    with torch.no_grad():\n        leaf[:2].add_(amount)\n")],
    ],
    "22_saved_tensors_checkpointing": [
        [(CHECKPOINTED_BLOCKS, "    return checkpoint(layers, x, weights, use_reentrant=False)\n")],
        [(STORE, STORE.replace("return tensor", "return tensor.half()")),
         (LOAD, LOAD.replace("return stored", "return stored.float()"))],
    ],
    "23_forward_mode_ad": [
        [("fwAD.make_dual(x, torch.ones_like(x))", "fwAD.make_dual(x, v)")],
        [(FINITE_DIFFERENCE, "    return jvp(grad(fn), (w,), (v,))[1]\n")],
    ],
}

#: Per lesson: (exercise, edits) that do what the exercise asks in another way than CHANGES;
#: the exercise's check must be True on them too.
ALSO_RIGHT: dict[str, list[tuple[int, list[tuple[str, str]]]]] = {
    "21_views_and_inplace": [
        (1, [("    head = t[:2]\n    head.mul_(10)\n    return t\n",
              "    return t * torch.tensor([10.0, 10.0] + [1.0] * (len(t) - 2))\n")]),
        (2, [("    leaf[:2].add_(amount)\n", "    leaf.detach()[:2].add_(amount)\n")]),  # seen by the version counter
    ],
    "22_saved_tensors_checkpointing": [
        (2, [(STORE, STORE.replace("return tensor", "return tensor.to(torch.bfloat16)")),
             (LOAD, LOAD.replace("return stored", "return stored.float()"))]),
    ],
    "23_forward_mode_ad": [
        (1, [("    with fwAD.dual_level():\n        out = fn(fwAD.make_dual(x, torch.ones_like(x)))\n"
              "        return fwAD.unpack_dual(out).tangent\n", "    return jvp(fn, (x,), (v,))[1]\n")]),
        (2, [(FINITE_DIFFERENCE, "    return hessian(fn)(w) @ v\n")]),
        (2, [(FINITE_DIFFERENCE, "    return vjp(grad(fn), w)[1](v)[0]\n")]),  # reverse over reverse, H symmetric
    ],
    "19_variable_length_no_padding": [  # the fourth sequence inserted first, not appended
        (1, [("sequences = [torch.randn(2), torch.randn(5), torch.randn(3)]",
              "sequences = [torch.randn(1), torch.randn(2), torch.randn(5), torch.randn(3)]")]),
    ],
}


def source_of(stem: str) -> str:
    return (LESSONS / f"{stem}.py").read_text(encoding="utf-8")


def exercises(lesson: Lesson) -> list[tuple[int, int]]:
    """The Try it cells' numbered items (``1.``, ``2.`` … in the English text), as (cell start line, count)."""
    found = []
    for section in lesson.notes:
        if re.match(r"##\s+Try it\b", section.text["en"]):
            found.append((section.start_line, len(re.findall(r"^\d+\.\s", section.text["en"], re.MULTILINE))))
    return found


def edited(stem: str, edits: list[tuple[str, str]]) -> str:
    """The lesson's source with each (old, new) replacement of ``edits`` made; each old text occurs once."""
    text = source_of(stem)
    for old, new in edits:
        assert text.count(old) == 1, f"{stem}: {old!r} occurs {text.count(old)} times"
        text = text.replace(old, new)
    return text


def changed(stem: str, exercise: int) -> str:
    """The lesson's source with the change exercise ``exercise`` (1-based) asks for."""
    return edited(stem, CHANGES[stem][exercise - 1])


def write_lesson(folder: Path, stem: str, text: str) -> Path:
    """``text`` as ``folder/stem.py``, with the course's helper module beside it."""
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copy(LESSONS / "course.py", folder / "course.py")
    path = folder / f"{stem}.py"
    path.write_text(text, encoding="utf-8")
    return path


def wrong_answers(prediction: Prediction, entry: tuple[str, ...]) -> list[str]:
    """The answers that must judge wrong: the other choices, and the table's wrong answer if it gives one."""
    right = entry[1]
    return [choice for choice in prediction.choices if choice != right] + list(entry[2:])


def run(path: Path, checks: list[str], asks: dict[int, tuple[str, list[str]]] | None = None,
        lent: queue.Queue | None = None) -> tuple[m.Ended, dict[int, dict[str, dict[str, Any]]]]:
    """Run ``path`` through the engine to its end, with ``checks``.

    ``asks`` maps a line to (expression, answers): at the first stop on that line the run
    steps over it, as the app does once the learner answered, and the lesson process judges
    each answer. Returns the end and {line: {answer: reply}}. With ``lent``, the run takes a
    session from that queue and puts it back after, so that runs in several threads each have
    their own.
    """
    asks = dict(asks or {})
    pending = dict.fromkeys(asks)  # lines still to ask at: breakpoints, as the app's coach has them
    events: queue.Queue = queue.Queue()
    session = borrow(events.put) if lent is None else lent.get()
    session.listeners[:] = [events.put]
    judged: dict[int, dict[str, dict[str, Any]]] = {}
    waiting: int | None = None
    try:
        session.breakpoints[str(path)] = dict(pending)
        session.start(str(path), stop_on_entry=False, checks=checks)
        while not isinstance(message := events.get(timeout=WAIT), m.Ended):
            if not isinstance(message, m.Paused):
                continue
            snapshot = message.snapshot
            if waiting is not None:  # the predicted line has run: judge its answers here
                expression, answers = asks[waiting]
                for answer in answers:
                    request = session.request("predict", expression=expression, answer=answer)
                    while not (isinstance(reply := events.get(timeout=WAIT), m.Reply) and reply.id == request):
                        pass
                    judged.setdefault(waiting, {})[answer] = reply.result
                waiting = None
            line = snapshot["line"]
            if snapshot["event"] == "line" and snapshot["file"] == str(path) and line in pending:
                del pending[line]  # asked once per run, and the step over it must not stop on it again
                session.set_breakpoints(str(path), dict(pending))
                waiting = line
                session.step_over()
            else:
                session.resume()
    finally:
        give_back(session)
        if lent is not None:
            lent.put(session)
    return message, judged


@pytest.fixture(scope="module")
def shipped(tmp_path_factory):
    """Each lesson as shipped, run once: its end (with the checks) and its judged predictions."""
    done: dict[str, tuple[m.Ended, dict, Lesson]] = {}

    def get(stem: str) -> tuple[m.Ended, dict, Lesson]:
        if stem not in done:
            lesson = parse_lesson(source_of(stem))
            path = write_lesson(tmp_path_factory.mktemp(stem), stem, source_of(stem))
            asks = {p.line: (p.expression, [entry[1], *wrong_answers(p, entry)])
                    for p, entry in zip(lesson.predictions, ANSWERS[stem], strict=True)}
            end, judged = run(path, [c.expression for c in lesson.checks], asks)
            done[stem] = (end, judged, lesson)
        return done[stem]

    return get


@pytest.mark.parametrize("stem", STEMS)
def test_every_lesson_asks_three_predictions_and_checks_each_exercise(stem):
    lesson = parse_lesson(source_of(stem))
    assert len(lesson.predictions) >= 3
    (start, count), *others = exercises(lesson)
    assert others == [] and count >= 1
    cell = lesson.notes[-1]
    assert cell.start_line == start, "the Try it cell is the lesson's last note"
    numbered = {lang: re.findall(r"^(\d+)\. ", cell.text[lang], re.MULTILINE) for lang in ("en", "zh")}
    assert numbered["en"] == numbered["zh"] == [str(n) for n in range(1, count + 1)]
    assert [c.exercise for c in lesson.checks if cell.contains(c.line)] == list(range(1, count + 1))
    assert len(lesson.checks) == count  # no check outside the Try it cell
    assert len(CHANGES[stem]) == count
    assert len(WRONG[stem]) == count
    for number, wrongs in enumerate(WRONG[stem], 1):
        kinds = [kind for kind, _ in wrongs]
        assert set(kinds) <= set(KINDS), (number, kinds)
        assert len(wrongs) >= 4 and len(set(kinds)) >= 3 and "hard-coded" in kinds, (number, kinds)
    assert [entry[0] for entry in ANSWERS[stem]] == [p.expression for p in lesson.predictions]
    for prediction, entry in zip(lesson.predictions, ANSWERS[stem], strict=True):
        # the answers the table gives are ones the learner can pick
        assert not prediction.choices or set(entry[1:]) <= set(prediction.choices), prediction
        assert wrong_answers(prediction, entry), f"{prediction.expression}: no wrong answer to judge"


@pytest.mark.timeout(300)
@pytest.mark.parametrize("stem", STEMS)
def test_each_prediction_judges_its_right_answer_right_and_the_others_wrong(shipped, stem):
    end, judged, lesson = shipped(stem)
    assert end.status == "ok", end.error
    for prediction, entry in zip(lesson.predictions, ANSWERS[stem], strict=True):
        replies = judged.get(prediction.line)
        assert replies, f"line {prediction.line} ({prediction.expression}) was never reached"
        assert all(reply["ok"] for reply in replies.values()), replies
        verdicts = {answer: reply["right"] for answer, reply in replies.items()}
        shown = next(iter(replies.values()))["shown"]
        assert verdicts == {answer: answer == entry[1] for answer in verdicts}, (prediction.expression, shown)


@pytest.mark.timeout(300)
@pytest.mark.parametrize("stem", STEMS)
def test_no_exercise_is_done_in_the_lesson_as_shipped(shipped, stem):
    end, _, lesson = shipped(stem)
    assert end.status == "ok", end.error
    assert [(c["expression"], c["passed"], c["error"]) for c in end.checks] == [
        (check.expression, False, None) for check in lesson.checks]


@pytest.mark.timeout(300)
@pytest.mark.parametrize(("stem", "exercise"), [(stem, n) for stem in STEMS for n in range(1, len(CHANGES[stem]) + 1)])
def test_the_change_an_exercise_asks_for_passes_its_check(tmp_path, stem, exercise):
    lesson = parse_lesson(source_of(stem))
    path = write_lesson(tmp_path, stem, changed(stem, exercise))
    checks = [c.expression for c in lesson.checks]
    assert [c.expression for c in parse_lesson(path).checks] == checks
    end, _ = run(path, checks)
    assert end.status == "ok", end.error
    mine = end.checks[exercise - 1]
    assert (mine["passed"], mine["error"]) == (True, None), mine


@pytest.mark.timeout(900)
@pytest.mark.parametrize("stem", STEMS)
def test_all_changes_together_pass_every_check_and_each_wrong_edit_fails_its_own(tmp_path, stem):
    lesson = parse_lesson(source_of(stem))
    checks = [c.expression for c in lesson.checks]
    # each wrong solution runs alone: beside another exercise's wrong edit it could pass or fail by chance
    runs = [("all changes", None, True, [edit for change in CHANGES[stem] for edit in change])]
    runs += [(f"exercise {exercise}, wrong ({kind}): {edits}", exercise, False, edits)
             for exercise, wrongs in enumerate(WRONG[stem], 1) for kind, edits in wrongs]
    runs += [(f"exercise {exercise}, done another way: {edits}", exercise, True, edits)
             for exercise, edits in ALSO_RIGHT.get(stem, [])]
    sessions: queue.Queue = queue.Queue()
    for _ in range(WARM_SESSIONS):  # the runs share the warm sessions, one run on each at a time
        sessions.put(warm_session())

    def outcome(number: int, edits: list[tuple[str, str]]) -> m.Ended:
        return run(write_lesson(tmp_path / str(number), stem, edited(stem, edits)), checks, lent=sessions)[0]

    with ThreadPoolExecutor(WARM_SESSIONS) as pool:
        ends = list(pool.map(outcome, range(len(runs)), [edits for *_, edits in runs]))
    seen, expected = {}, {}
    for (name, exercise, right, _), end in zip(runs, ends, strict=True):
        assert end.status == "ok", (name, end.error)
        results = [(c["passed"], c["error"]) for c in end.checks]
        if exercise is None:  # every change at once: every check passes
            seen[name], expected[name] = results, [(True, None)] * len(checks)
        else:  # a wrong solution leaves its own check False; one done another way makes it True
            seen[name], expected[name] = results[exercise - 1], (right, None)
    assert seen == expected
