"""The import structure the README describes, checked on the source (no imports executed).

Layers, lowest first; a module may import only from its own layer or a lower one:

1. core: ``middleware`` minus the CLI (schemas, config, detection, LLM stage, pipeline,
   sessions, state codec, metrics) — transport-agnostic, no Kafka, no surrogate generators;
2. ``surrogate`` (replacer, generators, encrypted mapping);
3. ``consumers`` (Kafka I/O, embedded broker, worker, state store) and, beside it, ``proxy`` (the
   OpenAI-compatible proxy; neither imports the other);
4. the composition root: ``middleware.cli`` and ``middleware.commands`` (builds and wires the rest);
5. ``benchmarks`` (harnesses, fault injection, simulators; the ``bench`` extra).

And no import cycle between modules, counting every import (module level, inside functions,
under ``TYPE_CHECKING``).
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("middleware", "consumers", "surrogate", "benchmarks", "proxy")
LAYERS = {"core": 1, "surrogate": 2, "consumers": 3, "proxy": 3, "cli": 4, "benchmarks": 5}


def layer_of(module: str) -> str | None:
    if not module.startswith("plainsight."):
        return None
    top = module.split(".")[1]
    if top == "middleware":
        if module == "plainsight.middleware.cli" or module == "plainsight.middleware.commands" or module.startswith("plainsight.middleware.commands."):
            return "cli"
        return "core"
    if top in ("surrogate", "consumers", "benchmarks", "proxy"):
        return top
    return None


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(["plainsight"] + parts)  # installed as subpackages of plainsight


def modules() -> dict[str, Path]:
    out: dict[str, Path] = {}
    for pkg in PACKAGES:
        base = ROOT / pkg
        if not base.is_dir():
            continue
        for path in sorted(base.rglob("*.py")):
            out[_module_name(path)] = path
    return out


def _project(module: str) -> bool:
    parts = module.split(".")
    return len(parts) > 1 and parts[0] == "plainsight" and parts[1] in PACKAGES


def _resolve(current: str, is_pkg: bool, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    base = current.split(".") if is_pkg else current.split(".")[:-1]
    if node.level > 1:
        base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def imports_of(name: str, path: Path, known: dict[str, Path]) -> list[tuple[str, int]]:
    """(imported project module, line) for every import statement in the file."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    is_pkg = path.name == "__init__.py"
    found: list[tuple[str, int]] = []

    def add(mod: str, line: int) -> None:
        # the longest known prefix: `from middleware.detection import base` -> the module itself
        while mod and mod not in known:
            mod = mod.rpartition(".")[0]
        if mod and mod != name:
            found.append((mod, line))

    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if _project(a.name):
                    add(a.name, node.lineno)
        elif isinstance(node, ast.ImportFrom):
            target = _resolve(name, is_pkg, node)
            if not _project(target):
                continue
            for a in node.names:  # `from pkg import submodule`
                sub = f"{target}.{a.name}"
                add(sub if sub in known else target, node.lineno)
    return found


def graph() -> tuple[dict[str, Path], dict[str, list[tuple[str, int]]]]:
    known = modules()
    return known, {m: imports_of(m, p, known) for m, p in known.items()}


def test_imports_follow_the_layers():
    known, edges = graph()
    bad = []
    for mod, deps in edges.items():
        lm = layer_of(mod)
        for dep, line in deps:
            ld = layer_of(dep)
            if lm and ld and LAYERS[ld] > LAYERS[lm]:
                bad.append(f"{known[mod].relative_to(ROOT)}:{line}: {mod} ({lm}) imports {dep} ({ld})")
    assert not bad, "imports against the layer order:\n" + "\n".join(sorted(bad))


#: (importer prefix, imported prefix) pairs forbidden inside a layer
FORBIDDEN = [
    # the refiner (LLM stage) knows nothing of the pipeline that calls it (middleware/refine.py)
    ("plainsight.middleware.llm", "plainsight.middleware.pipeline"),
    # the core detection, sessions and schemas know nothing of the LLM stage or the pipeline
    ("plainsight.middleware.detection", "plainsight.middleware.llm"),
    ("plainsight.middleware.detection", "plainsight.middleware.pipeline"),
    # the proxy and the Kafka transport are siblings (both over core + surrogate)
    ("plainsight.proxy", "plainsight.consumers"),
    ("plainsight.consumers", "plainsight.proxy"),
]


def _under(module: str, prefix: str) -> bool:
    return module == prefix or module.startswith(prefix + ".")


def test_no_forbidden_imports_inside_the_core():
    known, edges = graph()
    bad = [f"{known[mod].relative_to(ROOT)}:{line}: {mod} imports {dep}"
           for mod, deps in edges.items() for dep, line in deps
           for a, b in FORBIDDEN if _under(mod, a) and _under(dep, b)]
    assert not bad, "forbidden imports:\n" + "\n".join(sorted(bad))


def find_cycles(edges: dict[str, list[tuple[str, int]]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    counter = [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w, _ in edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


def test_no_import_cycles():
    _known, edges = graph()
    cycles = find_cycles(edges)
    assert not cycles, "import cycles:\n" + "\n".join(" <-> ".join(c) for c in cycles)


def test_the_checker_sees_violations():
    """The check itself: a core module importing a consumer, and a two-module cycle, are caught."""
    edges = {"plainsight.middleware.pipeline": [("plainsight.consumers.worker", 1)], "plainsight.consumers.worker": [("plainsight.middleware.pipeline", 2)]}
    assert find_cycles(edges) == [["plainsight.consumers.worker", "plainsight.middleware.pipeline"]]
    assert LAYERS[layer_of("plainsight.consumers.worker")] > LAYERS[layer_of("plainsight.middleware.pipeline")]
    assert layer_of("plainsight.middleware.commands.serve") == "cli" and layer_of("plainsight.middleware.detection.names") == "core"


def test_one_namespace_no_top_level_imports_of_the_subpackages():
    """Every file of the repository imports the subpackages as ``plainsight.<sub>`` (or relatively):
    an import of ``middleware``, ``consumers``, ``surrogate`` or ``benchmarks`` as a top-level
    name would load another project's package of that name once plainsight is installed."""
    bad = []
    for path in sorted(ROOT.rglob("*.py")):
        if any(part in (".venv", ".git", "build", "node_modules") for part in path.relative_to(ROOT).parts):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
                names = [node.module]
            for n in names:
                if n.split(".")[0] in PACKAGES + ("configs",):
                    bad.append(f"{path.relative_to(ROOT)}:{node.lineno}: import {n}")
    assert not bad, "top-level imports of plainsight's subpackages:\n" + "\n".join(bad)
