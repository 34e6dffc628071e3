"""How one entry of the table of mistakes is written."""

from collections.abc import Iterable

from autograder.checking.check_types import Evidence, Misconception

__all__ = ["mistake"]

Bilingual = tuple[str, str]  # (English, Simplified Chinese)


def mistake(mistake_id: str, *, exercises: Iterable[str], evidence: Iterable[Evidence], name: Bilingual,
            hint: Bilingual, question: Bilingual = ("", ""), change: Bilingual = ("", ""),
            fails_every_case: bool = False) -> Misconception:
    """One known mistake. `exercises`: the exercise ids where it may be named (its texts must fit each of them);
    `evidence`: the kinds of evidence that prove it. The ladder: rung 1 the check's symptom and `question` (no fix),
    rung 2 `name` (the mistake) and `hint` (the concept), rung 3 `change` (what to change, in words); no rung holds
    code, a formula or an expected answer."""
    def bilingual(pair: Bilingual) -> dict[str, str]:
        return {"en": pair[0], "zh": pair[1]} if pair[0] else {}
    return Misconception(mistake_id, bilingual(name), bilingual(hint), question=bilingual(question),
                         change=bilingual(change), exercises=frozenset(exercises), evidence=frozenset(evidence),
                         fails_every_case=fails_every_case)
