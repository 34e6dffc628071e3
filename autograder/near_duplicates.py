"""Pairs of students whose fingerprint sets are nearly the same, found with datasketch's MinHash LSH.

The inverted index of autograder.similarity finds pairs that share *rare* fingerprints. A copy of a typical
solution has none: every fingerprint of it is shared by many honest students too. But its fingerprint *set* is
still nearly identical to the original's, which no honest pair's is once the exercises add up; locality-
sensitive hashing on MinHash signatures finds such pairs without comparing all of them (datasketch's
`MinHashLSH`: sets whose estimated Jaccard similarity is at least `threshold` share a band).
"""

from datasketch import MinHash, MinHashLSH

THRESHOLD = 0.8  # estimated Jaccard similarity of the fingerprint sets
PERMUTATIONS = 64
MIN_FINGERPRINTS = 10  # a set this small (almost everything was base code) is a near-duplicate of too much


def near_duplicate_pairs(hash_sets, threshold=THRESHOLD, permutations=PERMUTATIONS):
    """{(a, b)} with a < b, for the students of {id: set of int hashes} whose sets are about `threshold`-similar."""
    index = MinHashLSH(threshold=threshold, num_perm=permutations)
    signatures = {}
    for student_id, hashes in hash_sets.items():
        if len(hashes) < MIN_FINGERPRINTS:
            continue
        signature = MinHash(num_perm=permutations, seed=1)
        signature.update_batch([value.to_bytes(8, "big") for value in hashes])
        signatures[student_id] = signature
        index.insert(student_id, signature)
    pairs = set()
    for student_id, signature in signatures.items():
        for other in index.query(signature):
            if other != student_id:
                pairs.add((min(student_id, other), max(student_id, other)))
    return pairs
