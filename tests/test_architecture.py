"""The kit's import structure (issue #25): no import cycles between its modules, and no module imports
a layer above its own. Every import counts: module level, inside a function, under TYPE_CHECKING."""
from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "autograder"

#: Layers from the bottom: a module may import its own layer and those below, never one above.
LAYERS: list[tuple[str, ...]] = [
    # selfcheck.i18n: the student language and gettext, standard library only (the sandbox's messages use it)
    ("sandbox.runtime", "selfcheck.i18n", "printable", "spreadsheet", "untrusted_html", "generated_docs", "deadlines"),
    ("config",),
    ("sandbox",),  # the fork server and bubblewrap: they read the course's limits
    ("selfcheck",),
    ("grading", "catalogue", "translations"),  # translations: the catalogues, for a release and a Gradescope zip
    ("integrations",),
    ("authoring",),  # a release runs nbgrader (integrations/nbgrader_bridge)
    ("report",),  # the class report reads the starter code (authoring) to leave it out of similarity
    ("cli",),
]
SKIP = ("suites", "catalogue.entries")  # test files and catalogue entries: data, not the kit's modules


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, Path]:
    found = {module_name(p): p for p in PACKAGE.rglob("*.py")}
    return {m: p for m, p in found.items() if not any(m.startswith(f"autograder.{s}") for s in SKIP)}


def imports(name: str, path: Path, known: set[str]) -> set[str]:
    """The kit's modules that `name` imports, anywhere in its file."""
    out: set[str] = set()
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    for node in ast.walk(ast.parse(path.read_text())):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package.split(".")[: len(package.split(".")) - node.level + 1] + ([base] if base else []))
            # `from package import module` imports that module; `from module import name`, the module
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names]
        for target in targets:
            while target and target not in known:
                target = target.rpartition(".")[0]
            if target and target != name:
                out.add(target)
    return out


def graph() -> dict[str, set[str]]:
    found = modules()
    return {name: imports(name, path, set(found)) for name, path in found.items()}


def layer(module: str) -> int:
    rest = module.removeprefix("autograder.")
    for i, names in enumerate(LAYERS):
        if any(rest == n or rest.startswith(n + ".") for n in names):
            return i
    raise AssertionError(f"{module} is in no layer of tests/test_architecture.py: add it where it belongs")


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                out.append(sorted(group))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


def test_no_import_cycles() -> None:
    assert cycles(graph()) == []


def test_no_module_imports_a_layer_above_its_own() -> None:
    edges = graph()
    upward = sorted(f"{a} -> {b}" for a, targets in edges.items() for b in targets
                    if b != "autograder" and a != "autograder" and layer(b) > layer(a))
    assert upward == []


def test_the_checks_fail_on_a_cycle_and_on_an_upward_import() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert layer("autograder.config") < layer("autograder.grading.late") < layer("autograder.cli")
