"""The house rules a reader relies on: which process a module runs in is told by its path, and imports go one way."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: The modules both processes import: the vocabulary on the wire and what it is made of.
SHARED = {"app", "app.messages", "app.pause_delta", "app.code_lines", "app.gc_pause", "app.graph_format", "app.i18n",
          "app.process_tree", "app.value_fingerprint", "app.process_os", "app.process_portable", "app.process_posix",
          "app.process_windows"}
QT = ("PySide6", "pyqtgraph", "shiboken6")


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def project_modules() -> dict[str, Path]:
    files = [*ROOT.glob("app/**/*.py"), *ROOT.glob("widgets/**/*.py"), ROOT / "main.py"]
    return {module_name(path): path for path in files}


def imports_of(path: Path, modules: dict[str, Path]) -> set[str]:
    """Every module ``path`` imports, anywhere in it (functions and ``TYPE_CHECKING`` blocks too)."""
    found: set[str] = set()
    package = module_name(path) if path.name == "__init__.py" else module_name(path).rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names if f"{base}.{alias.name}" in modules)
    return found


def lesson_side(name: str) -> bool:
    return name == "app.lesson" or name.startswith("app.lesson.")


def project_graph() -> dict[str, set[str]]:
    modules = project_modules()
    return {name: {i for i in imports_of(path, modules) if i in modules and i != name}
            for name, path in modules.items()}


def test_there_is_no_import_cycle_in_the_project():
    graph = project_graph()
    cycles: list[list[str]] = []
    state: dict[str, int] = {}  # 1 on the path, 2 done

    def visit(name: str, path: list[str]) -> None:
        state[name] = 1
        for other in sorted(graph[name]):
            if state.get(other) == 1:
                cycles.append([*path[path.index(other):], other])
            elif other not in state:
                visit(other, [*path, other])
        state[name] = 2

    for name in sorted(graph):
        if name not in state:
            visit(name, [name])
    assert cycles == [], "import cycles: " + "; ".join(" → ".join(cycle) for cycle in cycles)


def test_the_lesson_side_imports_only_itself_and_the_shared_vocabulary():
    graph = project_graph()
    modules = [name for name in graph if lesson_side(name)]
    assert {"app.lesson.runner", "app.lesson.tracer", "app.lesson.summaries"} <= set(modules)
    wrong = {name: sorted(i for i in graph[name] if not lesson_side(i) and i not in SHARED) for name in modules}
    assert {name: found for name, found in wrong.items() if found} == {}


def test_the_app_side_never_imports_the_lesson_side_nor_the_shared_modules_the_app():
    graph = project_graph()
    app_side = [name for name in graph if not lesson_side(name)]
    wrong = {name: sorted(i for i in graph[name] if lesson_side(i)) for name in app_side}
    assert {name: found for name, found in wrong.items() if found} == {}
    shared_wrong = {name: sorted(i for i in graph[name] if i not in SHARED) for name in SHARED if name in graph}
    assert {name: found for name, found in shared_wrong.items() if found} == {}


def test_app_never_imports_qt():
    modules = project_modules()
    wrong = {name: sorted(i for i in imports_of(path, modules) if i.split(".")[0] in QT)
             for name, path in modules.items() if name.startswith("app")}
    assert {name: found for name, found in wrong.items() if found} == {}


#: Sizes a reader can take in one sitting (issue 28): a module, a class's methods, a function's lines.
MAX_MODULE_LINES, MAX_METHODS, MAX_FUNCTION_LINES = 800, 64, 60


def test_every_module_class_and_function_reads_in_one_sitting():
    too_big = []
    for name, path in project_modules().items():
        source = path.read_text(encoding="utf-8")
        if source.count("\n") > MAX_MODULE_LINES:
            too_big.append(f"{name}: {source.count(chr(10))} lines")
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.ClassDef):
                methods = [item for item in node.body if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef)]
                if len(methods) > MAX_METHODS:
                    too_big.append(f"{name}.{node.name}: {len(methods)} methods")
            elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                if node.end_lineno - node.lineno + 1 > MAX_FUNCTION_LINES:
                    too_big.append(f"{name}.{node.name}: {node.end_lineno - node.lineno + 1} lines")
    assert not too_big, too_big
