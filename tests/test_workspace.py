"""Edits are never lost and bundled lessons are never overwritten."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from app.trace import trace_records
from app.workspace import LESSONS_DIR, Workspace


def make(tmp_path):
    lessons = tmp_path / "lessons"
    lessons.mkdir()
    (lessons / "01_a.py").write_text("print('original')\n", encoding="utf-8")
    return Workspace(tmp_path / "data", lessons), lessons / "01_a.py"


def test_editing_a_bundled_lesson_writes_a_copy_and_revert_drops_it(tmp_path):
    ws, original = make(tmp_path)
    assert ws.is_bundled(original) and ws.open_path(original) == original.resolve()
    written = ws.save(original, "print('mine')\n")
    assert written == ws.copy_path(original) and written.read_text() == "print('mine')\n"
    assert original.read_text() == "print('original')\n"
    assert ws.open_path(original) == written
    assert ws.original_of(written) == original.resolve()
    assert ws.save(written, "print('again')\n") == written  # saving the copy keeps it the copy
    assert ws.revert(written) == original.resolve()
    assert not written.exists() and ws.open_path(original) == original.resolve()


def test_a_users_own_file_is_saved_in_place(tmp_path):
    ws, _ = make(tmp_path)
    own = tmp_path / "mine.py"
    own.write_text("a = 1\n", encoding="utf-8")
    assert not ws.is_bundled(own) and ws.original_of(own) is None
    assert ws.save(own, "a = 2\n") == own and own.read_text() == "a = 2\n"


def test_unsaved_edits_of_a_users_file_are_kept_apart_and_recovered(tmp_path):
    ws, _ = make(tmp_path)
    own = tmp_path / "mine.py"
    own.write_text("a = 1\n", encoding="utf-8")
    assert ws.unsaved(own, "a = 1\n") is None
    ws.keep_unsaved(own, "a = 2\n")
    assert own.read_text() == "a = 1\n"  # the file itself is untouched until saved
    assert ws.unsaved(own, "a = 1\n") == "a = 2\n"
    ws.keep_unsaved(own, "a = 1\n")
    assert ws.unsaved(own, "a = 1\n") is None and not ws.recovery_path(own).exists()  # same text: nothing kept
    ws.keep_unsaved(own, "a = 3\n")
    ws.forget_unsaved(own)
    assert ws.unsaved(own, "a = 1\n") is None


def test_a_failure_in_the_middle_of_a_write_leaves_the_old_file_and_no_litter(tmp_path, monkeypatch):
    ws, original = make(tmp_path)
    own = tmp_path / "mine.py"
    own.write_text("a = 1\n", encoding="utf-8")
    ws.save(original, "print('mine')\n")
    ws.keep_unsaved(own, "a = 2\n")

    def disk_full(fd):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", disk_full)  # the text is written, not yet on disk
    for write in (lambda: ws.save(own, "a = 3\n"), lambda: ws.save(original, "print('lost')\n"),
                  lambda: ws.keep_unsaved(own, "a = 4\n")):
        with pytest.raises(OSError):
            write()
    assert own.read_text(encoding="utf-8") == "a = 1\n"
    assert ws.copy_path(original).read_text(encoding="utf-8") == "print('mine')\n"
    assert ws.unsaved(own, "a = 1\n") == "a = 2\n"
    leftovers = [p.name for p in tmp_path.rglob("*") if p.name.endswith(".tmp")]
    assert leftovers == []


def test_a_damaged_recovery_copy_is_never_offered(tmp_path):
    ws, _ = make(tmp_path)
    own = tmp_path / "mine.py"
    own.write_text("a = 1\n", encoding="utf-8")
    text = "a = 1\n" + "".join(f"b{i} = {i}  # é\n" for i in range(200))
    recovery = ws.recovery_path(own)
    for damage in (lambda data: data[:len(data) // 2],  # cut short, as by a kill mid-write in place
                   lambda data: data[:-1] + b"!",  # one byte changed
                   lambda data: data.split(b"\n", 1)[1],  # no header: an older GradStep's copy or another file
                   lambda data: b"\xff" + data):  # not UTF-8
        ws.keep_unsaved(own, text)
        assert ws.unsaved(own, "a = 1\n") == text
        recovery.write_bytes(damage(recovery.read_bytes()))
        assert ws.unsaved(own, "a = 1\n") is None
        assert not recovery.exists()


def test_a_recovery_copy_is_still_the_program(tmp_path):
    ws, _ = make(tmp_path)
    own = tmp_path / "mine.py"
    ws.keep_unsaved(own, "x = 6 * 7\n")
    scope: dict = {}
    exec(ws.recovery_path(own).read_text(encoding="utf-8"), scope)
    assert scope["x"] == 42


def helper_value(path) -> int:
    """The ``A`` that a helper module's copy defines."""
    scope: dict = {}
    exec(path.read_text(encoding="utf-8"), scope)
    return scope["A"]


def test_a_helper_module_copy_follows_the_bundled_one_until_the_learner_changes_it(tmp_path):
    ws, original = make(tmp_path)
    helper = original.parent / "course.py"
    helper.write_text("A = 1\n", encoding="utf-8")
    assert ws.helper_modules() == [helper.resolve()]
    own = tmp_path / "mine.py"
    ws.save(own, "a = 1\n")
    assert not (tmp_path / "data" / "lessons").exists()  # the learner's own files get no helpers
    copy = ws.save(original, "from course import A\n")
    beside = copy.parent / "course.py"
    assert helper_value(beside) == 1
    helper.write_text("A = 2\n", encoding="utf-8")  # a newer GradStep
    assert ws.open_path(original) == copy and helper_value(beside) == 2
    beside.write_text(beside.read_text(encoding="utf-8").replace("A = 2", "A = 3"), encoding="utf-8")
    helper.write_text("A = 4\n", encoding="utf-8")
    ws.open_path(original)
    ws.save(copy, "from course import A\nprint(A)\n")
    assert helper_value(beside) == 3  # changed by the learner: theirs
    ws.revert(beside)
    ws.open_path(original)
    assert helper_value(beside) == 4  # GradStep's again
    assert ws.save(helper, "A = 5\n") == beside  # editing the bundled helper edits its copy, as for a lesson
    ws.open_path(original)
    assert helper_value(beside) == 5 and helper.read_text(encoding="utf-8") == "A = 4\n"


def test_an_edited_copy_of_lesson_03_runs_to_the_end_with_plain_python_and_through_the_engine(tmp_path):
    ws = Workspace(tmp_path / "data")
    original = LESSONS_DIR / "03_loops.py"
    assert LESSONS_DIR / "course.py" in ws.helper_modules()
    text = original.read_text(encoding="utf-8").replace("NUM_STEPS = 3, 4, 5", "NUM_STEPS = 3, 4, 2")
    assert "from course import count_nodes" in text
    copy = ws.save(original, text)
    assert copy.parent != LESSONS_DIR and (copy.parent / "course.py").is_file()

    plain = subprocess.run([sys.executable, str(copy)], cwd=tmp_path, capture_output=True, encoding="utf-8",
                           timeout=120)
    assert plain.returncode == 0, plain.stderr
    assert "step 1: TanhBackward0, nodes in graph so far: 23" in plain.stdout and "step 2" not in plain.stdout

    records = trace_records(str(copy), timeout=120)  # stepped into, every line
    assert records[-1]["status"] == "ok", records[-1]
    assert {r["file"] for r in records[:-1]} == {str(copy)}  # never inside the helper module
    stdout = "".join(r.get("stdout") or "" for r in records)
    assert stdout == plain.stdout
