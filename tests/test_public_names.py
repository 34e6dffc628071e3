"""Every public module of autograder says what it exports (`__all__`), and the rest of the project imports only that.

Read with `ast`, nothing imported: (i) every module whose dotted name has no part starting with "_" declares a
literal `__all__` of names it binds (a lazy `__getattr__` module: names the module it loads from binds); (ii) every
`from autograder.X import name` and `autograder.X.name` in autograder/, devtools/ and solutions/ names a submodule of
X or a name in X's `__all__`; (iii) the top-level package exports exactly the notebook API the contributor guide's
"Public API" documents.
"""

import ast
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
USERS = ("autograder", "devtools", "solutions")  # the code whose imports must go through __all__


@dataclass(frozen=True)
class Module:
    name: str
    path: Path
    tree: ast.Module

    @property
    def public(self) -> bool:
        return not any(part.startswith("_") for part in self.name.split("."))


def dotted_name(path: Path, root: Path = ROOT) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def read_modules(root: Path = ROOT) -> dict[str, Module]:
    return {dotted_name(path, root): Module(dotted_name(path, root), path, ast.parse(path.read_text(encoding="utf-8")))
            for path in sorted((root / "autograder").rglob("*.py"))}


def declared_all(tree: ast.Module) -> list[str] | None:
    """The module's literal `__all__`, None when it declares none."""
    for node in tree.body:
        target = node.targets[0] if isinstance(node, ast.Assign) and len(node.targets) == 1 else \
            node.target if isinstance(node, ast.AnnAssign) else None
        if isinstance(target, ast.Name) and target.id == "__all__" and node.value is not None:
            value = ast.literal_eval(node.value)
            assert isinstance(value, list | tuple) and all(isinstance(name, str) for name in value), value
            return list(value)
    return None


def _is_type_checking(test: ast.expr) -> bool:
    return isinstance(test, ast.Name) and test.id == "TYPE_CHECKING" or \
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"


def bound_names(body: list[ast.stmt]) -> set[str]:
    """The names a module body binds when it runs (imports under `if TYPE_CHECKING:` do not run)."""
    names: set[str] = set()
    for node in body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names |= {leaf.id for target in targets for leaf in ast.walk(target) if isinstance(leaf, ast.Name)}
        elif isinstance(node, ast.Import | ast.ImportFrom):
            names |= {alias.asname or alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.If) and not _is_type_checking(node.test):
            names |= bound_names(node.body) | bound_names(node.orelse)
        elif isinstance(node, ast.Try):
            names |= bound_names(node.body) | bound_names(node.orelse) | bound_names(node.finalbody)
            names |= {name for handler in node.handlers for name in bound_names(handler.body)}
        elif isinstance(node, ast.With | ast.For):
            names |= bound_names(node.body)
    return names


def lazy_source(tree: ast.Module) -> str | None:
    """The module a PEP 562 `__getattr__` loads its names from (`importlib.import_module("...")`), if any."""
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == "__getattr__":
            for call in ast.walk(node):
                if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and \
                        call.func.attr == "import_module" and call.args and isinstance(call.args[0], ast.Constant):
                    return str(call.args[0].value)
    return None


def missing_all(modules: dict[str, Module]) -> list[str]:
    return [name for name, module in modules.items() if module.public and declared_all(module.tree) is None]


def unbound_exports(modules: dict[str, Module]) -> list[str]:
    """'module: name' for each name of an `__all__` that the module does not bind (nor load lazily), is private or
    is listed twice."""
    problems = []
    for name, module in modules.items():
        exported = declared_all(module.tree) or []
        bound = bound_names(module.tree.body)
        source = lazy_source(module.tree)
        if source in modules:
            bound |= bound_names(modules[source].tree.body)
        problems += [f"{name}: {export}" for export in exported if export not in bound or export.startswith("_")]
        problems += [f"{name}: {export} twice" for export in sorted(set(exported)) if exported.count(export) > 1]
    return problems


@dataclass(frozen=True)
class Use:
    module: str
    name: str
    where: str


class _Uses(ast.NodeVisitor):
    """`from autograder.X import name`, and `autograder.X.name` through `import autograder.X [as Y]` or a submodule
    imported by name."""

    def __init__(self, modules: dict[str, Module], where: str) -> None:
        self.modules, self.where = modules, where
        self.aliases: dict[str, str] = {}  # local name -> the autograder module it is
        self.found: list[Use] = []

    def _use(self, dotted: str, lineno: int) -> None:
        parts = dotted.split(".")
        for end in range(len(parts), 0, -1):
            if ".".join(parts[:end]) in self.modules:
                if end < len(parts) and not parts[end].startswith("__"):  # a module's own __file__, __path__
                    self.found.append(Use(".".join(parts[:end]), parts[end], f"{self.where}:{lineno}"))
                return

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            if alias.name.split(".")[0] == "autograder":
                self.aliases[alias.asname or "autograder"] = alias.name if alias.asname else "autograder"

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        module = node.module or ""
        if node.level or module.split(".")[0] != "autograder":
            return
        for alias in node.names:
            if alias.name.startswith("__"):
                continue
            if f"{module}.{alias.name}" in self.modules:
                self.aliases[alias.asname or alias.name] = f"{module}.{alias.name}"
            else:
                self.found.append(Use(module, alias.name, f"{self.where}:{node.lineno}"))

    def visit_Attribute(self, node: ast.Attribute) -> None:
        names, base = [], node
        while isinstance(base, ast.Attribute):
            names.append(base.attr)
            base = base.value
        if isinstance(base, ast.Name) and base.id in self.aliases:
            self._use(".".join([self.aliases[base.id], *reversed(names)]), node.lineno)
        else:
            self.generic_visit(node)


def uses_in(modules: dict[str, Module], root: Path = ROOT) -> list[Use]:
    found = []
    parsed = {module.path: module.tree for module in modules.values()}
    for folder in USERS:
        for path in sorted((root / folder).rglob("*.py")):
            if ".venv" in path.parts:
                continue
            visitor = _Uses(modules, str(path.relative_to(root)))
            visitor.visit(parsed.get(path) or ast.parse(path.read_text(encoding="utf-8")))
            found += visitor.found
    return found


def uses_outside_all(modules: dict[str, Module], uses: list[Use], root: Path = ROOT) -> list[str]:
    """'where: module.name' for each use of a name its module does not export (a module's use of itself aside)."""
    problems = []
    for use in uses:
        module = modules[use.module]
        if str(module.path.relative_to(root)) == use.where.rsplit(":", 1)[0]:
            continue
        if use.name not in (declared_all(module.tree) or []):
            problems.append(f"{use.where}: {use.module}.{use.name}")
    return problems


@pytest.fixture(scope="module")
def modules():
    return read_modules()


def test_every_public_module_declares_all(modules):
    assert len(modules) > 150  # the walk found the package
    assert missing_all(modules) == []


def test_every_exported_name_exists(modules):
    assert unbound_exports(modules) == []


def test_the_project_imports_only_what_a_module_exports(modules):
    uses = uses_in(modules)
    assert len(uses) > 500  # the walk found the imports
    assert uses_outside_all(modules, uses) == []


def documented_notebook_api() -> set[str]:
    """The names of the contributor guide's "Public API" row for notebook cells, without the package prefix."""
    guide = (ROOT / "docs" / "contributor-guide.md").read_text(encoding="utf-8")
    section = guide.split("### Public API", 1)[1].split("\n#", 1)[0]
    row = next(line for line in section.splitlines() if line.startswith("|") and "notebook cells" in line)
    entry = row.split("|")[1]
    return {name.removeprefix("autograder.") for name in re.findall(r"`([\w.]+)`", entry)}


def test_the_package_exports_exactly_the_documented_notebook_api(modules):
    assert documented_notebook_api() == {"check", "check_all", "grade"}
    assert sorted(declared_all(modules["autograder"].tree) or []) == sorted(documented_notebook_api())


# The checks above must be able to fail: a module without __all__, a name it does not bind, an import of a name
# left out of __all__.


def test_a_module_without_all_or_with_a_name_it_lacks_is_found(tmp_path):
    package = tmp_path / "autograder"
    package.mkdir()
    (package / "__init__.py").write_text('__all__ = ["present", "absent", "_private"]\npresent = _private = 1\n')
    (package / "bare.py").write_text("def helper():\n    return 1\n")
    (package / "_internal.py").write_text("x = 1\n")
    (package / "lazy.py").write_text(
        'import importlib\n__all__ = ["helper", "nowhere"]\n\n\ndef __getattr__(name):\n'
        '    return getattr(importlib.import_module("autograder.bare"), name)\n')
    modules = read_modules(tmp_path)
    assert missing_all(modules) == ["autograder.bare"]
    assert unbound_exports(modules) == ["autograder: absent", "autograder: _private", "autograder.lazy: nowhere"]


def test_an_import_of_a_name_left_out_of_all_is_found(tmp_path):
    package = tmp_path / "autograder"
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text("__all__: list[str] = []\n")
    (package / "sub" / "__init__.py").write_text("__all__: list[str] = []\n")
    (package / "sub" / "lib.py").write_text('__all__ = ["shown"]\nshown = hidden = 1\n')
    (tmp_path / "devtools").mkdir()
    (tmp_path / "devtools" / "tool.py").write_text(
        "import autograder.sub.lib\nimport autograder.sub.lib as lib\nfrom autograder.sub import lib as again\n"
        "from autograder.sub.lib import hidden, shown\n\n"
        "autograder.sub.lib.hidden, lib.hidden, again.hidden, lib.shown\n")
    modules = read_modules(tmp_path)
    uses = uses_in(modules, tmp_path)
    hidden = ["devtools/tool.py:4: autograder.sub.lib.hidden"] + ["devtools/tool.py:6: autograder.sub.lib.hidden"] * 3
    assert sorted(f"{use.where}: {use.module}.{use.name}" for use in uses) == sorted(
        [*hidden, "devtools/tool.py:4: autograder.sub.lib.shown", "devtools/tool.py:6: autograder.sub.lib.shown"])
    assert uses_outside_all(modules, uses, tmp_path) == hidden

