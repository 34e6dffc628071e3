"""The mutation score (devtools.mutation), in small: a stable sample of cosmic-ray's mutants of solutions/ must lose
points, and every mutant listed as equivalent must behave like the reference.

The full run is a benchmark (`make mutation`); this keeps its two promises honest inside `make test`: a check that
stops killing a sampled mutant fails here, and so does an entry of devtools/equivalent_mutants.toml that is not
equivalent (a differential run against solutions/ on random inputs finds a difference) or no longer exists.
"""

import sys

import pytest

from attnkit import solutions
from devtools import differential
from devtools import mutants as mutant_source
from devtools.mutation import IMPORT_ERROR, KILLED, UNUSED, load_equivalents, run_mutant, sample

EQUIVALENTS = load_equivalents()
SAMPLE_SIZE = 40


@pytest.fixture(scope="module")
def mutants_by_key():
    return {mutant.key: mutant for mutant in mutant_source.all_mutants()}


@pytest.fixture(scope="module")
def sampled():
    return sample(mutant_source.all_mutants(), EQUIVALENTS, SAMPLE_SIZE)


@pytest.mark.slow
def test_keys_are_unique_and_every_listed_equivalent_is_still_generated(mutants_by_key):
    assert len(mutants_by_key) == len(mutant_source.all_mutants())
    stale = sorted(set(EQUIVALENTS) - set(mutants_by_key))
    assert not stale, f"listed as equivalent but no longer generated (update the list): {stale}"


@pytest.mark.parametrize("key", sorted(EQUIVALENTS))
@pytest.mark.slow
def test_a_listed_equivalent_gives_the_reference_outputs(key, mutants_by_key):
    mutant = mutants_by_key.get(key)
    assert mutant is not None, f"{key} is no longer generated"
    assert differential.observed_names(mutant), f"{key}: no exercise uses its line, nothing to compare"
    assert differential.difference(mutant) is None


@pytest.mark.slow
def test_the_sample_is_stable_and_spread_over_every_solution_file(sampled):
    assert abs(len(sampled) - SAMPLE_SIZE) <= len(mutant_source.solution_files())
    assert {mutant.file for mutant in sampled} == set(mutant_source.solution_files())
    assert [m.key for m in sampled] == [m.key for m in sample(mutant_source.all_mutants(), EQUIVALENTS, SAMPLE_SIZE)]
    assert not {mutant.key for mutant in sampled} & set(EQUIVALENTS)


@pytest.mark.slow
def test_every_sampled_mutant_loses_points(sampled):
    survivors = []
    for mutant in sampled:
        outcome = run_mutant(mutant)
        assert outcome.status not in (UNUSED, IMPORT_ERROR), mutant.key  # the sample holds only counted mutants
        if outcome.status != KILLED:
            survivors.append(f"{mutant.where} {mutant.operator}: {mutant.original_line} -> {mutant.mutated_line} "
                             f"({mutant.key}, in {', '.join(outcome.exercises)})")
    assert not survivors, "mutants that keep full marks:\n" + "\n".join(survivors)


@pytest.mark.slow
def test_the_differential_run_tells_sampled_mutants_from_the_reference(sampled):
    # Without this, an observer that sees nothing would let any mutant pass as equivalent.
    one_per_file = {}
    for mutant in sampled:
        one_per_file.setdefault(mutant.file, mutant)
    same = [mutant.key for mutant in one_per_file.values() if differential.difference(mutant) is None]
    assert not same, f"killed mutants the differential run cannot tell from the reference: {same}"


def test_keys_survive_unrelated_edits():
    file = "n01_attention_without_weights.py"
    source = mutant_source.solution_files()[file]
    edited = '"""An edit elsewhere."""\n\n# moved every line down\n' + source.split("\n", 1)[1]
    assert [m.key for m in mutant_source.file_mutants(file, edited)] == \
        [m.key for m in mutant_source.file_mutants(file, source)]


@pytest.mark.slow
def test_a_mutant_is_loaded_in_memory_and_leaves_the_reference_alone(mutants_by_key):
    key = "n01_attention_without_weights.py:softmax_stable:core/ReplaceBinaryOperator_Sub_Add:eb2e8f177a"
    loaded = mutant_source.load(mutants_by_key[key])
    assert loaded["n01_attention_without_weights.py"]["softmax_stable"] is not solutions.softmax_stable
    assert solutions.softmax_stable.__module__ == "attnkit.solutions.n01_attention_without_weights"
    assert not [name for name in sys.modules if name.startswith("mutant_")]
    # The wrapper's heads are the mutated file's CausalAttention, not the reference's.
    loaded = mutant_source.load(next(m for m in mutants_by_key.values() if m.definition == "CausalAttention.forward"))
    causal = loaded["n03_causal_attention.py"]["CausalAttention"]
    assert loaded["n04_multi_head_attention.py"]["CausalAttention"] is causal
    assert loaded["n03_causal_attention.py"]["CausalAttention"] is not solutions.CausalAttention


def test_lines_map_to_the_exercises_that_use_them():
    usage = mutant_source.usage()
    source = mutant_source.solution_files()["n04_multi_head_attention.py"]
    lines = source.splitlines()

    def exercises_at(text):
        line_number = next(i for i, line in enumerate(lines, 1) if text in line)
        return usage.get(("n04_multi_head_attention.py", line_number), set())

    # Book exercise 3.2 builds its answer with the wrapper, so the wrapper's lines are its lines too.
    assert exercises_at("CausalAttention(d_in, d_out, context_length, dropout, qkv_bias)") == {
        "mha_wrapper", "two_dimensional_wrapper"}
    assert exercises_at("return MultiHeadAttentionWrapper(d_in, 1,") == {"two_dimensional_wrapper"}
    assert exercises_at("return x.transpose(1, 2)") >= {"split_heads", "multi_head_attention",
                                                                 "padding_mask"}
    assert exercises_at("q = self.q_proj(x)") == set()  # MultiHeadAttentionSingle: no exercise uses it
