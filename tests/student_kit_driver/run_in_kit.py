"""Runs inside the student kit's own venv (never the project's): notebook cells, imports, kit callables.

    python run_in_kit.py cells IN.json OUT.json       {notebook: [cell source]} -> {notebook: [{stdout, error}]}
    python run_in_kit.py imports OUT.json             {module: importable?}
    python run_in_kit.py callables IN.pt OUT.pt       every kit callable on every argument tuple -> its tensors

Only the standard library, torch and the kit are used: this file must run where the project is absent.
"""

import contextlib
import importlib
import inspect
import io
import json
import pkgutil
import sys
import traceback

import torch


def run_cells(source_path, out_path):
    notebooks = json.loads(open(source_path, encoding="utf-8").read())
    report = {}
    for name, cells in notebooks.items():
        namespace = {"__name__": "__main__"}
        report[name] = []
        for source in cells:
            stdout, error = io.StringIO(), None
            with contextlib.redirect_stdout(stdout):
                try:
                    exec(compile(source, name, "exec"), namespace)
                except Exception as exc:  # noqa: BLE001 - a stub raising NotImplementedError is expected
                    error = f"{type(exc).__name__}: {exc}"
            report[name].append({"stdout": stdout.getvalue(), "error": error})
    open(out_path, "w", encoding="utf-8").write(json.dumps(report))


MODULES = ("attnkit.solutions",
           "autograder.course.n01_attention_without_weights.ex1_softmax.declaration",
           "autograder.course.variants",
           "autograder.course.kit_recording", "autograder.course.catalog", "autograder.running.runner",
           "autograder.integrations.student_kit.build", "autograder")


def check_imports(out_path):
    found = {}
    for name in MODULES:
        try:
            importlib.import_module(name)
            found[name] = True
        except ImportError:
            found[name] = False
    open(out_path, "w", encoding="utf-8").write(json.dumps(found))


def kit_callables():
    """(qualified name, callable) of every function and class defined in the installed kit."""
    import autograder

    found = {}
    for module_info in pkgutil.walk_packages(autograder.__path__, "autograder."):
        module = importlib.import_module(module_info.name)
        for value in vars(module).values():
            if (inspect.isfunction(value) or inspect.isclass(value)) and value.__module__.startswith("autograder"):
                found[f"{value.__module__}.{value.__qualname__}"] = value
    return sorted(found.items())


def run_callables(in_path, out_path):
    argument_sets = torch.load(in_path, weights_only=True)
    outputs = {}
    for qualified, function in kit_callables():
        for index, arguments in enumerate(argument_sets):
            try:
                with contextlib.redirect_stdout(io.StringIO()):
                    result = function(*[a.clone() if isinstance(a, torch.Tensor) else a for a in arguments])
            except Exception:  # noqa: BLE001 - most callables take other arguments: only returned tensors matter
                continue
            if isinstance(result, torch.Tensor):
                outputs[f"{qualified}#{index}"] = result.detach().cpu()
    outputs["__callables__"] = torch.tensor([len(kit_callables())])
    torch.save(outputs, out_path)


if __name__ == "__main__":
    command, *paths = sys.argv[1:]
    try:
        {"cells": run_cells, "imports": check_imports, "callables": run_callables}[command](*paths)
    except Exception:
        traceback.print_exc()
        sys.exit(1)
