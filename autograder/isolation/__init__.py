"""Stage 4, isolation: plan a notebook and run its code and probes in a confined child process."""

__all__: list[str] = []
