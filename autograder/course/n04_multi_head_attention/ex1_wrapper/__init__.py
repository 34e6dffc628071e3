"""The exercise folder of MultiHeadAttentionWrapper and the two-dimensional wrapper (book exercise 3.2): probe.py (run
by the grading child), judge.py (shipped in the student kit), declaration.py (its checks, messages and known
mistakes)."""

__all__: list[str] = []
