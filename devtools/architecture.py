"""`python -m devtools.architecture`: the figures of the restructuring table (issue 33), measured from the source.

Prints, for the `autograder` package of the checkout it runs in:
- modules and lines of code per stage (top-level subpackage);
- functions fully annotated (every parameter but a method's self/cls, and the return), per stage and in all;
- arrows up (imports from a lower layer of the pipeline contract in pyproject.toml to a higher one) and circles
  (import cycles, imports inside functions included);
- duplicate pairs, as the `duplicates` command counts them, when that command is on PATH.
"""

from __future__ import annotations

import argparse
import ast
import re
import shutil
import subprocess
import sys
import tomllib
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class StageFigures:
    """One stage's size and typing."""

    stage: str
    modules: int
    lines: int
    functions: int
    typed: int


def modules_of(package_dir: Path) -> dict[str, Path]:
    """{dotted name: file} of every module under package_dir."""
    found = {}
    for path in sorted(package_dir.rglob("*.py")):
        parts = path.relative_to(package_dir.parent).with_suffix("").parts
        found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def fully_annotated(function: ast.FunctionDef | ast.AsyncFunctionDef, is_method: bool) -> bool:
    arguments = [*function.args.posonlyargs, *function.args.args, *function.args.kwonlyargs]
    if is_method and arguments and arguments[0].arg in ("self", "cls"):
        arguments = arguments[1:]
    extra = [a for a in (function.args.vararg, function.args.kwarg) if a is not None]
    return function.returns is not None and all(a.annotation is not None for a in [*arguments, *extra])


def function_typing(tree: ast.AST) -> tuple[int, int]:
    """(functions, fully annotated functions) in a module's tree."""
    total = typed = 0
    methods = {id(item) for node in ast.walk(tree) if isinstance(node, ast.ClassDef) for item in node.body}
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            total += 1
            typed += fully_annotated(node, id(node) in methods)
    return total, typed


def stage_of(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "(package)"


def stage_figures(package_dir: Path) -> list[StageFigures]:
    counts: dict[str, Counter[str]] = {}
    for module, path in modules_of(package_dir).items():
        text = path.read_text(encoding="utf-8")
        functions, typed = function_typing(ast.parse(text))
        figures = counts.setdefault(stage_of(module), Counter())
        figures.update(modules=1, lines=sum(1 for line in text.splitlines() if line.strip()),
                       functions=functions, typed=typed)
    return [StageFigures(stage, c["modules"], c["lines"], c["functions"], c["typed"])
            for stage, c in sorted(counts.items())]


def import_graph(package_dir: Path) -> dict[str, set[str]]:
    modules = modules_of(package_dir)
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        found: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                found.update(alias.name for alias in node.names if alias.name in modules)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module in modules:
                for alias in node.names:
                    submodule = f"{node.module}.{alias.name}"
                    found.add(submodule if submodule in modules else node.module)
        graph[name] = found - {name}
    return graph


def cycles(graph: dict[str, set[str]]) -> int:
    """How many strongly connected components hold more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = 0

    def visit(node: str) -> None:
        nonlocal found
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in graph.get(node, ()):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            found += len(component) > 1

    sys.setrecursionlimit(10_000)
    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def layer_of(module: str, layers: list[list[str]]) -> int | None:
    for depth, names in enumerate(layers):
        if any(module == name or module.startswith(name + ".") for name in names):
            return depth
    return None


def arrows_up(graph: dict[str, set[str]], pyproject: Path) -> int:
    """Imports from a lower layer to a higher one of every `layers` contract without containers."""
    config = tomllib.loads(pyproject.read_text(encoding="utf-8"))
    count = 0
    for contract in config["tool"]["importlinter"]["contracts"]:
        if contract["type"] != "layers" or contract.get("containers"):
            continue
        layers = [[name.strip() for name in layer.split("|")] for layer in contract["layers"]]
        for source, targets in graph.items():
            for target in targets:
                below, above = layer_of(source, layers), layer_of(target, layers)
                count += below is not None and above is not None and above < below
    return count


def duplicate_pairs(package_dir: Path) -> str:
    command = shutil.which("duplicates")
    if command is None:
        return "(duplicates not on PATH)"
    first = subprocess.run([command, "--repo", str(package_dir)], capture_output=True, text=True).stdout
    match = re.match(r"(\d+) pairs", first) or re.match(r"no duplicates", first)
    return match.group(1) if match and match.groups() else "0" if match else first.splitlines()[0]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=ROOT, help="the checkout to measure (default: this one)")
    root = parser.parse_args(argv).root
    package_dir = root / "autograder"
    rows = stage_figures(package_dir)
    print(f"{'stage':14} {'modules':>7} {'lines':>6} {'typed functions':>16}")
    for row in rows:
        print(f"{row.stage:14} {row.modules:7} {row.lines:6} {row.typed:7} / {row.functions:<6}")
    functions, typed = sum(r.functions for r in rows), sum(r.typed for r in rows)
    print(f"{'all':14} {sum(r.modules for r in rows):7} {sum(r.lines for r in rows):6} {typed:7} / {functions:<6}"
          f" ({100 * typed / max(functions, 1):.0f} %)")
    graph = import_graph(package_dir)
    print(f"arrows up: {arrows_up(graph, root / 'pyproject.toml')}   circles: {cycles(graph)}")
    print(f"duplicate pairs in autograder/: {duplicate_pairs(package_dir)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
