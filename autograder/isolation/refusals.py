"""What the grading child refuses to do for a cell although Jupyter would, and why, in the grader's words.

The child (autograder.isolation.grading_shell) names each refusal by a `Refusal`; the grader
(autograder.isolation.supervisor) turns it into a note under the cell with `because(...)`, in its own words: a child
may send anything, and an unknown reason gets the plain words.
"""

from enum import StrEnum

__all__ = ["MAX_REFUSED", "PLAIN_WORDS", "Refusal", "because"]

MAX_REFUSED = 20  # recorded per cell (what a loop of refused magics adds is counted, not listed)


class Refusal(StrEnum):
    PROGRAM = "program"  # a shell command or a magic that starts a program (`!ls`, `%%bash`, `%pip`, `%edit`)
    NETWORK = "network"  # `%load https://...`, `%pastebin`
    OUTSIDE = "outside"  # `%load` or `%pycat` of a file that is not the student's own (a link, a classmate's)
    COMPILER = "compiler"  # torch.compile: its compiler is a program


_WORDS = {
    Refusal.PROGRAM: "not run while grading: it starts a program, which grading does not allow",
    Refusal.NETWORK: "not run while grading: it reaches the network, which grading does not allow",
    Refusal.OUTSIDE: "not read while grading: only the files handed in beside the notebook are read",
    Refusal.COMPILER: "compiling starts a program, which grading does not allow; the uncompiled function was graded",
}
PLAIN_WORDS = "not run while grading"


def because(reason: object) -> str:
    """The grader's words for a reason a child sent (the plain words where it is not one of them)."""
    return next((words for refusal, words in _WORDS.items() if reason == refusal.value), PLAIN_WORDS)
