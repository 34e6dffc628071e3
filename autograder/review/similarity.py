"""Which pairs of students look like collusion, and why: `analyse(students, base_sources, records)` behind
`attnkit similarity` (files: autograder.review.page; submissions and records: autograder.review.inputs).

Evidence for a human to read, never a verdict: nothing here changes a grade.

Two kinds of evidence, each weighted by how rare it is in the class (an inverse document frequency: what many
students share says little about any two of them):

- **Code**: the winnowed fingerprints of each student's solution cells (autograder.review.code_fingerprints), minus
  every fingerprint of the base code (the release's starter code, the reference in solutions/, and the instructor's
  `--base` files, e.g. the book's chapter code that honest students follow). `code_overlap` is the weighted
  Jaccard similarity of two students' fingerprints, a fingerprint weighing log(N / students who have it) squared.
  In the score it counts as its square (a partial overlap, common between honest students who pick the same
  formulations, weighs much less than a copy) times a confidence from the amount of shared code in absolute terms:
  the code evidence, each shared fingerprint counted by its rarity (1 when only the two have it, falling to 0 for
  what the whole class has), counts nothing up to MIN_CODE_EVIDENCE and fully from FULL_CODE_EVIDENCE. Each pair's
  code evidence is also placed among all the class's pairs (`code_percentile`, shown in words on the page).
  Fingerprints of generic statements (code_fingerprints.GENERIC_STATEMENTS) never count.
- **Behaviour** (from `attnkit grade`'s records): the same wrong output on the same hidden case (a fingerprint of
  the output, autograder.grading.wrong_outputs), and the same misconception named. A right output is evidence of
  nothing and is never recorded. An exercise's shared wrong outputs weigh by their rarity log(N / df) / log(N / 2)
  (1 when only the two produce it; df of the most common of them), and more shared cases weigh more. A wrong
  output that a known misconception explains, and a shared misconception, weigh a quarter: independent students
  with the same known mistake produce exactly the same output.

No loop over all pairs: inverted indexes (fingerprint -> students, wrong output -> students) give the candidate
pairs; a fingerprint held by more than `common_share` of the class (or more than `MAX_POSTING` students) makes no
candidates, since it is too common to mean anything. A copy of a typical solution shares no rare fingerprint, so
`near_duplicates` (`near_duplicate_pairs` below: datasketch's MinHash LSH) adds the pairs whose whole
fingerprint sets are nearly the same. Each candidate pair is then scored on all its evidence.
"""

import bisect
import itertools
import math
from collections import Counter, defaultdict
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from autograder.review.code_fingerprints import Fingerprint

__all__ = [
    "Analysis", "Behaviour", "FLAG_THRESHOLD", "Pair", "SharedMisconception", "SharedOutputs", "StudentCode", "analyse",
    "near_duplicate_pairs", "rarity",
]

FLAG_THRESHOLD = 0.5  # pairs scoring at least this are flagged (written to similarity.csv)
COMMON_SHARE = 0.05  # evidence held by more of the class than this makes no candidate pair on its own
MIN_COMMON = 6  # ... but always allowed up to this many students (small classes)
MAX_POSTING = 400  # hard cap per fingerprint on the pairs it makes: bounded work however large the class
MISCONCEPTION_WEIGHT = 0.25  # a shared misconception is weak evidence: a known idea, wrong in the same way
# A wrong output that a known misconception explains is reproduced bit for bit by every student who has that
# misconception (the judges recognise it by recomputing it): sharing it is weak evidence too.
EXPLAINED_WEIGHT = 0.25
CASES_HALF_LIFE = 1  # each further shared wrong case halves what is still missing to full strength
# Shared code counts by its amount, not only its fraction: the shared fingerprints, each counted by its rarity,
# make the pair's code evidence. Up to MIN_CODE_EVIDENCE it counts nothing (two students left with a line or two
# each after the base code is removed share "all" of it by chance); from FULL_CODE_EVIDENCE it counts fully. A
# winnowed fingerprint stands for about 2.5 tokens: 8 fingerprints that only the two have are about 20 tokens.
MIN_CODE_EVIDENCE = 4.0
FULL_CODE_EVIDENCE = 8.0

# MinHash LSH (near_duplicate_pairs, below) for copies of typical code.
LSH_THRESHOLD = 0.8  # estimated Jaccard similarity of the fingerprint sets
LSH_PERMUTATIONS = 64
LSH_MIN_FINGERPRINTS = 10  # a smaller set (almost all base code) is near everything
Evidence = TypeVar("Evidence", bound=Hashable)  # a fingerprint hash, a wrong-output key, a misconception id


@dataclass
class StudentCode:
    """One student's solution cells and their fingerprints (autograder.review.inputs builds it)."""

    id: str
    cells: list[tuple[str, str]]  # [(label, source)] in notebook order; label: "notebook / grade id"
    fingerprints: list[tuple[int, "Fingerprint"]] = field(default_factory=list)  # [(cell index, print)], base removed
    problems: list[str] = field(default_factory=list)  # notebooks not submitted or that could not be read, and why
    unreadable: list[str] = field(default_factory=list)  # "notebook: why" of the files handed in but not readable

    @property
    def hashes(self) -> set[int]:
        return {fingerprint.hash for _, fingerprint in self.fingerprints}


@dataclass(frozen=True)
class Behaviour:
    """What a student's grading record says: wrong outputs by exercise, misconceptions named."""

    wrong_outputs: dict[str, frozenset[str]]  # exercise id -> frozenset of "check#case:fingerprint"
    misconceptions: frozenset[str]
    explained: frozenset[str] = frozenset()  # wrong outputs of checks that named a misconception (a known mistake)


@dataclass(frozen=True)
class SharedOutputs:
    exercise: str
    cases: int  # hidden cases on which both produced the same wrong output
    students: int  # how many students of the class produce the most common of these outputs
    explained: bool  # every one of them is a known misconception's output: expected from independent students


@dataclass(frozen=True)
class SharedMisconception:
    id: str
    students: int  # how many students of the class have it


@dataclass
class Pair:
    student_a: str
    student_b: str
    score: float
    code_overlap: float
    shared_outputs: list[SharedOutputs]  # strongest first
    shared_misconceptions: list[SharedMisconception]  # rarest first
    passages: int = 0  # shared fingerprints (weighted > 0)
    code_confidence: float = 1.0  # how much of the code overlap counts (code_evidence between MIN_ and FULL_)
    code_evidence: float = 0.0  # shared fingerprints, each counted by its rarity
    code_percentile: float = 0.0  # share of the class's pairs with less code evidence than this pair

    @property
    def shared_wrong_outputs(self) -> int:
        return sum(shared.cases for shared in self.shared_outputs)


@dataclass
class Analysis:
    pairs: list[Pair]  # flagged pairs, highest score first
    students: int
    candidates: int  # pairs scored (all others share no rare evidence)
    with_behaviour: int  # students with a grading record
    # (a, b) -> the non-base fingerprint hashes they share, for flagged pairs (highlighting)
    shared_hashes: dict[tuple[str, str], set[int]]
    notes: list[str] = field(default_factory=list)


def analyse(students: Sequence[StudentCode], behaviours: Mapping[str, Behaviour] | None = None, *,
            threshold: float = FLAG_THRESHOLD, common_share: float = COMMON_SHARE,
            near_duplicates: Callable[[dict[str, set[int]]], Iterable[tuple[str, str]]] | None = None) -> Analysis:
    """Score every candidate pair; return the flagged ones, highest score first.

    `students`: [StudentCode] with base fingerprints already removed; `behaviours`: {student id: Behaviour};
    `near_duplicates({id: hash set})`: more candidate pairs (`near_duplicate_pairs`), optional.
    """
    behaviours = behaviours or {}
    count = len(students)
    if count < 2:
        return Analysis([], count, 0, len(behaviours), {})
    cap = min(MAX_POSTING, max(MIN_COMMON, int(common_share * count)))
    hashes = {student.id: student.hashes for student in students}
    code_df = Counter(h for student_hashes in hashes.values() for h in student_hashes)
    output_df = Counter(key for behaviour in behaviours.values()
                        for keys in behaviour.wrong_outputs.values() for key in keys)
    misconception_df = Counter(m for behaviour in behaviours.values() for m in behaviour.misconceptions)

    # squared IDF: what few students share dominates what a formulation's followers share. Both per fingerprint
    # computed once: the pairs below look them up millions of times in a large class.
    weight = {h: math.log(count / students_with_it) ** 2 for h, students_with_it in code_df.items()}
    rarity_of = {h: rarity(students_with_it, count) for h, students_with_it in code_df.items()}

    totals = {student_id: sum(weight[h] for h in student_hashes) for student_id, student_hashes in hashes.items()}

    candidates: set[tuple[str, str]] = set()
    _add_pairs(candidates, _postings(hashes.items(), code_df, cap))
    outputs_by_student = {student_id: {key for keys in behaviour.wrong_outputs.values() for key in keys}
                          for student_id, behaviour in behaviours.items()}
    _add_pairs(candidates, _postings(outputs_by_student.items(), output_df, cap))
    _add_pairs(candidates, _postings(((s, b.misconceptions) for s, b in behaviours.items()), misconception_df, cap))

    if near_duplicates is not None:  # copies of typical code share no rare fingerprint: whole sets compared
        candidates.update(near_duplicates(hashes))
    scored: list[tuple[Pair, float, set[int]]] = []
    evidences: list[float] = []
    for a, b in candidates:
        shared = (hashes.get(a, set()) & hashes.get(b, set()))
        shared_weight = sum(weight[h] for h in shared)
        union = totals.get(a, 0.0) + totals.get(b, 0.0) - shared_weight
        code_overlap = shared_weight / union if union > 0 else 0.0
        evidence = sum(rarity_of[h] for h in shared)
        evidences.append(evidence)
        outputs = _shared_outputs(behaviours.get(a), behaviours.get(b), output_df)
        misconceptions = _shared_misconceptions(behaviours.get(a), behaviours.get(b), misconception_df)
        behaviour = _behaviour_strength(outputs, misconceptions, count)
        confidence = code_confidence(evidence)
        score = 1.0 - (1.0 - code_overlap ** 2 * confidence) * (1.0 - behaviour)
        if score >= threshold:
            scored.append((Pair(a, b, round(score, 4), round(code_overlap, 4), outputs, misconceptions,
                                sum(1 for h in shared if code_df[h] < count), round(confidence, 4),
                                round(evidence, 2)), evidence, shared))
    # Calibration on the class itself: where each flagged pair's evidence stands among all N(N-1)/2 pairs (a pair
    # that is no candidate shares no rare fingerprint: it has less than any candidate with some).
    evidences.sort()
    all_pairs = count * (count - 1) // 2
    pairs: list[Pair] = []
    shared_hashes: dict[tuple[str, str], set[int]] = {}
    for pair, evidence, shared in scored:
        at_least = len(evidences) - bisect.bisect_left(evidences, evidence)  # this pair included
        pair.code_percentile = 1.0 - at_least / all_pairs if evidence > 0 else 0.0
        pairs.append(pair)
        shared_hashes[(pair.student_a, pair.student_b)] = {h for h in shared if code_df[h] < count}
    pairs.sort(key=lambda pair: (-pair.score, -pair.code_evidence, pair.student_a, pair.student_b))
    return Analysis(pairs, count, len(candidates), len(behaviours), shared_hashes)


def code_confidence(evidence: float) -> float:
    """How much of a pair's code overlap counts, from its code evidence: 0 up to MIN_CODE_EVIDENCE, 1 from
    FULL_CODE_EVIDENCE, linear between."""
    return max(0.0, min(1.0, (evidence - MIN_CODE_EVIDENCE) / (FULL_CODE_EVIDENCE - MIN_CODE_EVIDENCE)))


def rarity(students_with_it: int, class_size: int) -> float:
    """1 when only the two students of a pair have it, falling to 0 when the whole class has it."""
    if class_size <= 2 or students_with_it >= class_size:
        return 0.0
    return max(0.0, min(1.0, math.log(class_size / max(students_with_it, 2)) / math.log(class_size / 2)))


def _postings(items: Iterable[tuple[str, Iterable[Evidence]]], df: Mapping[Evidence, int],
              cap: int) -> Iterable[list[str]]:
    """Students per piece of evidence, for evidence held by 2..cap students."""
    postings: defaultdict[Evidence, list[str]] = defaultdict(list)
    for student_id, keys in items:
        for key in keys:
            if 2 <= df[key] <= cap:
                postings[key].append(student_id)
    return postings.values()


def _add_pairs(candidates: set[tuple[str, str]], postings: Iterable[Iterable[str]]) -> None:
    for students in postings:
        for a, b in itertools.combinations(sorted(students), 2):
            candidates.add((a, b))


def _shared_outputs(first: Behaviour | None, second: Behaviour | None,
                    output_df: Mapping[str, int]) -> list[SharedOutputs]:
    if first is None or second is None:
        return []
    shared: list[SharedOutputs] = []
    for exercise, keys in first.wrong_outputs.items():
        common = keys & second.wrong_outputs.get(exercise, frozenset())
        if common:
            shared.append(SharedOutputs(exercise, len(common), max(output_df[key] for key in common),
                                        common <= (first.explained | second.explained)))
    shared.sort(key=lambda item: (item.explained, item.students, -item.cases, item.exercise))
    return shared


def _shared_misconceptions(first: Behaviour | None, second: Behaviour | None,
                           misconception_df: Mapping[str, int]) -> list[SharedMisconception]:
    if first is None or second is None:
        return []
    common = first.misconceptions & second.misconceptions
    return sorted((SharedMisconception(m, misconception_df[m]) for m in common), key=lambda m: (m.students, m.id))


def _behaviour_strength(outputs: Iterable[SharedOutputs], misconceptions: Iterable[SharedMisconception],
                        class_size: int) -> float:
    """In [0, 1]. Unexplained shared outputs of different exercises are independent pieces of evidence and combine as
    1 - prod(1 - strength); everything a known mistake explains counts once (its strongest piece), since one
    misconception fails several checks and exercises at once."""
    missing, known = 1.0, 0.0
    for shared in outputs:
        strength = rarity(shared.students, class_size) * (1.0 - 0.5 ** (shared.cases / CASES_HALF_LIFE))
        if shared.explained:
            known = max(known, EXPLAINED_WEIGHT * strength)
        else:
            missing *= 1.0 - strength
    for misconception in misconceptions:
        known = max(known, MISCONCEPTION_WEIGHT * rarity(misconception.students, class_size))
    return 1.0 - missing * (1.0 - known)


def near_duplicate_pairs(hash_sets: Mapping[str, set[int]], threshold: float = LSH_THRESHOLD,
                         permutations: int = LSH_PERMUTATIONS) -> set[tuple[str, str]]:
    """{(a, b)} with a < b, for the students of {id: set of int hashes} whose sets are about `threshold`-similar.

    datasketch (the `course` extra) is imported here, not at the top: without it the analysis runs on the inverted
    index alone (autograder.review.run says so)."""
    from datasketch import MinHash, MinHashLSH

    index = MinHashLSH(threshold=threshold, num_perm=permutations)
    signatures: dict[str, Any] = {}
    for student_id, hashes in hash_sets.items():
        if len(hashes) < LSH_MIN_FINGERPRINTS:
            continue
        signature = MinHash(num_perm=permutations, seed=1)
        signature.update_batch([value.to_bytes(8, "big") for value in hashes])
        signatures[student_id] = signature
        index.insert(student_id, signature)
    pairs: set[tuple[str, str]] = set()
    for student_id, signature in signatures.items():
        for other in index.query(signature):
            if other != student_id:
                pairs.add((min(student_id, other), max(student_id, other)))
    return pairs
