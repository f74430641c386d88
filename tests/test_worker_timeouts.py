"""A test past its timeout on a pytest-xdist worker shows where it hung (tests/conftest.py)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_a_hung_test_on_a_worker_prints_its_stack_and_fails_while_the_others_run(tmp_path: Path):
    (tmp_path / "test_hang.py").write_text(textwrap.dedent("""
        import time

        import pytest


        @pytest.mark.timeout(3)
        def test_hangs():
            time.sleep(60)


        def test_quick():
            pass
    """), encoding="utf-8")
    env = {key: value for key, value in os.environ.items() if not key.startswith("PYTEST_")}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "tests"), str(ROOT)])
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "conftest", "-n", "2",
         "-o", "timeout_method=thread", "test_hang.py"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=90)
    out = run.stdout + run.stderr
    assert run.returncode == 1, out
    assert "1 failed, 1 passed" in out
    assert "crashed while running 'test_hang.py::test_hangs'" in out
    assert 'test_hang.py", line 9 in test_hangs' in out  # the hung line, from the worker's stack dump
