"""Stage 6, review, after the deadline: `attnkit similarity`, pairs whose code or wrong outputs look copied.

Evidence for a human to read, never a verdict: nothing here changes a grade. `run.run_similarity` is the entry.
"""

__all__: list[str] = []
