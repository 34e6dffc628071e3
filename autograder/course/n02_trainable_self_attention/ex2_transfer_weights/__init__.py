"""The exercise folder of load_v2_weights_into_v1: probe.py (run by the grading child), judge.py (shipped in the student
kit), declaration.py (its checks, messages and known mistakes)."""

__all__: list[str] = []
