"""attnkit's record of a notebook's checks, kept in the notebook `nbgrader autograde` writes to autograded/.

nbgrader keeps a test cell's points and nothing of the checks behind them. `SandboxedExecute` writes the checks'
verdicts (each check's id, exercise, points, status, named mistake, message and, where grading found one, the notes'
step the student's run first departs from: what `attnkit grade`'s record holds,
without the public values, heatmaps and hidden outputs) into the autograded notebook's metadata under RECORD_KEY, so
that `attnkit report COURSE` can show the mistakes the checks reproduced without grading anything again. It writes
the key on every notebook it grades: a value the student put there never survives the sandboxed autograde. The
reader takes nothing on trust all the same (a notebook autograded in the student's kernel keeps the student's
metadata): it keeps a record only in the shape written here, its text cleaned and capped, and the report keeps it
only where its points agree with the gradebook's autograded scores.
"""

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from autograder.outputs.documents import CheckDocument
from autograder.safe_text import clean

if TYPE_CHECKING:
    from autograder.checking.check_types import CheckResult

__all__ = ["RECORD_KEY", "read_record", "record_of"]

RECORD_KEY = "attnkit_checks"  # notebook metadata, beside nbgrader's own keys
VERSION = 1
MAX_CHECKS = 1000  # the course has about a hundred; a record with more is no record of ours
MAX_ID_CHARS = 200
MAX_MESSAGE_CHARS = 2000
STATUSES = ("passed", "failed", "error")


def record_of(checks: Sequence["CheckResult"], seed: int) -> dict[str, Any]:
    """The record of a notebook's checks as the metadata holds it (plain JSON)."""
    return {"version": VERSION, "seed": seed, "checks": [{
        "id": check.id, "exercise": check.exercise, "score": check.score, "max_score": check.max_score,
        "status": str(check.status), "misconception": check.misconception,
        "message": clean(check.full_message, MAX_MESSAGE_CHARS), "hidden": check.hidden,
        **({"departure_step": check.departure_step} if check.departure_step else {}),
        **({"departure_lost": check.departure_lost} if check.departure_lost else {}),
    } for check in checks]}


def read_record(metadata: object) -> list[CheckDocument] | None:
    """The checks of the record in a notebook's `metadata` (its top-level metadata dict); None when there is none or
    it is not in the shape `record_of` writes."""
    record = metadata.get(RECORD_KEY) if isinstance(metadata, dict) else None
    if not isinstance(record, dict) or record.get("version") != VERSION:
        return None
    checks = record.get("checks")
    if not isinstance(checks, list) or len(checks) > MAX_CHECKS:
        return None
    documents = [_check(item) for item in checks]
    return None if any(document is None for document in documents) else [d for d in documents if d is not None]


def _check(item: object) -> CheckDocument | None:
    if not isinstance(item, dict):
        return None
    texts = [item.get(key) for key in ("id", "exercise", "status", "message")]
    numbers = [item.get(key) for key in ("score", "max_score")]
    misconception, hidden = item.get("misconception"), item.get("hidden")
    if (not all(isinstance(text, str) for text in texts) or item.get("status") not in STATUSES
            or not all(_finite(number) for number in numbers) or not isinstance(hidden, bool)
            or not (misconception is None or isinstance(misconception, str))):
        return None
    document: CheckDocument = {
        "id": clean(item["id"], MAX_ID_CHARS), "exercise": clean(item["exercise"], MAX_ID_CHARS),
        "score": float(item["score"]), "max_score": float(item["max_score"]), "status": item["status"],
        "misconception": None if misconception is None else clean(misconception, MAX_ID_CHARS),
        "message": clean(item["message"], MAX_MESSAGE_CHARS), "hidden": hidden}
    step = item.get("departure_step")
    if isinstance(step, str) and step:  # optional (older records have none); anything else is left out
        document["departure_step"] = clean(step, MAX_ID_CHARS)
    lost = item.get("departure_lost")
    if isinstance(lost, str) and lost:  # optional, as departure_step
        document["departure_lost"] = clean(lost, MAX_ID_CHARS)
    return document


def _finite(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
