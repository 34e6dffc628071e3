"""Running an exercise's checks against the catalogue: probe then judge (runner), the words and pictures bound to
the live catalogue (rendering), and `check(...)`/`grade(...)` for notebook cells (in_notebook).

Above autograder.course (it needs the catalogue), below isolation and grading, which use it.
"""
