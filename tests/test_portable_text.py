"""Text as a Windows learner in China meets it: a lesson folder with spaces and Chinese, a lesson saved with CRLF
line endings, a C locale and a GBK one: the lesson process and the app exchange UTF-8 whatever the locale, and a
lesson's Chinese ``print`` arrives whole. Also in the portable leg of .ci/run."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import EventLog

from app import messages as m

ROOT = Path(__file__).resolve().parent.parent

CHINESE = """\
greeting = "你好，世界"
words = [greeting, "梯度"]
print(greeting, "张三", flush=True)
print("".join(words))
"""
#: What :data:`CHINESE` prints.
PRINTED = "你好，世界 张三\n你好，世界梯度\n"


def chinese_folder(tmp_path: Path) -> Path:
    """A folder named as on a Chinese Windows desktop (``C:\\Users\\张三\\桌面\\课程``), spaces added."""
    folder = tmp_path / "Users" / "张三" / "桌面" / "我的 课程"
    folder.mkdir(parents=True)
    return folder


def stepped(session, events, path: str, breakpoints: dict[int, None] | None = None) -> tuple[list, m.Ended]:
    """Every pause of a run stepped into to its end (or continued between ``breakpoints``), and its end."""
    session.breakpoints[path] = breakpoints or {}
    session.start(path, stop_on_entry=breakpoints is None)
    pauses = []
    while isinstance(message := events.wait((m.Paused, m.Ended)), m.Paused):
        pauses.append(message.snapshot)
        session.step_into() if breakpoints is None else session.resume()
    return pauses, message


def test_a_lesson_in_a_folder_with_spaces_and_chinese_steps_and_prints_whole(session, events, tmp_path):
    path = chinese_folder(tmp_path) / "第一课 lesson.py"
    path.write_text(CHINESE, encoding="utf-8")
    pauses, ended = stepped(session, events, str(path))
    assert ended.status == "ok"
    assert {snapshot["file"] for snapshot in pauses} == {str(path)}
    assert [snapshot["line"] for snapshot in pauses if snapshot["event"] == "line"] == [1, 2, 3, 4]
    assert pauses[-1]["vars"]["greeting"]["repr"] == "'你好，世界'"
    assert events.output("stdout") == PRINTED


def test_a_lesson_saved_with_crlf_pauses_where_its_lf_twin_does_and_stops_at_its_breakpoints(session, tmp_path):
    lf, crlf = tmp_path / "lf.py", tmp_path / "crlf.py"
    lf.write_bytes(CHINESE.encode("utf-8"))
    crlf.write_bytes(CHINESE.replace("\n", "\r\n").encode("utf-8"))
    assert b"\r\n" in crlf.read_bytes()
    runs = []
    for path, breakpoints in ((lf, None), (crlf, None), (crlf, {3: None, 4: None})):
        session.listeners[:] = [log := EventLog()]
        pauses, ended = stepped(session, log, str(path), breakpoints)
        runs.append(([(p["event"], p["line"], p["vars"].get("greeting", {}).get("repr")) for p in pauses],
                     ended.status, log.output("stdout")))
    assert runs[1] == runs[0] and runs[0][1] == "ok"
    assert runs[1][2] == PRINTED  # no "\r" crept into what it prints
    assert [line for _, line, _ in runs[2][0]] == [3, 4] and runs[2][1:] == ("ok", PRINTED)


def trace_cli(path: Path, **env: str) -> list[dict]:
    """The records of ``gradstep --trace PATH`` run with ``env`` over the environment, read as UTF-8."""
    environment = {name: value for name, value in os.environ.items()
                   if name not in ("PYTHONUTF8", "PYTHONIOENCODING", "LANG", "LANGUAGE") and not name.startswith("LC_")}
    done = subprocess.run([sys.executable, str(ROOT / "main.py"), "--trace", str(path)], cwd=ROOT,
                          env={**environment, **env}, capture_output=True, timeout=180)
    assert done.returncode == 0, done.stderr.decode("utf-8", "replace")[-3000:]
    return [json.loads(line) for line in done.stdout.decode("utf-8").splitlines()]


def test_under_lc_all_c_the_trace_keeps_chinese_paths_and_text_whole(tmp_path):
    path = chinese_folder(tmp_path) / "第一课 lesson.py"
    path.write_text(CHINESE, encoding="utf-8")
    records = trace_cli(path, LC_ALL="C", LANG="C")
    assert records[-1]["status"] == "ok"
    assert {record["file"] for record in records[:-1]} == {str(path)}
    assert "".join(record["stdout"] for record in records) == PRINTED


@pytest.fixture(scope="module")
def gbk_locale(tmp_path_factory) -> dict[str, str]:
    """The environment of a GBK locale (``zh_CN.GBK``, Windows' code page 936), generated where glibc can."""
    if shutil.which("localedef") is None:
        pytest.skip("no localedef to generate a GBK locale with")
    folder = tmp_path_factory.mktemp("locales")
    made = subprocess.run(["localedef", "-i", "zh_CN", "-f", "GBK", str(folder / "zh_CN.GBK")], capture_output=True)
    if made.returncode not in (0, 1) or not (folder / "zh_CN.GBK").exists():  # 1: warnings, locale made
        pytest.skip(f"cannot generate zh_CN.GBK: {made.stderr.decode(errors='replace')}")
    env = {"LOCPATH": str(folder), "LC_ALL": "zh_CN.GBK"}
    probe = subprocess.run([sys.executable, "-c", "import locale; print(locale.getpreferredencoding(False))"],
                           env={**os.environ, **env}, capture_output=True, text=True)
    if probe.stdout.strip().upper() != "GBK":
        pytest.skip(f"the generated locale is not in use: {probe.stdout.strip()}")
    return env


def test_under_a_gbk_locale_the_lesson_text_and_its_chinese_print_arrive_whole(gbk_locale, tmp_path):
    path = tmp_path / "lesson.py"
    path.write_text(CHINESE, encoding="utf-8")
    records = trace_cli(path, **gbk_locale)
    assert records[-1]["status"] == "ok"
    assert "".join(record["stdout"] for record in records) == PRINTED
    assert records[-2]["vars"]["greeting"]["repr"] == "'你好，世界'"
