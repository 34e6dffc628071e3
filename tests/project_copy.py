"""A copy of the checkout, and an interpreter environment that imports it as installed.

The reference is installed as `attnkit.solutions` (setup.py maps the checkout's solutions/ there), so a copy on
PYTHONPATH alone would still import the checkout's own reference through its editable install. `installed` builds
the copy into a folder of its own with pip (a plain, non-editable install: about 3 s) and returns the environment
whose PYTHONPATH puts that folder first: `autograder` and `attnkit.solutions` are then the copy's.
"""

import os
import shutil
import subprocess
import sys
from pathlib import Path

COPIED = ("autograder", "solutions", "source", "release", "pyproject.toml", "setup.py", "README.md",
          "nbgrader_config.py")
IGNORED = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info", "build", ".ipynb_checkpoints")


def copy_checkout(root: Path, copy: Path) -> Path:
    """The parts of the checkout at `root` that importing, releasing and grading the course need, at `copy`."""
    copy.mkdir(parents=True, exist_ok=True)
    for name in COPIED:
        if (root / name).is_dir():
            shutil.copytree(root / name, copy / name, ignore=IGNORED)
        else:
            shutil.copy2(root / name, copy / name)
    return copy


def installed(copy: Path, target: Path) -> dict[str, str]:
    """Install `copy` (its packages only, no dependencies) into `target`; os.environ with `target` first on
    PYTHONPATH."""
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation",
                    "--no-index", "--target", str(target), str(copy)], check=True, capture_output=True, text=True)
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(target), os.environ.get("PYTHONPATH", "")]).rstrip(
        os.pathsep)}
