"""The project's switch: ``GRADSTEP_PORTABLE=1`` forces the portable part of the process layer, in the app and in
the lesson process it starts (no fork server, no process group, the channel inherited instead of ``pass_fds``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

#: Runs a lesson through a forking session and says what the app and the lesson process used.
PROBE = """
import json, queue, sys
from app import lesson_spawner, messages as m
from app.process_os import current
from app.session import Session

events = queue.Queue()
session = Session(events.put, warm_spare=False, forked=True)
session.start(sys.argv[1], stop_on_entry=False)
text = ""
while not isinstance(message := events.get(timeout=120), m.Ended):
    text += message.text if isinstance(message, m.Output) else ""
session.close()
print(json.dumps({"app": current().name, "server": lesson_spawner._server is not None, "lesson": text.split(),
                  "status": message.status}))
"""

LESSON = """
import os, sys
part = sys.modules["app.process_os"].current().name  # the engine's, loaded before the lesson ran
print(part, os.getpgid(0) == os.getpid(), os.environ.get("GRADSTEP_PORTABLE"))
"""


def probe(tmp_path: Path, **env: str) -> dict:
    lesson = tmp_path / "probe_lesson.py"
    lesson.write_text(LESSON, encoding="utf-8")
    environment = {name: value for name, value in os.environ.items() if name != "GRADSTEP_PORTABLE"}
    done = subprocess.run([sys.executable, "-c", PROBE, str(lesson)], cwd=ROOT, env={**environment, **env},
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout)


def test_the_switch_forces_the_portable_part_in_the_app_and_the_lesson_process(tmp_path):
    forced = probe(tmp_path, GRADSTEP_PORTABLE="1")
    assert forced["status"] == "ok" and forced["app"] == "portable" and not forced["server"]
    # the lesson process chose the portable part too, and leads no process group of its own
    assert forced["lesson"] == ["portable", "False", "1"]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the fork server is Linux's")
def test_without_the_switch_linux_uses_the_posix_part_a_group_and_the_fork_server(tmp_path):
    native = probe(tmp_path)
    assert native["status"] == "ok" and native["app"] == "posix" and native["server"]
    assert native["lesson"] == ["posix", "True", "None"]
