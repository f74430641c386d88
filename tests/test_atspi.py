"""A screen reader reads the graph: the node table over AT-SPI, from the running window, in English and 中文.

As Qt's own ``tst_qaccessibilitylinux`` does: the window runs with Linux accessibility on
(``QT_LINUX_ACCESSIBILITY_ALWAYS_ON=1``) on a virtual X server and a private session D-Bus,
and ``tests/atspi_walk.py`` reads its accessible tree over the accessibility bus, as Orca does.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from app import i18n

WALK = Path(__file__).resolve().parent / "atspi_walk.py"
NEEDED = ("xvfb-run", "dbus-run-session")
missing = [tool for tool in NEEDED if shutil.which(tool) is None]
if not Path("/usr/libexec/at-spi-bus-launcher").exists() and shutil.which("at-spi-bus-launcher") is None:
    missing.append("at-spi-bus-launcher")
pytestmark = [
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="AT-SPI is Linux's accessibility bus"),
    pytest.mark.skipif(bool(missing), reason=f"needs {', '.join(missing)} (X server, session bus, AT-SPI)"),
]


@pytest.mark.parametrize("language", ["en", "zh"])
def test_the_node_table_has_one_named_row_per_graph_node_over_atspi(language):
    env = {**os.environ, "QT_QPA_PLATFORM": "xcb", "QT_LINUX_ACCESSIBILITY_ALWAYS_ON": "1"}
    done = subprocess.run(["xvfb-run", "-a", "dbus-run-session", "--", sys.executable, str(WALK), language],
                          capture_output=True, text=True, timeout=150, env=env)
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    assert lines, (done.returncode, done.stdout[-2000:], done.stderr[-2000:])
    seen = json.loads(lines[-1])
    assert "error" not in seen, seen
    i18n.set_language(language)
    try:
        assert seen["table_name"] == i18n.tr("Autograd graph nodes")
    finally:
        i18n.set_language("en")
    assert seen["apps"] >= 1 and seen["graph_nodes"] > 10
    assert seen["table_rows"] == seen["graph_nodes"] == seen["model_rows"]
    names = seen["first_column"]
    assert len(names) == seen["graph_nodes"] and all(name.strip() for name in names)
    assert any(name.startswith("TanhBackward0") for name in names) and not any("★" in name for name in names)
