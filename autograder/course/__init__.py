"""Stage 2, the course: its exercises, their checks and messages, the misconceptions and the reference variants."""

__all__: list[str] = []
