"""Stage 3, running: an exercise's checks against the catalogue, probe then judge (runner), the words and pictures
bound to the live catalogue (rendering), and the one notebook runtime, `check(...)`/`check_all(...)`/`grade(...)`
for notebook cells (notebook_runtime, shipped in the student kit; in_notebook plugs in the reference's expectations).

Above autograder.course (it needs the catalogue), below isolation and grading, which use it.
"""

__all__: list[str] = []
