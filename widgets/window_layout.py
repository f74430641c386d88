"""The main window's teaching layout: where each dock goes, its share of the window, and keeping it through resizes.

The code and the graph side by side, the graph's column with the larger share (and every
pixel of extra width), never less than a third of the window after a resize or a layout
restored from another size; lessons and notes tabbed on the left; the variables (tabbed with
backward, inspector, call stack) in a strip under the code; the output (with watch) under the
graph, as wide as it, so a printed line is read whole. Docks have stable object names, so
``saveState`` and ``restoreState`` keep the learner's arrangement between sessions.
"""

from __future__ import annotations

from PySide6.QtCore import QByteArray, QSize, Qt, QTimer
from PySide6.QtWidgets import QDockWidget, QMainWindow, QTabBar, QToolBar, QWidget

from app.i18n import N_, tr
from widgets import settings

#: Shares of the window in the default layout: the graph's column (the output under the graph
#: is as wide), the lessons/notes column, and the height of the bottom strip and of the output.
GRAPH_SHARE, LESSONS_SHARE, BOTTOM_SHARE = 0.41, 0.15, 0.32
MIN_BOTTOM_HEIGHT = 220
#: The output under the graph: a few lines tall, so the drawing keeps most of the column's height.
OUTPUT_SHARE, MIN_OUTPUT_HEIGHT = 0.19, 140
#: After a resize or a layout restored at another size, the columns narrower than these shares of the
#: window (or the lessons column narrower than MIN_LESSONS_WIDTH) get the default layout's widths back.
MIN_GRAPH_SHARE, MIN_CODE_SHARE = 0.36, 0.33
#: Wide enough for the "Lessons" and "Lesson notes" tabs side by side.
MIN_LESSONS_WIDTH = 190
#: At a larger text size the code shows at least this many characters of a line: where the lessons column leaves
#: it less room, the lessons and notes tab into the strip under the code.
READABLE_CODE_CHARS = 60
#: Bumped when the default layout changes, so a layout saved by an older version is not restored.
LAYOUT_VERSION = 4
#: The docks' titles (English msgids), by object name.
DOCK_TITLES = {
    "lessons": N_("Lessons"), "notes": N_("Lesson notes"), "graph": N_("Autograd graph"),
    "variables": N_("Variables"), "backward": N_("Backward"), "console": N_("Output"),
    "inspector": N_("Tensor inspector"), "stack": N_("Call stack"), "watch": N_("Watch"), "nodes": N_("Graph nodes"),
}
#: View > Go To: each panel's key (Alt+digit), in the order a learner meets them; "code" is the central editor.
GO_TO_KEYS = {"lessons": "Alt+1", "notes": "Alt+2", "code": "Alt+3", "graph": "Alt+4", "nodes": "Alt+5",
              "variables": "Alt+6", "backward": "Alt+7", "console": "Alt+8", "watch": "Alt+9", "stack": "Alt+0"}
LEFT, RIGHT, BOTTOM = (Qt.DockWidgetArea.LeftDockWidgetArea, Qt.DockWidgetArea.RightDockWidgetArea,
                       Qt.DockWidgetArea.BottomDockWidgetArea)
#: Where each dock starts.
AREAS = {"lessons": LEFT, "notes": LEFT, "graph": RIGHT, "variables": BOTTOM, "backward": BOTTOM, "console": RIGHT,
         "inspector": BOTTOM, "stack": BOTTOM, "watch": RIGHT, "nodes": RIGHT}


class WindowLayout:
    """The docks of ``window`` and their teaching layout.

    Parameters
    ----------
    window
        The main window; its central widget is the code.
    panels
        The dock's object name → the panel it holds (every name of :data:`DOCK_TITLES`).
    code
        The code editor (the central widget's), for :meth:`go_to`.
    """

    def __init__(self, window: QMainWindow, panels: dict[str, QWidget], code: QWidget) -> None:
        self.window = window
        self.code = code
        self.sized = False
        # The graph and the output under it take the right side, top to bottom; the bottom strip runs
        # under the code. The output shares the graph's width: in the strip it got a sixth of the window.
        window.setCorner(Qt.Corner.BottomRightCorner, RIGHT)
        window.setCorner(Qt.Corner.TopRightCorner, RIGHT)
        window.setCorner(Qt.Corner.BottomLeftCorner, BOTTOM)
        self.docks = {name: self._dock(name, panels[name]) for name in DOCK_TITLES}
        docks = self.docks
        window.tabifyDockWidget(docks["lessons"], docks["notes"])
        window.splitDockWidget(docks["graph"], docks["console"], Qt.Orientation.Vertical)
        for name in ("backward", "inspector", "stack"):
            window.tabifyDockWidget(docks["variables"], docks[name])
        window.tabifyDockWidget(docks["console"], docks["watch"])
        window.tabifyDockWidget(docks["console"], docks["nodes"])
        for name in ("notes", "variables", "console"):
            docks[name].raise_()
        self.default_state = QByteArray()
        self.text_scale = 1.0
        """View > Text Size: the lessons column's minimum width grows with it, so its tabs stay whole."""
        self.lessons_in_strip = settings.get("window/lessons_in_strip")
        """The layout (not the learner) tabbed the lessons and notes into the strip, for the code's room."""

    def _dock(self, name: str, widget: QWidget) -> QDockWidget:
        dock = QDockWidget(tr(DOCK_TITLES[name]), self.window)
        dock.setObjectName(name)
        dock.setWidget(widget)
        self.window.addDockWidget(AREAS[name], dock)
        return dock

    def go_to(self, name: str) -> QWidget:
        """Show the panel ``name`` (a dock, or "code"), bring its tab to the front and give it the keyboard focus."""
        if name == "code":
            self.code.setFocus(Qt.FocusReason.ShortcutFocusReason)
            return self.code
        dock = self.docks[name]
        dock.show()
        dock.raise_()
        target = dock.widget()
        if target.focusProxy() is not None:  # the panel names the widget that takes the keyboard
            target.setFocus(Qt.FocusReason.ShortcutFocusReason)
            return target.focusProxy()
        focus = target if target.focusPolicy() != Qt.FocusPolicy.NoFocus else target.nextInFocusChain()
        for _ in range(50):  # the first widget inside the panel that takes the keyboard
            if target.isAncestorOf(focus) or focus is target:
                if focus.focusPolicy() != Qt.FocusPolicy.NoFocus and focus.isVisibleTo(target):
                    break
            focus = focus.nextInFocusChain()
        else:
            focus = target
        focus.setFocus(Qt.FocusReason.ShortcutFocusReason)
        return focus

    def retranslate(self) -> None:
        for name, dock in self.docks.items():
            dock.setWindowTitle(tr(DOCK_TITLES[name]))

    # ---- saved and default layouts ------------------------------------------------------

    def restore(self) -> None:
        """The geometry and layout saved on the last close (an older version's layout: the default one)."""
        self.default_state = self.window.saveState(LAYOUT_VERSION)
        geometry = settings.get("window/geometry")
        if not geometry.isEmpty():
            self.window.restoreGeometry(geometry)
        state = settings.get("window/state")
        if not state.isEmpty() and not self.window.restoreState(state, LAYOUT_VERSION):
            settings.put("window/state", QByteArray())

    def save(self) -> None:
        settings.put("window/lessons_in_strip", self.lessons_in_strip)
        settings.put("window/geometry", self.window.saveGeometry())
        settings.put("window/state", self.window.saveState(LAYOUT_VERSION))

    def reset(self) -> None:
        """Put every dock back where it starts."""
        for dock in self.docks.values():
            dock.setFloating(False)
            dock.show()
        self.window.restoreState(self.default_state, LAYOUT_VERSION)
        self.lessons_in_strip = False
        self.size_docks()
        self.place_lessons()
        self.hide_stale_tab_bars()

    def first_shown(self) -> None:
        """The window is on screen for the first time: the default proportions, or a saved layout made to fit."""
        if self.sized:
            return
        self.sized = True
        if settings.get("window/state").isEmpty():
            self.size_docks()
        else:  # a layout saved at another size: Qt fits it by crushing whichever column it meets first
            self.window.layout().activate()
            self.uncrush_columns()
        self.place_lessons()
        self.hide_stale_tab_bars()

    def size_docks(self) -> None:
        """The teaching layout's proportions: code and graph side by side, the graph the larger share."""
        width, docks = self.window.width(), self.docks
        self.window.resizeDocks([docks["lessons"], docks["graph"]],
                                [max(int(width * LESSONS_SHARE), self.min_lessons_width()), int(width * GRAPH_SHARE)],
                                Qt.Orientation.Horizontal)
        self.window.resizeDocks([docks["variables"], docks["console"]], self.strip_heights(),
                                Qt.Orientation.Vertical)
        self.window.layout().activate()  # now, not at the next event loop pass: a resize soon after reads these sizes

    def min_lessons_width(self) -> int:
        return round(MIN_LESSONS_WIDTH * self.text_scale)

    def set_text_scale(self, scale: float, toolbar: QToolBar) -> None:
        """View > Text Size: the lessons column wide enough for its tabs, the toolbar's labels only where they fit."""
        self.text_scale = scale
        self.fit_toolbar(toolbar)
        QTimer.singleShot(0, toolbar, lambda: self.fit_toolbar(toolbar))  # once the new font reached its buttons
        if self.sized:
            self.uncrush_columns()
            self.place_lessons()
            self.hide_stale_tab_bars()

    def place_lessons(self) -> None:
        """At a larger text size on a window too narrow for three readable columns, the lessons and notes tab into
        the strip under the code (beside the variables), so the code shows :data:`READABLE_CODE_CHARS`
        characters; back on the left where the code has that room beside them."""
        window, docks = self.window, self.docks
        lessons, notes, strip = docks["lessons"], docks["notes"], docks["variables"]
        narrow = self.text_scale > 1 and self.code_room() < self.readable_code_width()
        if narrow and not self.lessons_in_strip and all(  # where the learner left them (closed, elsewhere): stay
                window.dockWidgetArea(dock) == LEFT and not dock.isFloating() and not dock.isHidden()
                for dock in (lessons, notes)):
            front = next((dock for dock in window.tabifiedDockWidgets(strip) + [strip]
                          if not dock.visibleRegion().isEmpty()), strip)
            for dock in (lessons, notes):
                window.tabifyDockWidget(strip, dock)
            front.raise_()  # the strip keeps its panel in front: the lessons and notes are a tab away
            self.lessons_in_strip = True
            window.layout().activate()
            graph = docks["graph"]
            short = self.readable_code_width() - window.centralWidget().width()
            if short > 0:  # the graph gives what the code still lacks, down to its least share
                width = max(graph.width() - short, int(window.width() * MIN_GRAPH_SHARE) + 1)
                window.resizeDocks([graph], [width], Qt.Orientation.Horizontal)
                window.layout().activate()
        elif not narrow and self.lessons_in_strip:
            window.addDockWidget(LEFT, lessons)
            window.tabifyDockWidget(lessons, notes)
            notes.raise_()
            self.lessons_in_strip = False
            self.size_docks()

    def readable_code_width(self) -> int:
        """The code view's width that shows :data:`READABLE_CODE_CHARS` characters, its gutter and scroll bar."""
        code = self.code
        return (READABLE_CODE_CHARS * code.fontMetrics().horizontalAdvance("x") + code.viewportMargins().left()
                + code.verticalScrollBar().sizeHint().width() + 2 * code.frameWidth() + 8)

    def code_room(self) -> int:
        """The code's width in the default layout, the lessons column beside it."""
        width = self.window.width()
        return width - self.min_lessons_width() - int(width * GRAPH_SHARE) - 12  # 12: the columns' separators

    def fit_toolbar(self, toolbar: QToolBar) -> None:
        """Labels beside the toolbar's icons where the window has room for all of them, icons alone where not."""
        toolbar.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        if toolbar.sizeHint().width() > self.window.width():
            toolbar.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonIconOnly)  # each keeps its tooltip

    def hide_stale_tab_bars(self) -> None:
        """Hide the dock tab bars that building the layout left behind.

        Qt keeps showing the tab bar of each intermediate tab group (it would sit over the
        status bar); the layout shows the bars in use again when it next lays out.
        """
        for bar in self.window.findChildren(QTabBar, options=Qt.FindChildOption.FindDirectChildrenOnly):
            bar.hide()
            bar.setElideMode(Qt.TextElideMode.ElideNone)  # larger text: tabs stay whole, the bar scrolls instead
            bar.setUsesScrollButtons(True)
        self.window.layout().invalidate()

    # ---- resizing -----------------------------------------------------------------------

    def resized(self, size: QSize, old: QSize) -> None:
        """Keep the teaching layout through a resize.

        Qt gives a wider window's extra width to the code; the graph is what needs it. A narrower
        window Qt takes from the docks until the code is at its minimum: the graph or the notes crush.
        """
        window, graph = self.window, self.docks["graph"]
        toolbar = window.findChild(QToolBar, "run_toolbar")
        if toolbar is not None:
            self.fit_toolbar(toolbar)
        if not (self.sized and old.isValid() and graph.isVisible() and not graph.isFloating()):
            return
        grown = size.width() - old.width()
        before = graph.width()
        if grown > 0:
            # Qt gave the extra width to the code: move it to the graph, as long as the code keeps its share.
            window.layout().activate()
            give = min(grown, window.centralWidget().width() - (size.width() + 2) // 3 - 1)  # the code keeps a third
            if give > 0:
                window.resizeDocks([graph], [graph.width() + give], Qt.Orientation.Horizontal)
                window.layout().activate()
        self.uncrush_columns()
        if grown > 0 and graph.width() < before:  # a wider window never narrows the graph
            window.resizeDocks([graph], [before], Qt.Orientation.Horizontal)
            window.layout().activate()
        docks, heights = [], []
        for dock, height in zip((self.docks["variables"], self.docks["console"]), self.strip_heights(), strict=True):
            if dock.isVisible() and not dock.isFloating():
                docks.append(dock)
                heights.append(height)
        if size.height() < old.height() and any(
                dock.height() > height for dock, height in zip(docks, heights, strict=True)):
            # Qt takes a shorter window's height from the code and the graph; the strip and the output give theirs.
            window.resizeDocks(docks, heights, Qt.Orientation.Vertical)
            window.layout().activate()

    def strip_heights(self) -> list[int]:
        """The default heights of the bottom strip and of the output under the graph, for this window's height."""
        height = self.window.height()
        return [max(int(height * BOTTOM_SHARE), MIN_BOTTOM_HEIGHT), max(int(height * OUTPUT_SHARE), MIN_OUTPUT_HEIGHT)]

    def uncrush_columns(self) -> None:
        """Give the columns the default layout's widths when the graph, the code or the lessons column is crushed.

        A layout the learner arranged stays as long as no column is narrower than its minimum
        (:data:`MIN_GRAPH_SHARE`, :data:`MIN_CODE_SHARE`, :data:`MIN_LESSONS_WIDTH`).
        """
        window = self.window
        width, graph = window.width(), self.docks["graph"]
        left = [dock for dock in (self.docks["lessons"], self.docks["notes"])  # a tab behind another has no region
                if not dock.visibleRegion().isEmpty() and not dock.isFloating() and window.dockWidgetArea(dock) == LEFT]
        if graph.isFloating() or not graph.isVisible() or not (
                graph.width() < width * MIN_GRAPH_SHARE or window.centralWidget().width() < width * MIN_CODE_SHARE
                or any(dock.width() < self.min_lessons_width() for dock in left)):
            return
        docks = [*left[:1], graph]
        sizes = [max(int(width * LESSONS_SHARE), self.min_lessons_width())] * len(left[:1]) + [int(width * GRAPH_SHARE)]
        window.resizeDocks(docks, sizes, Qt.Orientation.Horizontal)
        window.layout().activate()
