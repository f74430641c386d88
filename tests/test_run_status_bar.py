"""The status bar says what a running lesson is doing when it matters: a pause held up by a long call."""

from __future__ import annotations

from test_code_view import click_gutter
from test_main_window import wait_ended


def test_a_pause_held_up_by_a_long_call_is_explained_and_stop_still_works(qtbot, window_on):
    window = window_on("import time\nprint('sleeping', flush=True)\ntime.sleep(30)\n")
    window.act_run_to_end.trigger()
    qtbot.waitUntil(lambda: "sleeping" in window.console.output.toPlainText(), timeout=30_000)
    window.act_pause.trigger()
    qtbot.waitUntil(lambda: "cannot be interrupted" in window.state_label.text(), timeout=5_000)
    assert "time.sleep(30)" in window.state_label.text()
    window.act_stop.trigger()
    assert wait_ended(qtbot, window, timeout=5_000).status == "stopped"


def test_a_breakpoint_that_will_not_be_hit_is_said_in_the_output(qtbot, window_on):
    window = window_on("import threading\ndef work():\n    return 1\n"
                       "worker = threading.Thread(target=work)\nworker.start()\nworker.join()\n")
    assert click_gutter(qtbot, window.code_view, 3) == {3: None}
    window.act_run_to_end.trigger()
    assert wait_ended(qtbot, window).status == "ok"
    qtbot.waitUntil(lambda: "will not stop there" in window.console.output.toPlainText(), timeout=5_000)


def test_where_a_step_out_lands_the_status_says_what_the_function_returned():
    from widgets.run_status_bar import pause_text

    snapshot = {"event": "line", "function": "<module>", "line": 12, "vars": {},
                "returned": {"function": "outer", "value": {"type": "int", "repr": "42"}}}
    assert pause_text(snapshot).startswith("Paused at line 12 after outer() returned 42 — ")
    del snapshot["returned"]
    assert "returned" not in pause_text(snapshot)


def test_a_return_pause_says_yielding_suspended_or_raising_when_the_frame_does_not_return():
    from widgets.run_status_bar import pause_text

    base = {"event": "return", "function": "f", "line": 3, "vars": {}}
    assert pause_text({**base, "return_kind": "return"}).startswith("Paused returning from f(), line 3")
    assert pause_text({**base, "return_kind": "yield"}).startswith("Paused yielding from f(), line 3")
    assert pause_text({**base, "return_kind": "await"}).startswith("Paused suspended at an await in f(), line 3")
    assert pause_text({**base, "return_kind": "raise", "exception": {"type": "KeyError", "message": "'k'"}}
                      ).startswith("Paused raising KeyError from f(), line 3")


def test_a_program_that_does_not_end_after_its_last_line_says_so_in_the_output_and_when_stopped(qtbot, window_on):
    window = window_on("import atexit\n\ndef never():\n    while True:\n        pass\n\natexit.register(never)\n"
                       "print('last line')\n")
    window.act_run_to_end.trigger()
    qtbot.waitUntil(lambda: "exit handler" in window.console.output.toPlainText(), timeout=30_000)
    assert window.session.state == "running" and "exit handler" in window.state_label.text()
    window.act_stop.trigger()
    ended = wait_ended(qtbot, window, timeout=5_000)
    assert ended.status == "stopped"
    qtbot.waitUntil(lambda: "the program had not ended" in window.state_label.text(), timeout=5_000)
