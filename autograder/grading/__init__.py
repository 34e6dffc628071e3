"""Stage 4, grading: notebooks and whole classes (resumable, sharded), with progress."""
