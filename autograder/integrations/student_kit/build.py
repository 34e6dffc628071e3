"""`attnkit student-kit build OUT_DIR`: write the student kit, an installable package without the reference.

OUT_DIR gets pyproject.toml, README.md and a top-level `autograder` package: `from autograder import check`
works as in the release notebooks. It holds the kit's runtime (autograder/integrations/student_kit/runtime), the
stored public cases (autograder/integrations/student_kit/data/vectors.json) and every module of the full kit they
need, copied byte for byte at the same paths: the public checks' probes and judges (their exercise folders' probe.py
and judge.py) and what those import. A check is declared once: the kit runs the full kit's own probe and judge, and only
the expectations come from the stored vectors. Same sources, same bytes: every build writes identical files.
"""

import argparse
import ast
import dataclasses
import importlib.metadata
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch

from autograder.checking.check_types import Check, Misconception
from autograder.course import catalog
from autograder.course.catalog import MISCONCEPTIONS
from autograder.course.exercises import EXERCISES
from autograder.course.exercises import exercise as find_exercise
from autograder.course.kit_recording import record_case
from autograder.course.shared.plan import JUDGE_ROLE, address_of
from autograder.integrations.student_kit.runtime import tensors, vectors
from autograder.integrations.student_kit.runtime.torch_range import REQUIRES_PYTHON, SUPPORTED, TorchRange
from autograder.isolation.protected import check_modules
from autograder.running.runner import DEFAULT_SEED, cases_for
from autograder.running.threads import single_threaded

__all__ = [
    "KitBuildError", "SOURCE_ROOT", "build", "build_wheel", "kit_files", "kit_init", "kit_pyproject", "kit_readme",
    "misconception_record", "shipped_modules", "vectors_document", "wheel_name",
]

PACKAGE_NAME = "attnkit-student-kit"
SOURCE_ROOT = Path(__file__).resolve().parents[2]  # the full kit's autograder/
KIT_DIR = "autograder/integrations/student_kit"
RUNTIME_DIR = SOURCE_ROOT / "integrations" / "student_kit" / "runtime"
BUILD_TAIL_LINES = 20  # of `python -m build`'s output, in the error when it fails
# Package inits the kit writes itself (the full kit's import the grader's entry points).
OWN_INITS = ("__init__.py", "integrations/student_kit/__init__.py")
# What the kit must never hold, whatever a shipped module imports: the reference, the catalogue and what runs the
# checks against it. Besides them, every module autograder.isolation.protected counts as check code (the folders'
# declarations, the functional reference) is refused too.
NEVER_SHIPPED = ("attnkit.solutions", "autograder.course.catalog", "autograder.course.exercises",
                 "autograder.course.registry", "autograder.running.runner", "autograder.running.rendering",
                 "autograder.running.in_notebook")

KIT_INIT = '''"""attnkit's student kit: `check(...)` gives instant feedback on the public checks from stored vectors.

It holds no reference solutions and no hidden checks: your instructor grades with the full attnkit.
"""

import torch

from autograder.integrations.student_kit.runtime.torch_range import TorchRange, require_supported_torch

require_supported_torch(torch.__version__, TorchRange(lowest=LOWEST, below=BELOW))  # before anything reads the vectors

from autograder.integrations.student_kit.runtime.notebook import check, check_all, grade  # noqa: E402

__all__ = ["check", "check_all", "grade"]
'''

KIT_SUBPACKAGE_INIT = '"""The student kit\'s runtime and its stored public cases (data/vectors.json)."""\n'

KIT_README = """# attnkit student kit

Instant feedback for the attnkit attention notebooks: `from autograder import check`, then
`check("causal_mask", causal_mask)` prints which public checks pass and, for a failing one, what went wrong
(in English, or Simplified Chinese with `ATTNKIT_LANG=zh`); `check("causal_mask", causal_mask, hint=True)` also
names the reproduced mistake and its idea, asking again (`hint=True` once more, or `hint=3`) says what to change in
words, and `check_all("03_causal_attention", globals())` sums up a whole notebook. The checks
compare your code's output with stored test vectors: this package holds no reference solutions and no hidden
checks. Your instructor grades your notebooks with the full attnkit.

attnkit 学生版工具包：`check(...)` 会把你的代码输出与预先保存的测试向量比较，立即给出公开检查的反馈。
本包不含参考答案和隐藏检查；老师用完整版 attnkit 为你的 notebook 评分。

## Install / 安装

The kit keeps the torch you already have when it is in the range its stored vectors are verified against
(TORCH_RANGE, Python PYTHON_RANGE); it never reinstalls torch then. Your instructor hands out one file,
WHEEL_NAME. Put it next to your notebook (Colab and Kaggle: upload it to the working folder), then:

工具包使用你环境里已有的 torch（只要版本在预存测试向量验证过的范围 TORCH_RANGE 内，Python PYTHON_RANGE），
不会重新安装 torch。老师会发给你一个文件 WHEEL_NAME。把它放在 notebook 旁边（Colab 和 Kaggle：上传到工作目录），然后：

- in a notebook cell (Colab, Kaggle, Jupyter, VS Code) / 在 notebook 单元格中：

      %pip install attnkit_student_kit-*.whl

- in a terminal (VS Code, your own venv or conda environment) / 在终端中：

      python -m pip install attnkit_student_kit-*.whl

Restart the kernel if torch was imported before, then `from autograder import check`. A torch outside the range
stops the import with a message naming both versions (English and Chinese), never with wrong verdicts.

如果之前已导入过 torch，请重启内核，然后 `from autograder import check`。
torch 不在范围内时，导入会停止并给出写明两个版本的提示（中英文），绝不会给出错误的判定。
"""


class KitBuildError(Exception):
    """OUT_DIR cannot take the kit (a file, or a folder that holds something else), or its wheel was not built."""


def _public_messages() -> dict[str, dict[str, str]]:
    """The catalogue without hidden checks' own titles and value-free (hidden) message forms (a preview's title,
    which quotes its hidden check's, is kept)."""
    hidden_titles = {f"{check.id}.title" for check in catalog.CHECKS if check.hidden}
    return {key: dict(text) for key, text in catalog.MESSAGES.items()
            if not key.endswith(".hidden") and key not in hidden_titles}


def misconception_record(misconception: Misconception) -> dict[str, Any]:
    """One entry of the table of mistakes as the kit stores it: its texts, and where it may be named and what proves
    it, so that the kit's gate (autograder.checking.results.named_mistake) shows what the full kit's shows."""
    m = misconception
    return {"id": m.id, "name": dict(m.name), "hint": dict(m.hint), "question": dict(m.question),
            "change": dict(m.change), "exercises": sorted(m.exercises),
            "evidence": sorted(kind.value for kind in m.evidence), "fails_every_case": m.fails_every_case}


def vectors_document(seed: int = DEFAULT_SEED) -> dict[str, Any]:
    """Every public case of every exercise, in course order, as the kit stores it."""
    checks = []
    with single_threaded():  # one thread: the same floating-point sums in every process, so the same bytes
        for exercise in EXERCISES:
            checks += [_stored_check(check, seed) for check in catalog.checks_of(exercise.id, include_hidden=False)]
    # The course's tables live beside the checks in the full kit: the kit gets them as data.
    exercises = [{"id": e.id, "notebook": e.notebook, "names": list(e.names), "title": dict(e.title),
                  "points": e.points} for e in EXERCISES]
    misconceptions = [misconception_record(m) for m in MISCONCEPTIONS]
    return {"format": vectors.FORMAT, "messages": _public_messages(), "exercises": exercises,
            "misconceptions": misconceptions, "checks": checks}


def _stored_check(check: Check, seed: int) -> dict[str, Any]:
    """A public check as the kit stores it: its probe and judge by name, its cases and their expectations."""
    try:
        judge = address_of(check.judge, JUDGE_ROLE)
    except TypeError as exc:
        raise KitBuildError(f"public check {check.id}: its judge must be a function of a folder's {JUDGE_ROLE} module, "
                            f"which the kit ships ({exc})") from None
    names = find_exercise(check.exercise).names
    recorded = [record_case(check, case, names) for case in cases_for(check, seed)]
    return {"id": check.id, "exercise": check.exercise, "points": check.points,
            "graded_later": catalog.graded_later(check),
            "probe": dataclasses.asdict(address_of(check.probe)), "judge": dataclasses.asdict(judge),
            "cases": [tensors.encode(r.case) for r in recorded],
            "expected": [tensors.encode(r.expected) for r in recorded]}


def shipped_modules(public_checks: Sequence[Check]) -> list[str]:
    """Paths (relative to autograder/) of every module the kit runs: its runtime, the public checks' probes and
    judges, and everything they import from autograder, with their packages' __init__; never NEVER_SHIPPED."""
    roots = [f"autograder.integrations.student_kit.runtime.{path.stem}" for path in sorted(RUNTIME_DIR.glob("*.py"))]
    for check in public_checks:
        roots += [address_of(check.probe).module, address_of(check.judge, JUDGE_ROLE).module]
    seen: set[str] = set()
    pending, check_code = list(roots), set(check_modules())
    while pending:
        name = pending.pop()
        if name in seen:
            continue
        if name.startswith(NEVER_SHIPPED) or name in check_code:
            raise KitBuildError(f"the kit would ship {name}, which holds the reference or the checks")
        seen.add(name)
        pending += _imported_modules(name)
    paths: set[str] = set()
    for name in seen:
        parts = name.split(".")[1:]
        paths.add("/".join(parts) + ".py" if (SOURCE_ROOT.joinpath(*parts).with_suffix(".py")).is_file()
                  else "/".join([*parts, "__init__.py"]))
        paths.update("/".join([*parts[:depth], "__init__.py"]) for depth in range(len(parts)))
    return sorted(path.removeprefix("/") for path in paths if path.removeprefix("/") not in OWN_INITS)


def _imported_modules(name: str) -> list[str]:
    """The autograder modules (and the reference, `attnkit.solutions`) that module `name` imports anywhere in its
    source."""
    parts = name.split(".")[1:]
    path = SOURCE_ROOT.joinpath(*parts).with_suffix(".py")
    if not path.is_file():
        path = SOURCE_ROOT.joinpath(*parts, "__init__.py")
    found: list[str] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
            found += [n for n in names if n.startswith(("autograder.", "attnkit.solutions")) and _is_module(n)]
        elif isinstance(node, ast.Import):
            found += [alias.name for alias in node.names
                      if alias.name.startswith(("autograder.", "attnkit.solutions"))]
    return found


def _is_module(name: str) -> bool:
    if name == "attnkit.solutions" or name.startswith("attnkit.solutions."):
        return True
    parts = name.split(".")[1:]
    return SOURCE_ROOT.joinpath(*parts).with_suffix(".py").is_file() or SOURCE_ROOT.joinpath(*parts).is_dir()


def kit_init(supported: TorchRange = SUPPORTED) -> str:
    """The kit's autograder/__init__.py, refusing a torch outside `supported` before anything else."""
    return KIT_INIT.replace("LOWEST", repr(supported.lowest)).replace("BELOW", repr(supported.below))


def kit_pyproject(supported: TorchRange = SUPPORTED) -> str:
    """The kit's pyproject.toml: a torch range, not a pin, so that `pip install` keeps the learner's torch when it is
    in the range the stored vectors are verified against (runtime/torch_range.py; another range only for
    devtools/kit_torch_matrix.py, which measures the releases around it)."""
    version = importlib.metadata.version("attnkit")
    if not supported.admits(torch.__version__):  # the vectors are computed with this torch: it must be in the range
        raise KitBuildError(f"torch {torch.__version__} builds the vectors, but the kit declares "
                            f"{supported.requirement()}: build with a torch in that range")
    return f"""[build-system]
requires = ["setuptools>=61"]
build-backend = "setuptools.build_meta"

[project]
name = "{PACKAGE_NAME}"
version = "{version}"
description = "attnkit's student kit: instant feedback from stored public test vectors, no reference inside"
readme = "README.md"
requires-python = "{REQUIRES_PYTHON}"
dependencies = ["{supported.requirement()}", "numpy"]

[tool.setuptools.packages.find]
include = ["autograder*"]

[tool.setuptools.package-data]
"autograder.integrations.student_kit" = ["data/*.json", "data/checks/*.json"]
"""


def wheel_name() -> str:
    """The file `python -m build --wheel` makes of the kit (a pure-Python wheel, any platform)."""
    version = importlib.metadata.version("attnkit")
    return f"{PACKAGE_NAME.replace('-', '_')}-{version}-py3-none-any.whl"


def kit_readme(supported: TorchRange = SUPPORTED) -> str:
    return (KIT_README.replace("TORCH_RANGE", supported.requirement())
            .replace("PYTHON_RANGE", REQUIRES_PYTHON).replace("WHEEL_NAME", wheel_name()))


def kit_files(seed: int = DEFAULT_SEED, supported: TorchRange = SUPPORTED) -> dict[str, bytes]:
    """{relative path: bytes} of the whole kit."""
    files = {
        "pyproject.toml": kit_pyproject(supported).encode(),
        "README.md": kit_readme(supported).encode(),
        "autograder/__init__.py": kit_init(supported).encode(),
        f"{KIT_DIR}/__init__.py": KIT_SUBPACKAGE_INIT.encode(),
    }
    public = [check for exercise in EXERCISES for check in catalog.checks_of(exercise.id, include_hidden=False)]
    for relative in shipped_modules(public):
        files[f"autograder/{relative}"] = (SOURCE_ROOT / relative).read_bytes()
    for relative, document in vectors.split_document(vectors_document(seed)).items():
        text = json.dumps(document, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
        files[f"{KIT_DIR}/data/{relative}"] = (text + "\n").encode()
    return files


def build(out_dir: str | os.PathLike[str], seed: int = DEFAULT_SEED,
          supported: TorchRange = SUPPORTED) -> dict[str, int]:
    """Write the kit into out_dir (created, or replaced when it holds an earlier kit); {path: size in bytes}."""
    out_dir = Path(out_dir)
    if out_dir.exists() and not out_dir.is_dir():
        raise KitBuildError(f"{out_dir} is a file, not a folder")
    if out_dir.is_dir() and any(out_dir.iterdir()) and not _is_kit(out_dir):
        raise KitBuildError(f"{out_dir} is not empty and holds no earlier student kit: choose an empty or new folder")
    files = kit_files(seed, supported)
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    # Written next to out_dir first, then swapped in: an interrupted build never leaves half a kit.
    staging = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.", dir=out_dir.parent))
    try:
        for relative, content in files.items():
            path = staging / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(content)
        if out_dir.exists():
            shutil.rmtree(out_dir)
        staging.rename(out_dir)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return {relative: len(content) for relative, content in files.items()}


def build_wheel(dist_dir: str | os.PathLike[str], seed: int = DEFAULT_SEED,
                supported: TorchRange = SUPPORTED) -> Path:
    """Build the kit and make its wheel in dist_dir with `python -m build` (the `build` package, no isolation: the
    running environment's setuptools, no download); the wheel's path. What the build prints is kept from the
    caller's terminal (setuptools' own notes: "byte-compiling is disabled"); a failed build raises KitBuildError
    with its last lines, which say why."""
    dist_dir = Path(dist_dir).resolve()
    dist_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="attnkit-student-kit-") as scratch:
        kit = Path(scratch) / "kit"
        build(kit, seed, supported)
        built = subprocess.run([sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(dist_dir),
                                str(kit)], check=False, cwd=scratch, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True, errors="replace")
    if built.returncode != 0:
        tail = "\n".join(built.stdout.rstrip().splitlines()[-BUILD_TAIL_LINES:])
        raise KitBuildError(f"python -m build failed with exit code {built.returncode}; its last lines:\n{tail}")
    wheel = dist_dir / wheel_name()
    if not wheel.is_file():
        raise KitBuildError(f"python -m build made no {wheel.name} in {dist_dir}")
    return wheel


def main(argv: Sequence[str] | None = None) -> int:
    """`python -m autograder.integrations.student_kit.build DIST_DIR`: the kit's wheel in DIST_DIR (make kit-wheel)."""
    parser = argparse.ArgumentParser(prog="python -m autograder.integrations.student_kit.build",
                                     description="build the student kit's wheel (python -m build) into DIST_DIR")
    parser.add_argument("dist", type=Path, metavar="DIST_DIR")
    args = parser.parse_args(argv)
    print(build_wheel(args.dist))
    return 0


def _is_kit(folder: Path) -> bool:
    pyproject = folder / "pyproject.toml"
    return pyproject.is_file() and f'name = "{PACKAGE_NAME}"' in pyproject.read_text(encoding="utf-8", errors="replace")


if __name__ == "__main__":
    sys.exit(main())
