"""A full disk while writing the grades: nobody's fault, so the run stops and resumes later (exit status 3).

Light on purpose: the command line catches it without importing the checks.
"""

import os
from pathlib import Path

__all__ = ["OutputDiskFull"]


class OutputDiskFull(Exception):
    """The disk that holds OUT_DIR is full: the run must stop (no student is to blame), and be run again."""

    def __init__(self, out_dir: str | os.PathLike[str], error: OSError) -> None:
        super().__init__(out_dir, error)
        self.out_dir, self.error = Path(out_dir), error

    def __str__(self) -> str:
        where = f" writing {Path(self.error.filename).name}" if self.error.filename else ""
        return (f"the disk holding {self.out_dir} is full ({self.error.strerror or 'no space left'}{where}); free "
                "space and run the same command again: graded students are kept")
