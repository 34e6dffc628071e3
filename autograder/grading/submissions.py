"""Which file in a student's assignment folder is which notebook: `locate_notebooks(assignment_dir)`.

Students hand in notebooks under names their browser or file manager chose: a second download is
`01_attention_without_weights (1).ipynb`, a copy made in Jupyter `01_attention_without_weights-Copy1.ipynb`,
and some retype the name with capitals. The exact name always wins. Otherwise a file whose name is the
notebook's once case, separators and such copy suffixes are set aside is graded, provided it is the only
one: with two candidates nobody can tell which one the student meant, so the notebook counts as not
submitted and the reason lists the files that were there.
"""

import re
from dataclasses import dataclass
from pathlib import Path

from autograder.course.exercises import NOTEBOOKS
from autograder.safe_text import clean

# Suffixes that downloads and copies add to a name, removed from the end one at a time.
COPY_SUFFIXES = (
    re.compile(r"[\s_]*\(\d+\)$"),  # "name (1)", "name(2)": a browser's second download
    re.compile(r"[\s_-]*-?[\s_]*copy\d*$"),  # "name-Copy1" (Jupyter), "name - Copy" (Windows), "name copy" (macOS)
)
SEPARATORS = re.compile(r"[\s\-.]+")


@dataclass(frozen=True)
class Located:
    """Where one notebook of the assignment was found: `path` to grade (None: not submitted, `reason` says why)."""

    path: Path | None
    note: str = ""  # set when the file's name is not the expected one: what was graded instead
    reason: str = ""


def normalised_name(stem):
    """The notebook name a file stem stands for: lower case, copy suffixes removed, separators as underscores."""
    name = stem.strip().lower()
    changed = True
    while changed:
        changed = False
        for suffix in COPY_SUFFIXES:
            shorter = suffix.sub("", name)
            if shorter != name and shorter:
                name, changed = shorter, True
    return SEPARATORS.sub("_", name).strip("_")


def locate_notebooks(assignment_dir, notebooks=NOTEBOOKS):
    """{notebook: Located} for every notebook of the assignment, looking in `assignment_dir` only."""
    assignment_dir = Path(assignment_dir)
    folder_name = assignment_dir.name
    if not assignment_dir.is_dir():
        reason = f"not submitted (no {folder_name}/ folder)"
        return {notebook: Located(None, reason=reason) for notebook in notebooks}
    files = sorted(path for path in assignment_dir.iterdir()
                   if path.suffix.lower() == ".ipynb" and not path.name.startswith(".") and path.is_file())
    located = {}
    for notebook in notebooks:
        exact = assignment_dir / f"{notebook}.ipynb"
        candidates = [path for path in files if normalised_name(path.stem) == notebook]
        if exact.is_file():
            located[notebook] = Located(exact)
        elif len(candidates) == 1:
            [path] = candidates
            located[notebook] = Located(path, note=f"graded {clean(path.name)} as {notebook}.ipynb (no file of that "
                                                    "exact name was handed in)")
        else:
            reason = f"not submitted (no {folder_name}/{notebook}.ipynb"
            if len(candidates) > 1:
                reason += f"; {len(candidates)} files could be it, so none was graded"
            if files:
                reason += f"; the folder holds {', '.join(clean(path.name) for path in files)}"
            located[notebook] = Located(None, reason=reason + ")")
    return located
