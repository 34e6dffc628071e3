"""One diagnosis per attempt: an exercise's failing checks read together, not one by one.

Each check's judge names a mistake only from its own cases (autograder.checking.results): where two variants of the
table give the learner's output on its cases, it names neither. A mistake one check proves (its variant, and no
other, reproduces that check's failure) is the attempt's: every other failing check whose failure that same
variant reproduces (the same outputs on every failing case, or the very error, numbers included), or on which the
reference with that mistake fails with the very same verdict (a property check: autograder.course.value_variants),
is explained by it and carries its name, so the table folds them under one row ("4 more checks fail for the same
reason") instead of naming it once and saying "no known mistake" four times. A check the variant does not reproduce
keeps its own diagnosis: nothing is named by association.

Takes the results and the table of mistakes as arguments (no checks, no reference): both kits and the graded path
run it between judging and rendering.
"""

import dataclasses
from collections.abc import Mapping, Sequence

from autograder.checking.check_types import ERROR, PASSED, CheckResult, Evidence, Misconception, Verdict
from autograder.checking.results import with_rungs
from autograder.i18n import Messages

__all__ = ["one_diagnosis", "proven_mistakes"]


def proven_mistakes(results: Sequence[CheckResult]) -> list[str]:
    """The mistakes the attempt's failing checks name on their own evidence, in check order."""
    return list(dict.fromkeys(result.misconception for result in results
                              if result.status != PASSED and result.misconception is not None))


def one_diagnosis(results: Sequence[CheckResult], lang: str, messages: Messages,
                  misconceptions: Mapping[str, Misconception]) -> list[CheckResult]:
    """`results` (one exercise's, in check order) with each unnamed failing check named by the one mistake proven on
    another check whose variant reproduces its failure too; the others as they are."""
    proven = proven_mistakes(results)
    if not proven:
        return list(results)
    return [_explained(result, proven, lang, messages, misconceptions, _raised_alike(result, results))
            for result in results]


def _raised_alike(result: CheckResult, results: Sequence[CheckResult]) -> tuple[str, ...]:
    """The mistakes proven on another check of `result`'s exercise by a raise their variant reproduced there (its
    name among its own `reproduced_by`, its message quoting the error), whose error is `result`'s very error: the
    same type and the same text with its numbers, at the same line where both quote one. One raise of the learner's
    code, met by two checks, is one cause (issue 58); an error with other numbers or at another line is not."""
    raised = _raise_of(result)
    if raised is None:  # (a judge may report a raise as its verdict: the check then failed rather than erred)
        return ()
    return tuple(dict.fromkeys(
        other.misconception for other in results
        if other is not result and other.exercise == result.exercise and other.status != PASSED
        and other.misconception is not None and other.misconception in other.reproduced_by
        and (theirs := _raise_of(other)) is not None and theirs[:2] == raised[:2]
        and (not theirs[2] or not raised[2] or theirs[2] == raised[2])))


def _raise_of(result: CheckResult) -> tuple[str, str, str] | None:
    """(type, text, line) of the error a failure's message quotes ("" for a line it does not quote); None for a
    failure that quotes none."""
    fields = {} if result.cause is None else dict(result.cause.fields)
    if not fields.get("type") or not fields.get("detail"):
        return None
    return fields["type"], fields["detail"], fields.get("line", "")


def _explained(result: CheckResult, proven: Sequence[str], lang: str, messages: Messages,
               misconceptions: Mapping[str, Misconception], raised_alike: Sequence[str] = ()) -> CheckResult:
    if result.status == PASSED or result.stub or result.misconception is not None or result.cause is None:
        return result
    evidence = Evidence.ERROR if result.status == ERROR else Evidence.VARIANT
    fitting = [name for name in proven if name in misconceptions and (
        name in result.reproduced_by and misconceptions[name].proven_by(
            Verdict(False, misconception=name, evidence=evidence), result.exercise)
        # The reference with the mistake fails this check with the very same verdict or error: the proof is the
        # other check's, by its own kind of evidence; here the mistake need only apply to the exercise.
        or name in result.failing_alike and result.exercise in misconceptions[name].exercises
        # The very raise another check's variant reproduced, numbers and line included (_raised_alike).
        or name in raised_alike and result.exercise in misconceptions[name].exercises
        # This check's very raise, which the variant of the mistake another check proves makes too (its error,
        # numbers included): the proof is that check's; a raise alone may not name it (a view refused on a
        # non-contiguous input, 12w's wz-sh-01, is made by more than one way of splitting).
        or (result.status == ERROR and name in result.reproduced_by
            and result.exercise in misconceptions[name].exercises))]
    if len(fitting) != 1:  # two proven mistakes both reproduce it: it tells them apart no better than a guess
        return result
    name = fitting[0]
    explained = dataclasses.replace(result, misconception=name, departure="", departure_step="",
                                    cause=dataclasses.replace(result.cause, misconception=name))
    with_rungs(explained, misconceptions[name], lang, messages)
    return explained
