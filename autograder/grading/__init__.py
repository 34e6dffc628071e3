"""Stage 5, grading: notebooks and whole classes (resumable, sharded), with progress."""

__all__: list[str] = []
