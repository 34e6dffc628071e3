"""The exercise folder of the two masking routes (renormalised weights, -inf scores): probe.py (run by the grading
child), judge.py (shipped in the student kit), declaration.py (its checks, messages and known mistakes)."""

__all__: list[str] = []
