"""One intra-op thread while checks run: they use tiny tensors, where a second thread only adds waiting."""

import contextlib
from collections.abc import Iterator

import torch

__all__ = ["single_threaded"]


@contextlib.contextmanager
def single_threaded() -> Iterator[None]:
    """Checks use tiny tensors: a second intra-op thread only adds waiting (10x slower on a busy 2-core box).

    The student's own setting is restored afterwards.
    """
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)
