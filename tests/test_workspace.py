"""Edits are never lost and bundled lessons are never overwritten."""

from __future__ import annotations

import os

import pytest

from app.workspace import Workspace


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
