"""Stage 6, integrations: nbgrader (course directories, release) and Gradescope (bundle, run_autograder)."""
