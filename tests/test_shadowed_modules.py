"""A learner's file named like a module the engine has loaded (``torch.py`` beside the lesson)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from app import messages as m

#: How long a test waits for a message before it counts the run as hung (seconds).
BOUND = 15.0


def _folder(tmp_path: Path, files: dict[str, str]) -> str:
    for name, text in files.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    return str(tmp_path / "lesson.py")


def test_a_torch_py_beside_the_lesson_is_named_at_the_import_instead_of_handing_out_the_real_torch(
        session, events, tmp_path):
    path = _folder(tmp_path, {
        "torch.py": "NAME = 'mine'\n",
        "app.py": "X = 1\n",
        "course.py": "Y = 2\n",
        "lesson.py": "import app, course\nprint(app.X, course.Y)\nimport torch\nprint(torch.NAME)\n",
    })
    plain = subprocess.run([sys.executable, path], capture_output=True, text=True, timeout=60)
    assert plain.stdout == "1 2\nmine\n"
    session.start(path, stop_on_entry=False)
    post_mortem = events.pause(timeout=BOUND)
    error = post_mortem["exception"]
    assert (error["type"], post_mortem["line"]) == ("ImportError", 3)
    assert str(tmp_path / "torch.py") in error["message"] and "Rename torch.py" in error["message"]
    session.resume()
    assert events.end(timeout=BOUND).status == "error"
    assert events.output("stdout") == "1 2\n"  # the learner's app and course, as under plain python


def test_a_file_named_like_a_module_plain_python_has_loaded_at_startup_changes_nothing(session, events, tmp_path):
    # plain python's own os is loaded before any lesson line, so a learner's os.py is not imported there either
    path = _folder(tmp_path, {"os.py": "raise SystemExit('mine')\n",
                              "lesson.py": "import os\nprint(os.path.basename('/a/b'))\n"})
    plain = subprocess.run([sys.executable, path], capture_output=True, text=True, timeout=60)
    session.start(path, stop_on_entry=False)
    assert events.end(timeout=BOUND).status == "ok"
    assert events.output("stdout") == plain.stdout == "b\n"


def test_a_shadowing_file_the_lesson_never_imports_changes_nothing(session, events, tmp_path):
    path = _folder(tmp_path, {"numpy.py": "raise SystemExit('mine')\n", "lesson.py": "x = 1\nprint(x)\n"})
    session.start(path, stop_on_entry=False)
    ended = events.wait(m.Ended, timeout=BOUND)
    assert ended.status == "ok" and events.output("stdout") == "1\n"
