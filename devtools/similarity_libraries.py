"""Measure copydetect 0.5.0 and datasketch 2.0.0 on a synthetic class (`similarity_bench --libraries`).

Neither is a dependency of attnkit: install them by hand to measure
(`.venv/bin/pip install -c constraints.txt copydetect==0.5.0 datasketch==2.0.0`); a missing one is reported.

- copydetect: `CodeFingerprint` on each student's solution cells (in memory, through its `fp` argument), and its
  all-pairs comparison (`compare_files` on every pair, what `CopyDetector.run` does) timed on a sample and
  extrapolated to the class.
- datasketch: MinHash (128 permutations) of each student's attnkit fingerprint set and an LSH index at Jaccard
  threshold 0.3, timed against attnkit's inverted index, and how many planted pairs each finds as candidates.
"""

import importlib.util
import io
import itertools
import random
import time

from autograder.review import inputs, similarity

SAMPLE = 200


def measure_libraries(submitted, book, plan, log=print):
    students = inputs.read_class(submitted, inputs.read_base([book]))
    planted = {tuple(sorted(pair)) for _, *pair in plan.planted}
    if importlib.util.find_spec("copydetect") is None:
        log("copydetect: not installed")
    else:
        _copydetect(students, log)
    if importlib.util.find_spec("datasketch") is None:
        log("datasketch: not installed")
    else:
        _datasketch(students, planted, log)


def _copydetect(students, log):
    from copydetect import CodeFingerprint, compare_files

    code = {student.id: "\n\n".join(source for _, source in student.cells) for student in students}
    started = time.monotonic()
    prints = {student_id: CodeFingerprint(f"{student_id}.py", 25, 1, fp=io.StringIO(text))
              for student_id, text in code.items()}
    fingerprinting = time.monotonic() - started
    sample = random.Random(0).sample(sorted(prints), min(SAMPLE, len(prints)))
    started = time.monotonic()
    pairs = 0
    for a, b in itertools.combinations(sample, 2):
        compare_files(prints[a], prints[b])
        pairs += 1
    per_pair = (time.monotonic() - started) / max(pairs, 1)
    total_pairs = len(prints) * (len(prints) - 1) // 2
    log(f"copydetect: fingerprinting {len(prints)} students {fingerprinting:.1f} s; all-pairs comparison "
        f"{per_pair * 1e6:.0f} us per pair (measured on {pairs} pairs) -> {per_pair * total_pairs:.0f} s for the "
        f"{total_pairs} pairs of the class, before any report")


def _datasketch(students, planted, log):
    from datasketch import MinHash, MinHashLSH

    hashes = {student.id: student.hashes for student in students}
    started = time.monotonic()
    lsh = MinHashLSH(threshold=0.3, num_perm=128)
    minhashes = {}
    for student_id, values in hashes.items():
        minhash = MinHash(num_perm=128)
        minhash.update_batch([value.to_bytes(8, "big") for value in values])
        minhashes[student_id] = minhash
        lsh.insert(student_id, minhash)
    candidates = set()
    for student_id, minhash in minhashes.items():
        candidates.update(tuple(sorted((student_id, other))) for other in lsh.query(minhash) if other != student_id)
    lsh_seconds = time.monotonic() - started
    started = time.monotonic()
    analysis = similarity.analyse(students, {}, threshold=0.0)
    index_seconds = time.monotonic() - started
    found = {(pair.student_a, pair.student_b) for pair in analysis.pairs}
    log(f"datasketch MinHash LSH (128 perm, threshold 0.3): {lsh_seconds:.1f} s, {len(candidates)} candidate pairs, "
        f"{len(candidates & planted)} of {len(planted)} planted pairs among them (the wrong-output pairs share "
        f"little code by design)")
    log(f"attnkit inverted index (code evidence only, candidates and scores): {index_seconds:.1f} s, "
        f"{analysis.candidates} candidate pairs, {len(found & planted)} of {len(planted)} planted pairs scored")
