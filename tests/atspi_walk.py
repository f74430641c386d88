"""Run the real window with Linux accessibility on, step lesson 03 into its loop, and read it back over AT-SPI.

Run by ``tests/test_atspi.py`` under ``xvfb-run -a dbus-run-session``, as an assistive technology
such as Orca sees the app: the window answers AT-SPI calls on its event loop while a thread
here walks its accessible tree over D-Bus (jeepney) and prints one JSON line: the graph's node
count, and the node table found by name with its row count and the names of its first column.
"""

from __future__ import annotations

import json
import os
import re
import sys
import tempfile
import threading
import time
from pathlib import Path

from jeepney import DBusAddress, new_method_call
from jeepney.io.blocking import open_dbus_connection

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
ACCESSIBLE = "org.a11y.atspi.Accessible"


def a11y_bus_address() -> str:
    """The accessibility bus's address, from the session bus's ``org.a11y.Bus``."""
    with open_dbus_connection(bus="SESSION") as session:
        bus = DBusAddress("/org/a11y/bus", bus_name="org.a11y.Bus", interface="org.a11y.Bus")
        return session.send_and_get_reply(new_method_call(bus, "GetAddress")).body[0]


class Walker:
    """Reads accessible objects (bus name, path) over the accessibility bus."""

    def __init__(self, address: str) -> None:
        self.connection = open_dbus_connection(address)

    def call(self, name: str, path: str, interface: str, method: str, signature: str = "", *args: object) -> tuple:
        target = DBusAddress(path, bus_name=name, interface=interface)
        return self.connection.send_and_get_reply(new_method_call(target, method, signature, args), timeout=10).body

    def prop(self, name: str, path: str, interface: str, key: str) -> object:
        return self.call(name, path, "org.freedesktop.DBus.Properties", "Get", "ss", interface, key)[0][1]

    def children(self, name: str, path: str) -> list[tuple[str, str]]:
        return [tuple(child) for child in self.call(name, path, ACCESSIBLE, "GetChildren")[0]]

    def find(self, start: tuple[str, str], wanted: str, limit: int = 3000) -> tuple[str, str] | None:
        """The first object named ``wanted`` below ``start``, breadth first."""
        queue, seen = [start], 0
        while queue and seen < limit:
            node = queue.pop(0)
            seen += 1
            if self.prop(*node, ACCESSIBLE, "Name") == wanted:
                return node
            queue.extend(self.children(*node))
        return None


def main() -> None:
    os.environ.setdefault("QT_LINUX_ACCESSIBILITY_ALWAYS_ON", "1")
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication

    app = QApplication(sys.argv)
    from app.session import Session
    from app.workspace import Workspace
    from widgets import settings
    from widgets.main_window import MainWindow

    data = tempfile.mkdtemp()
    settings.use_file(os.path.join(data, "settings.ini"))
    settings.put("course/ask_predictions", False)
    settings.put("language", sys.argv[1] if len(sys.argv) > 1 else "en")
    session = Session(warm_spare=False)
    window = MainWindow(session, Workspace(data))
    window.show()
    lesson = ROOT / "lessons" / "03_loops.py"
    window.open_file(lesson)
    line = next(i for i, text in enumerate(lesson.read_text().splitlines(), 1)
                if re.match(r"\s+h_t = torch.tanh", text))
    window.code_view.toggle_breakpoint(line)
    window.docks["nodes"].raise_()
    passes = [0]
    result: dict[str, object] = {}
    done = threading.Event()  # the walk is over: the GUI thread's timer quits
    poll = QTimer()
    poll.timeout.connect(lambda: done.is_set() and app.quit())
    poll.start(100)

    def walk() -> None:
        try:
            walker = Walker(a11y_bus_address())
            apps = []
            for _ in range(50):  # the app registers with the registry once its bridge is up
                apps = walker.children("org.a11y.atspi.Registry", "/org/a11y/atspi/accessible/root")
                if apps:
                    break
                time.sleep(0.2)
            result["apps"] = len(apps)
            table = next((found for found in (walker.find(a, result["table_name"]) for a in apps) if found), None)
            if table is not None:
                rows = walker.prop(*table, "org.a11y.atspi.Table", "NRows")
                names = []
                for row in range(rows):
                    cell = tuple(walker.call(*table, "org.a11y.atspi.Table", "GetAccessibleAt", "ii", row, 0)[0])
                    names.append(walker.prop(*cell, ACCESSIBLE, "Name"))
                result.update(table_rows=rows, first_column=names)
        except Exception as exc:  # reported to the test, which fails with it
            result["error"] = f"{type(exc).__name__}: {exc}"
        done.set()

    def on_paused(_snapshot: object) -> None:
        passes[0] += 1
        if passes[0] <= 3:
            QTimer.singleShot(0, window.act_start.trigger)  # on to the breakpoint again: one more pass
            return
        QTimer.singleShot(500, start_walk)

    def start_walk() -> None:
        result.update(graph_nodes=len(window.graph_model.nodes), table_name=window.node_list.table.accessibleName(),
                      model_rows=window.node_list.row_count())
        threading.Thread(target=walk, daemon=True).start()

    window.bridge.paused.connect(on_paused)
    QTimer.singleShot(0, window.act_run_to_end.trigger)
    QTimer.singleShot(90_000, app.quit)
    app.exec()
    print(json.dumps(result, ensure_ascii=False))
    window.close()
    session.close()


if __name__ == "__main__":
    main()
