"""The exercise folder of MultiHeadAttention and its padding mask: probe.py (run by the grading child), judge.py
(shipped in the student kit), declaration.py (its checks, messages and known mistakes)."""

__all__: list[str] = []
