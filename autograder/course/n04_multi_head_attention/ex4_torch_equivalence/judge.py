"""Judges of to_torch_multihead (our weights inside nn.MultiheadAttention): decide from the probe's data, the case and
the reference's expectations. Imports no reference or declaration: the student kit ships it as it is."""

from autograder.checking.check_types import Evidence, Verdict
from autograder.checking.compare import compare
from autograder.checking.expectations import Expectations
from autograder.checking.judging import (
    argument_changed,
    copied_weights_problem,
)
from autograder.course.n04_multi_head_attention.ex1_wrapper.probe import MHA_LAYERS
from autograder.course.n04_multi_head_attention.ex4_torch_equivalence.probe import (
    HANDED_BUFFERS,
    EquivalenceCase,
    EquivalenceRecord,
    equivalence_weights,
)
from autograder.course.shared.inputs import DTYPES

__all__ = ["judge_equivalence"]


def judge_equivalence(record: EquivalenceRecord, case: EquivalenceCase, expectations: Expectations) -> Verdict:
    """A ValueError where d_in != d_out; else our module's weights and mask left as they were, batch_first, sizes,
    dtype, every copied tensor, dropout, then the output. Expectations: output (our module's, with the case's
    weights)."""
    if "raised" in record:
        if record["raised"] == "ValueError":
            return Verdict(True)
        return Verdict(False, "torch_equivalence.no_value_error", {"got": record["raised"] or "nothing"})
    weights = equivalence_weights(case)  # rebuilt from the case once: their names, then their values
    handed = [f"mha.{name}" for name in (*weights, *HANDED_BUFFERS)]
    changed = argument_changed(record.get("inputs_changed"), "to_torch_multihead", handed, mistake=None)
    if changed is not None:
        return changed
    parts = module_parts_changed(record, handed)
    if parts is not None:
        return parts
    if not record["batch_first"]:
        return Verdict(False, "torch_equivalence.batch_first")
    if (record["embed_dim"], record["num_heads"]) != (case["d_model"], case["num_heads"]):
        sizes = {"embed_dim": record["embed_dim"], "num_heads": record["num_heads"], "d_out": case["d_model"],
                 "heads": case["num_heads"]}
        return Verdict(False, "torch_equivalence.sizes", sizes)
    if record["dtype"] != str(DTYPES[case["dtype"]]):
        return Verdict(False, "torch_equivalence.dtype",
                       {"got": record["dtype"], "expected": str(DTYPES[case["dtype"]])})
    problem = copied_weights_problem(record["state"], weights)
    if problem is not None:
        return problem
    if record["dropout"] is None:
        return Verdict(False, "torch_equivalence.dropout_not_a_rate", {"got": record.get("dropout_type", "?")})
    if abs(record["dropout"] - case["dropout"]) > 1e-9:
        return Verdict(False, "torch_equivalence.dropout")
    want = expectations["output"]
    verdict = compare(record.get("out"), want, message_key="torch_equivalence.values",
                      input_shape=(case["batch"], case["num_tokens"], case["d_model"]))
    if verdict.passed and record.get("shared"):
        return Verdict(False, "torch_equivalence.shares_memory", {"name": record["shared"][0]},
                       misconception="weights_shared_with_source", evidence=Evidence.FACT)  # storage compared
    return verdict


# The names a parameter added to or taken from the module could have and be said by name: its layers' weights and
# biases. The record is the child's, read as data: any other name is counted, never quoted.
_NAMEABLE_PARTS = frozenset(f"mha.{layer}.{kind}" for layer in MHA_LAYERS for kind in ("weight", "bias"))


def module_parts_changed(record: EquivalenceRecord, handed: list[str]) -> Verdict | None:
    """The verdict for parameters or buffers to_torch_multihead added to (a zero bias given to our bias-free layers)
    or took from the module it was handed, None where it holds the same ones. `handed`: the names it held before."""
    for removed, names in ((False, record.get("parts_added")), (True, record.get("parts_removed"))):
        if not isinstance(names, list) or not names:
            continue
        message = "argument.part_removed" if removed else "argument.part_added"
        said = [name for name in names if isinstance(name, str) and name in _NAMEABLE_PARTS
                and (name in handed) == removed]
        part = said[0].partition(".")[2] if said else "?"
        return Verdict(False, message if said else f"{message}_unnamed",
                       {"caller": "to_torch_multihead", "argument": "mha", "part": part, "count": len(names)})
    return None
