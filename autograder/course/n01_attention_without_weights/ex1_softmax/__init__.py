"""The exercise folder of softmax_naive and softmax_stable: probe.py (run by the grading child), judge.py (shipped in
the student kit), declaration.py (its checks, messages and known mistakes)."""

__all__: list[str] = []
