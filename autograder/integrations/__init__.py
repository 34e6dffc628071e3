"""Stage 6, integrations: nbgrader (course directories, release), Gradescope (bundle, run_autograder), Canvas and
Moodle (gradebook import files, `attnkit export`)."""

__all__: list[str] = []
