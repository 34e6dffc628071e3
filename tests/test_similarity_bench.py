"""The synthetic class of `make similarity-bench` at full size (devtools.similarity_bench.measure): 3,000 students,
10 planted pairs of each kind (verbatim, renamed and reordered, one rare wrong output) and 10 honest pairs that copy
the same book passages. Every planted pair must rank above every honest pair and be flagged, and at most 5 honest
pairs may be flagged at the default threshold. The run's time is printed, never asserted."""

import pytest

from devtools.similarity_bench import measure

pytestmark = pytest.mark.slow

MAX_HONEST_FLAGGED = 5


def test_3000_students_every_planted_pair_on_top_and_few_honest_pairs_flagged(tmp_path, capsys):
    result = measure(3000, tmp_path)
    with capsys.disabled():  # the figure docs/similarity.md quotes
        print(f"\ntest_similarity_bench: {result.students} students in {result.seconds:.0f} s; "
              f"{result.flagged} flagged ({result.flagged_planted} of {result.planted} planted, "
              f"{result.flagged_honest} honest); highest honest score {result.highest_honest:.3f}")
    assert result.planted == 30
    assert result.planted_on_top, result.planted_ranks
    assert result.flagged_planted == result.planted, result
    assert result.flagged_honest <= MAX_HONEST_FLAGGED, result
