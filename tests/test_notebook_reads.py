"""The notebook's integers a learner's code reads instead of its input's sizes (issue 58, 12n's nz-mh-05 and
nz-ma-08): proven by the failing case run again with them changed, told once for every check they explain, in the
kit as in the live runtime; code that reads none, or reads one that changes nothing on the case, is told nothing of
them."""

import sys
import types

import pytest
import torch

from autograder.checking.notebook_reads import NotebookRead, notebook_ints_read, reads_change_the_run
from autograder.checking.probing import run_probe
from autograder.integrations.student_kit.build import vectors_document
from autograder.integrations.student_kit.runtime.vectors import vectors_from_document
from tests.test_one_cause_proven import printed

READS = {"en": "what your code reads — your code reads the notebook's own variables b (2) and num_tokens (6)",
         "zh": "你的代码读取了什么：你的代码读取了 notebook 自己的变量 b（2）和num_tokens（6）"}


def notebook(source):
    """The learner's cell run in a namespace like the notebook's, where b and num_tokens were set from its input."""
    namespace = {"torch": torch, "b": 2, "num_tokens": 6, "seed": 123, "flag": True}
    exec(compile(source, "<cell>", "exec"), namespace)  # noqa: S102 - the test's own learner-style code
    return namespace


MERGE_WITH_NOTEBOOK_SIZES = notebook('''
def merge_heads(x):
    return x.transpose(1, 2).reshape(b, num_tokens, -1)
''')["merge_heads"]

MERGE_READING_AN_UNUSED_INT = notebook('''
def merge_heads(x):
    batch, heads, tokens, head_dim = x.shape
    if flag and seed > 1000:  # read, but changes nothing where seed is 123 or 124
        return x
    return x.transpose(1, 2).reshape(batch, tokens, heads * head_dim)[:, :, :-1]
''')["merge_heads"]


@pytest.fixture(scope="module")
def kit_vectors():
    return vectors_from_document(vectors_document())


def test_the_integers_read_are_the_globals_loaded_never_attributes_bools_or_subclasses():
    class Sized(int):
        pass

    namespace = notebook('''
class Attention(torch.nn.Module):
    def __init__(self, num_heads):
        super().__init__()
        self.num_heads = num_heads
    def forward(self, x):
        return x.view(b, self.num_heads, -1) if flag else [x for _ in range(num_tokens)]
''')
    namespace["num_heads"] = 4  # a global of that name the code never loads (it reads self.num_heads)
    assert notebook_ints_read([namespace["Attention"]]) == (NotebookRead("b", 2), NotebookRead("num_tokens", 6))
    namespace["b"] = Sized(2)
    assert notebook_ints_read([namespace["Attention"]]) == (NotebookRead("num_tokens", 6),)
    assert notebook_ints_read([torch.softmax, len]) == ()


def test_a_read_is_proven_only_where_changing_it_changes_the_run():
    x = torch.arange(24.0).reshape(1, 2, 3, 4)

    def probe(namespace, case):
        return {"output": namespace["merge_heads"](case)}

    def run(namespace):
        return run_probe(probe, namespace, x)

    assert reads_change_the_run(run, {"merge_heads": MERGE_WITH_NOTEBOOK_SIZES},
                                notebook_ints_read([MERGE_WITH_NOTEBOOK_SIZES]))
    unused = notebook_ints_read([MERGE_READING_AN_UNUSED_INT])
    assert unused == (NotebookRead("seed", 123),)
    assert not reads_change_the_run(run, {"merge_heads": MERGE_READING_AN_UNUSED_INT}, unused)
    assert not reads_change_the_run(run, {"merge_heads": MERGE_WITH_NOTEBOOK_SIZES}, ())
    assert MERGE_WITH_NOTEBOOK_SIZES.__globals__["b"] == 2  # the copies' globals changed, never the notebook's


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("kit", ["live", "kit"])
def test_code_reading_the_notebooks_sizes_is_told_so_once_for_every_check(kit, lang, monkeypatch, kit_vectors):
    text = printed(kit, kit_vectors, "merge_heads", MERGE_WITH_NOTEBOOK_SIZES, lang, monkeypatch, hint=3)
    failing = [line for line in text.splitlines() if line.startswith("  ✘")]
    assert len(failing) == 2, text  # one row told, the others folded under it
    assert text.count(READS[lang]) == 1, text
    assert ("no known mistake" not in text and "没有哪个已知的错误" not in text), text


def test_code_whose_read_changes_nothing_is_not_told_it(monkeypatch):
    text = printed("live", None, "merge_heads", MERGE_READING_AN_UNUSED_INT, "en", monkeypatch, hint=3)
    assert "✘" in text and "what your code reads" not in text, text


def test_a_class_that_refuses_to_be_subclassed_proves_nothing_and_breaks_nothing():
    namespace = notebook('''
class Attention(torch.nn.Module):
    def __init_subclass__(cls, **kwargs):
        raise TypeError("no subclasses")
    def forward(self, x):
        return x.view(b, num_tokens, -1)
''')

    def run(changed):  # never reached: no copy of the class can be made
        raise AssertionError("ran")

    reads = notebook_ints_read([namespace["Attention"]])
    assert reads == (NotebookRead("b", 2), NotebookRead("num_tokens", 6))
    assert not reads_change_the_run(run, {"Attention": namespace["Attention"]}, reads)


def test_a_library_function_or_a_huge_number_is_never_said_read_from_the_notebook(monkeypatch):
    library = types.ModuleType("attnkit_test_library")  # an imported module whose function reads its own int
    exec("WIDTH = 4\ndef merge_heads(x):\n    return x.reshape(-1, WIDTH)\n", vars(library))  # noqa: S102
    monkeypatch.setitem(sys.modules, library.__name__, library)
    assert notebook_ints_read([library.merge_heads]) == ()
    monkeypatch.delitem(sys.modules, library.__name__)
    assert notebook_ints_read([library.merge_heads]) == (NotebookRead("WIDTH", 4),)  # not imported: read
    namespace = notebook('''
def merge_heads(x):
    return x.reshape(huge, num_tokens, -1)
''')
    namespace["huge"] = 10 ** 5000  # no str() of it is even allowed
    assert notebook_ints_read([namespace["merge_heads"]]) == (NotebookRead("num_tokens", 6),)
