"""Malformed notebooks for the tests that no file stops a class: hypothesis strategies and a fixed, seeded set.

`documents()` draws JSON documents shaped like nbformat 3 and 4 notebooks in which any level may be broken: nulls,
wrong types, cells as a dict, sources as lists of non-strings, metadata as a list, nbformat as a string, worksheets
whose cells are null, grade ids that are numbers or lists, deep nesting. `SEEDED` is a list of byte strings a
class test hands in (the issue's 36 bytes first), drawn once from a seeded generator so every run uses the same.
"""

import json
import random

from hypothesis import strategies as st

from autograder.course.exercises import EXERCISES, NOTEBOOKS

THE_36_BYTES = b'{"worksheets": [{"cells": null}]}'

JSON_LEAF = st.one_of(st.none(), st.booleans(), st.integers(-2**70, 2**70), st.floats(allow_nan=False),
                      st.text(max_size=20))
ANY_JSON = st.recursive(JSON_LEAF, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                            st.dictionaries(st.text(max_size=8), inner, max_size=4)),
                        max_leaves=20)
GRADE_IDS = [f"{prefix}{exercise.id}" for exercise in EXERCISES for prefix in ("test_", "solution_")]


def _or_broken(value: st.SearchStrategy) -> st.SearchStrategy:
    """`value` most of the time, anything else (a null, a list, a number...) some of the time."""
    return st.one_of(value, value, ANY_JSON)


NBGRADER = st.fixed_dictionaries({}, optional={
    "grade_id": _or_broken(st.sampled_from(GRADE_IDS)),
    "solution": _or_broken(st.booleans()),
    "grade": _or_broken(st.booleans()),
    "locked": _or_broken(st.booleans()),
    "points": _or_broken(st.integers(0, 10)),
})
SOURCE = _or_broken(st.one_of(st.text(max_size=30), st.lists(_or_broken(st.text(max_size=10)), max_size=4)))
CELL = st.fixed_dictionaries({}, optional={
    "cell_type": _or_broken(st.sampled_from(["code", "markdown", "raw", "heading"])),
    "source": SOURCE,
    "input": SOURCE,  # nbformat 3's code
    "metadata": _or_broken(st.fixed_dictionaries({}, optional={"nbgrader": _or_broken(NBGRADER)})),
    "outputs": _or_broken(st.lists(ANY_JSON, max_size=2)),
    "id": _or_broken(st.text(max_size=8)),
})
CELLS = _or_broken(st.one_of(st.lists(_or_broken(CELL), max_size=6), st.dictionaries(st.text(max_size=4), CELL,
                                                                                     max_size=3)))
NBFORMAT = _or_broken(st.sampled_from([3, 4]))
NOTEBOOK_4 = st.fixed_dictionaries({}, optional={"cells": CELLS, "nbformat": NBFORMAT, "nbformat_minor": NBFORMAT,
                                                 "metadata": _or_broken(st.dictionaries(st.text(max_size=4),
                                                                                        ANY_JSON, max_size=2))})
NOTEBOOK_3 = st.fixed_dictionaries({}, optional={"worksheets": _or_broken(st.lists(
    _or_broken(st.fixed_dictionaries({}, optional={"cells": CELLS, "metadata": ANY_JSON})), max_size=3)),
    "nbformat": NBFORMAT, "metadata": ANY_JSON})


def documents() -> st.SearchStrategy:
    """A JSON document (as Python data) shaped like a notebook, broken anywhere, or any JSON at all."""
    return st.one_of(NOTEBOOK_4, NOTEBOOK_3, st.fixed_dictionaries({"cells": CELLS, "worksheets": ANY_JSON}),
                     ANY_JSON)


# Files no JSON strategy draws: not JSON, or JSON that breaks the parser (depth, huge numbers, encodings).
RAW = [
    b"", b"   \n", b"null", b"[]", b"{}", b'{"cells": {}}', b'{"cells": "abc"}', b'{"cells": [null, 1, "x", []]}',
    b"{" * 100_000, b"[" * 100_000 + b"]" * 100_000, b'{"cells": [' + b"1" * 10_000 + b"]}",
    b'{"cells": NaN}', b"\xef\xbb\xbf{}", '{"cells": []}'.encode("utf-16"), b"\xff\xfe\x00garbage",
    b'{"cells": [{"cell_type": "code", "source": "\xed\xa0\x80"}]}',  # a surrogate, encoded
    b'{"cells": [{"cell_type": "code", "source": "\\ud800x = 1"}]}',  # a lone surrogate, escaped
    b'{"cells": [' + b'{"cell_type": "code", "source": [' * 2000 + b"]}" * 2000 + b"]}",
]


def _seeded_documents(count: int, seed: int) -> list[bytes]:
    """`count` broken notebooks from a seeded generator: the same list on every run (no hypothesis database)."""
    rng = random.Random(seed)
    kinds = [None, 1, "x", [], {}, [None], ["a", 1, None], {"cells": None}, [{"cells": None}]]
    found = []
    for _ in range(count):
        cell = {"cell_type": rng.choice(["code", "markdown", None, 3, ["code"]]),
                "source": rng.choice(["x = 1", ["x = ", 1, None], None, {"a": "b"}]),
                "metadata": rng.choice([{"nbgrader": {"grade_id": rng.choice(GRADE_IDS + kinds)}}, [], None,
                                        {"nbgrader": rng.choice(kinds)}])}
        if rng.random() < 0.5:
            document = {"worksheets": rng.choice([[{"cells": rng.choice([None, [cell], {"0": cell}])}],
                                                  [None, {"cells": [cell, None]}], None, "x"]),
                        "nbformat": rng.choice([3, "3", None])}
        else:
            document = {"cells": rng.choice([[cell, rng.choice(kinds)], {"0": cell}, None, cell]),
                        "nbformat": rng.choice([4, "4", [4], None]), "metadata": rng.choice([{}, [], None])}
        found.append(json.dumps(document).encode())
    return found


SEEDED = [THE_36_BYTES, *RAW, *_seeded_documents(12, seed=40)]
NB01 = NOTEBOOKS[0]
