"""What the student kit runs in a student's kernel: stored public cases, probes, judges, feedback.

Nothing here imports `solutions`, the checks or the variants: expected outputs and the outputs of known
mistakes are data (vectors.json), produced by autograder.integrations.student_kit.build.
"""

__all__: list[str] = []
