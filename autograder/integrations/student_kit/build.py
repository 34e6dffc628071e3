"""`attnkit student-kit build OUT_DIR`: write the student kit, an installable package without the reference.

OUT_DIR gets pyproject.toml, README.md and a top-level `autograder` package: `from autograder import check`
works as in the release notebooks. It holds the reference-free modules shared with the live kit (copied
byte for byte), the kit's runtime (autograder/integrations/student_kit/runtime) and the stored public cases
(autograder/integrations/student_kit/data/vectors.json). Same sources, same bytes: every build writes identical files.
"""

import importlib.metadata
import json
import shutil
import tempfile
from pathlib import Path

import torch

from autograder.course import catalog
from autograder.course.checks.student_kit_recording import record_case
from autograder.course.exercises import EXERCISES
from autograder.course.misconceptions import MISCONCEPTIONS
from autograder.integrations.student_kit.runtime import tensors, vectors
from autograder.running.runner import DEFAULT_SEED, cases_for, single_threaded

PACKAGE_NAME = "attnkit-student-kit"
SOURCE_ROOT = Path(__file__).resolve().parents[2]  # the full kit's autograder/
# Modules of the full kit that need neither the checks nor the reference: the kit runs them unchanged, at the
# same paths (with their packages' __init__), so their imports work alike in both kits.
SHARED_MODULES = ("checking/__init__.py", "checking/check_types.py", "checking/compare.py", "checking/diagnosis.py",
                  "checking/feedback.py", "checking/judging.py", "checking/probing.py", "checking/results.py",
                  "i18n.py", "integrations/__init__.py", "safe_text.py")
KIT_DIR = "autograder/integrations/student_kit"
RUNTIME_DIR = SOURCE_ROOT / "integrations" / "student_kit" / "runtime"

KIT_INIT = '''"""attnkit's student kit: `check(...)` gives instant feedback on the public checks from stored vectors.

It holds no reference solutions and no hidden checks: your instructor grades with the full attnkit.
"""

from autograder.integrations.student_kit.runtime.notebook import check, grade

__all__ = ["check", "grade"]
'''

KIT_SUBPACKAGE_INIT = '"""The student kit\'s runtime and its stored public cases (data/vectors.json)."""\n'

KIT_README = """# attnkit student kit

Instant feedback for the attnkit attention notebooks: `from autograder import check`, then
`check("causal_mask", causal_mask)` prints which public checks pass and, for a failing one, what went wrong
(in English, or Simplified Chinese with `ATTNKIT_LANG=zh`). The checks compare your code's output with stored
test vectors: this package holds no reference solutions and no hidden checks. Your instructor grades your
notebooks with the full attnkit.

attnkit 学生版工具包：`check(...)` 会把你的代码输出与预先保存的测试向量比较，立即给出公开检查的反馈。
本包不含参考答案和隐藏检查；老师用完整版 attnkit 为你的 notebook 评分。

    pip install .
"""


class KitBuildError(Exception):
    """OUT_DIR cannot take the kit (a file, or a folder that holds something else)."""


def public_messages():
    """The catalogue without hidden checks' titles and value-free (hidden) message forms."""
    hidden_ids = {check.id for check in catalog.CHECKS if check.hidden}
    return {key: dict(text) for key, text in catalog.MESSAGES.items()
            if not key.endswith(".hidden") and key.removesuffix(".title") not in hidden_ids}


def vectors_document(seed=DEFAULT_SEED):
    """Every public case of every exercise, in course order, as the kit stores it."""
    checks = []
    with single_threaded():  # one thread: the same floating-point sums in every process, so the same bytes
        for exercise in EXERCISES:
            checks += [stored_check(check, seed) for check in catalog.checks_of(exercise.id, include_hidden=False)]
    # The course's tables live beside the checks in the full kit: the kit gets them as data.
    exercises = [{"id": e.id, "notebook": e.notebook, "names": list(e.names), "title": dict(e.title),
                  "points": e.points} for e in EXERCISES]
    misconceptions = [{"id": m.id, "name": dict(m.name), "hint": dict(m.hint)} for m in MISCONCEPTIONS]
    return {"format": vectors.FORMAT, "messages": public_messages(), "exercises": exercises,
            "misconceptions": misconceptions, "checks": checks}


def stored_check(check, seed):
    recorded = [record_case(check, case) for case in cases_for(check, seed)]
    kinds = {kind for kind, _ in recorded}
    if len(kinds) != 1:
        raise ValueError(f"{check.id}: cases of different kinds {sorted(kinds)}")
    return {"id": check.id, "exercise": check.exercise, "points": check.points, "kind": kinds.pop(),
            "cases": [tensors.encode(case) for _, case in recorded]}


def kit_pyproject():
    version = importlib.metadata.version("attnkit")
    torch_version = torch.__version__.split("+")[0]  # the vectors were computed with this torch: same tolerances
    return f"""[build-system]
requires = ["setuptools>=61"]
build-backend = "setuptools.build_meta"

[project]
name = "{PACKAGE_NAME}"
version = "{version}"
description = "attnkit's student kit: instant feedback from stored public test vectors, no reference inside"
readme = "README.md"
requires-python = ">=3.11"
dependencies = ["torch=={torch_version}", "numpy", "matplotlib"]

[tool.setuptools.packages.find]
include = ["autograder*"]

[tool.setuptools.package-data]
"autograder.integrations.student_kit" = ["data/*.json"]
"""


def kit_files(seed=DEFAULT_SEED):
    """{relative path: bytes} of the whole kit."""
    files = {
        "pyproject.toml": kit_pyproject().encode(),
        "README.md": KIT_README.encode(),
        "autograder/__init__.py": KIT_INIT.encode(),
        f"{KIT_DIR}/__init__.py": KIT_SUBPACKAGE_INIT.encode(),
    }
    for relative in SHARED_MODULES:
        files[f"autograder/{relative}"] = (SOURCE_ROOT / relative).read_bytes()
    for path in sorted(RUNTIME_DIR.glob("*.py")):
        files[f"{KIT_DIR}/runtime/{path.name}"] = path.read_bytes()
    document = json.dumps(vectors_document(seed), ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    files[f"{KIT_DIR}/data/{vectors.FILE_NAME}"] = (document + "\n").encode()
    return files


def build(out_dir, seed=DEFAULT_SEED):
    """Write the kit into out_dir (created, or replaced when it holds an earlier kit); {path: size in bytes}."""
    out_dir = Path(out_dir)
    if out_dir.exists() and not out_dir.is_dir():
        raise KitBuildError(f"{out_dir} is a file, not a folder")
    if out_dir.is_dir() and any(out_dir.iterdir()) and not _is_kit(out_dir):
        raise KitBuildError(f"{out_dir} is not empty and holds no earlier student kit: choose an empty or new folder")
    files = kit_files(seed)
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


def _is_kit(folder):
    pyproject = folder / "pyproject.toml"
    return pyproject.is_file() and f'name = "{PACKAGE_NAME}"' in pyproject.read_text(encoding="utf-8", errors="replace")
