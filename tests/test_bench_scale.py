"""`python -m devtools.bench --scale`'s parts: the peak memory it reads of a running grader, and its verdict on the
cost per notebook (the whole run is the bench itself: minutes, not a test)."""

import sys

import pytest

from devtools.bench import ScalePoint, format_scale, graded_with_peak

MB = 2**20


def test_the_peak_is_read_from_the_running_process():
    _, small = graded_with_peak([sys.executable, "-c", "import time; time.sleep(0.3)"])
    _, large = graded_with_peak([sys.executable, "-c", "import time; block = bytearray(300 * 2**20); time.sleep(0.3)"])
    assert 300 * MB <= large and small < 100 * MB


def test_a_grader_that_fails_is_an_error_with_its_words():
    with pytest.raises(RuntimeError, match="the grader failed .1.:\n.*no such class"):
        graded_with_peak([sys.executable, "-c", "import sys; sys.exit('no such class')"], "the grader")


def test_a_cost_per_notebook_that_grows_is_called_so():
    flat = [ScalePoint(12, 6.0, 300 * MB), ScalePoint(120, 30.0, 310 * MB), ScalePoint(1200, 250.0, 330 * MB)]
    growing = [ScalePoint(12, 6.0, 300 * MB), ScalePoint(120, 30.0, 310 * MB), ScalePoint(1200, 400.0, 330 * MB)]
    assert "flat or falling" in format_scale(flat) and "GROWING" not in format_scale(flat)
    assert "GROWING" in format_scale(growing)
    assert "0.208" in format_scale(flat)  # 250 s / 1,200 notebooks
