"""The notebook a file name stands for: `normalised_name(stem)`, for autograder.grading.intake.

Students hand in notebooks under names their browser or file manager chose: a second download is
`01_attention_without_weights (1).ipynb`, a copy made in Jupyter `01_attention_without_weights-Copy1.ipynb`,
and some retype the name with capitals. Once case, separators and such copy suffixes are set aside, each
stands for `01_attention_without_weights`; which of several such files is graded is autograder.grading.intake's
decision.
"""

import re

__all__ = ["normalised_name"]

# Suffixes that downloads and copies add to a name, removed from the end one at a time.
COPY_SUFFIXES = (
    re.compile(r"[\s_]*\(\d+\)$"),  # "name (1)", "name(2)": a browser's second download
    re.compile(r"[\s_-]*-?[\s_]*copy\d*$"),  # "name-Copy1" (Jupyter), "name - Copy" (Windows), "name copy" (macOS)
)
SEPARATORS = re.compile(r"[\s\-.]+")


def normalised_name(stem: str) -> str:
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
