"""Stage 5, grading: notebooks and whole classes (resumable, sharded), with progress."""
