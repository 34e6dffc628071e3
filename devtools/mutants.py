"""Mutants of the reference solutions, made by cosmic-ray's operators, and the code to load one in memory.

cosmic-ray is used as a library: its core operators (every operator that takes no arguments) find the mutation
positions in the parso tree of each `solutions/*.py` file, and `cosmic_ray.mutating.mutate_code` applies one
occurrence. Nothing is written to disk: `load` executes a mutated file (and the solution files that import it)
into fresh module namespaces, never into `sys.modules`, so the judges keep comparing with the real reference.

A mutant's key survives unrelated edits: file, enclosing definition, operator and a hash of the changed line
before and after (plus `#n` when the same change occurs twice in one definition), never a line number or a
file-wide occurrence index.
"""

import ast
import builtins
import difflib
import functools
import hashlib
from dataclasses import dataclass
from pathlib import Path

import cosmic_ray.plugins
from cosmic_ray.ast import ast_nodes, get_ast
from cosmic_ray.mutating import mutate_code

from attnkit import solutions
from autograder.course.exercises import EXERCISES

SOLUTIONS_DIR = Path(solutions.__file__).resolve().parent
PACKAGE = "attnkit.solutions"  # installed under the project's name (setup.py)


@dataclass(frozen=True)
class Mutant:
    key: str
    file: str  # e.g. "n03_causal_attention.py"
    line: int
    operator: str  # cosmic-ray operator name, e.g. "core/NumberReplacer"
    occurrence: int  # cosmic-ray's occurrence index of the operator in the file (to re-apply it)
    definition: str  # qualified name of the innermost def/class around the line, "<module>" outside any
    original_line: str
    mutated_line: str
    source: str  # the whole mutated file

    @property
    def where(self):
        return f"solutions/{self.file}:{self.line}"


# ---------------------------------------------------------------------------------------------
# The solution files and what each exercise uses


def solution_files():
    """{file name: source} of every solution module except the package's re-exports, in import order."""
    sources = {path.name: path.read_text(encoding="utf-8") for path in sorted(SOLUTIONS_DIR.glob("*.py"))
               if path.name != "__init__.py"}
    order, placed = [], set()

    def place(name, trail=()):
        if name in placed:
            return
        if name in trail:
            raise ValueError(f"solutions/ imports in a cycle: {' -> '.join((*trail, name))}")
        for dependency in sibling_imports(sources[name]):
            place(dependency, (*trail, name))
        placed.add(name)
        order.append(name)

    for name in sources:
        place(name)
    return {name: sources[name] for name in order}


def sibling_imports(source):
    """{file name: [names]} that `from attnkit.solutions.<module> import ...` statements take from sibling
    files."""
    imports = {}
    for node in ast.parse(source).body:
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(f"{PACKAGE}."):
            file = node.module.removeprefix(f"{PACKAGE}.") + ".py"
            imports.setdefault(file, []).extend(alias.name for alias in node.names)
    return imports


@dataclass(frozen=True)
class Definition:
    file: str
    name: str
    first_line: int  # decorators included
    last_line: int
    references: frozenset  # every bare name read inside it


def definitions(sources):
    """{(file, top-level name): Definition} of every top-level def and class."""
    found = {}
    for file, source in sources.items():
        for node in ast.parse(source).body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                first = min([node.lineno] + [decorator.lineno for decorator in node.decorator_list])
                names = frozenset(sub.id for sub in ast.walk(node) if isinstance(sub, ast.Name))
                found[file, node.name] = Definition(file, node.name, first, node.end_lineno, names)
    return found


def exercises_by_line(sources):
    """{(file, line): set of exercise ids} for every line of a definition an exercise's names reach.

    An exercise uses the reference objects its `names` stand for, and everything those refer to in turn (a
    module-level helper, a class imported from a sibling file), found by name in the source.
    """
    defined = definitions(sources)
    where = {name: file for file, name in defined}
    imported = {file: {name: origin for origin, names in sibling_imports(source).items() for name in names}
                for file, source in sources.items()}
    usage = {}
    for exercise in EXERCISES:
        reached, pending = set(), [(where[name], name) for name in exercise.names if name in where]
        while pending:
            file, name = pending.pop()
            if (file, name) in reached or (file, name) not in defined:
                continue
            reached.add((file, name))
            for reference in defined[file, name].references:
                if (file, reference) in defined:
                    pending.append((file, reference))
                elif reference in imported[file]:
                    pending.append((imported[file][reference], reference))
        for file, name in reached:
            definition = defined[file, name]
            for line in range(definition.first_line, definition.last_line + 1):
                usage.setdefault((file, line), set()).add(exercise.id)
    return usage


# ---------------------------------------------------------------------------------------------
# Generating mutants


def operators():
    """(name, instance) of every cosmic-ray operator that needs no arguments, in cosmic-ray's order."""
    for name in cosmic_ray.plugins.operator_names():
        operator_class = cosmic_ray.plugins.get_operator(name)
        if not operator_class.arguments():
            yield name, operator_class()


def qualified_names(source):
    """[qualified name per line] (index 0 unused): the innermost def or class around each line."""
    lines = source.count("\n") + 2
    names = ["<module>"] * lines

    def visit(node, prefix):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                name = f"{prefix}{child.name}"
                for line in range(child.lineno, child.end_lineno + 1):
                    names[line] = name
                visit(child, name + ".")
            else:
                visit(child, prefix)

    visit(ast.parse(source), "")
    return names


def changed_line(original, mutated, line):
    """(line number, original text, mutated text) of the first line that differs; `line` if none does."""
    before, after = original.splitlines(), mutated.splitlines()
    for tag, i1, _i2, j1, _j2 in difflib.SequenceMatcher(a=before, b=after, autojunk=False).get_opcodes():
        if tag != "equal":
            return i1 + 1, before[i1] if i1 < len(before) else "", after[j1] if j1 < len(after) else ""
    return line, before[line - 1], after[line - 1]


def file_mutants(file, source):
    """Every mutant of one file, with stable keys."""
    names = qualified_names(source)
    nodes = list(ast_nodes(get_ast(source)))  # finding positions leaves the tree as it is: parse once
    made = []
    for operator_name, operator in operators():
        positions = [start for node in nodes for start, _end in operator.mutation_positions(node)]
        for occurrence, (start_line, _column) in enumerate(positions):
            mutated = mutate_code(source, operator, occurrence)
            if mutated is None or mutated == source:
                continue
            line, before, after = changed_line(source, mutated, start_line)
            made.append((operator_name, occurrence, line, before, after, mutated, names[line]))
    mutants, seen = [], {}
    for operator_name, occurrence, line, before, after, mutated, definition in made:
        digest = hashlib.sha256(f"{before.strip()}\n{after.strip()}".encode()).hexdigest()[:10]
        key = f"{file}:{definition}:{operator_name}:{digest}"
        seen[key] = seen.get(key, 0) + 1
        if seen[key] > 1:
            key += f"#{seen[key]}"
        mutants.append(Mutant(key, file, line, operator_name, occurrence, definition, before.strip(), after.strip(),
                              mutated))
    return mutants


@functools.cache
def usage():
    """exercises_by_line of the solution files on disk (cached: it never changes within a run)."""
    return exercises_by_line(solution_files())


@functools.cache
def all_mutants():
    """Every mutant of every solution file (cached: parsing is the slow part)."""
    return tuple(mutant for file, source in solution_files().items() for mutant in file_mutants(file, source))


# ---------------------------------------------------------------------------------------------
# Loading a mutant


class MutantImportError(Exception):
    """The mutated module raised while it was being executed (its definitions, default arguments...)."""


def load(mutant=None):
    """{file name: module namespace} of every solution file, with `mutant` applied to its file (None: none).

    Each file is executed from source into a fresh dict; `from attnkit.solutions.<x> import ...` statements take their
    names from the dicts made here, so a mutated CausalAttention is also the one MultiHeadAttentionWrapper uses.
    """
    loaded = {}
    for file, source in solution_files().items():
        text = mutant.source if mutant is not None and mutant.file == file else source
        tree = ast.parse(text, filename=f"mutant/{file}")
        namespace = {"__name__": f"mutant_{PACKAGE}.{file[:-3]}", "__builtins__": builtins}
        kept = []
        for node in tree.body:
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(f"{PACKAGE}."):
                origin = loaded[node.module.removeprefix(f"{PACKAGE}.") + ".py"]
                namespace.update({alias.asname or alias.name: origin[alias.name] for alias in node.names})
            else:
                kept.append(node)
        tree.body = kept
        try:
            exec(compile(tree, f"mutant/{file}", "exec"), namespace)  # noqa: S102 - the mutated reference, by design
        except Exception as exc:  # noqa: BLE001 - any failure at import is the mutant's own outcome
            raise MutantImportError(f"{type(exc).__name__}: {exc}") from exc
        loaded[file] = namespace
    return loaded


def namespace_for(exercise, loaded):
    """The names an exercise's checks receive, taken from the loaded solution modules."""
    by_name = {name: module[name] for module in loaded.values() for name in module if not name.startswith("__")}
    return {name: by_name[name] for name in exercise.names}
