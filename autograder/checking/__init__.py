"""Stage 1, checking: probe the student's code, judge the data against the reference, render the verdict."""

__all__: list[str] = []
