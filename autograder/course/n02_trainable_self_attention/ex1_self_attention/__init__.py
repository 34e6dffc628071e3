"""The exercise folder of SelfAttention_v1 and SelfAttention_v2: probe.py (run by the grading child), judge.py (shipped
in the student kit), declaration.py (its checks, messages and known mistakes)."""

__all__: list[str] = []
