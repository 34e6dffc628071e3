"""The exercise folder of to_torch_multihead (our weights inside nn.MultiheadAttention): probe.py (run by the grading
child), judge.py (shipped in the student kit), declaration.py (its checks, messages and known mistakes)."""

__all__: list[str] = []
