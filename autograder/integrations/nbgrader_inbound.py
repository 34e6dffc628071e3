"""Which entries of nbgrader's inbound folder a student could have handed in: what `nbgrader collect` may take.

nbgrader's `release_assignment` leaves the exchange's `inbound/` writable by every student (mode 0733: they cannot
list it), and its collect takes every entry named `<id>+<assignment>+*` as that student's submission, following a
link, whoever wrote it: `zed+attention+<time>+x -> <course>/source/attention` hands in the solutions, an entry named
for a classmate with a later time replaces the classmate's work, and one name whose time nbgrader cannot read (or a
dangling link) stops the whole collect. `check_entry` decides each entry before nbgrader chooses a student's latest:

- the name is `<id>+<assignment>+<timestamp>[+<random>]`, as `nbgrader submit` writes it: an id nbgrader can use as
  a folder name (`course_roster.id_problem`) and, where the gradebook has students, one of them; this assignment;
  a timestamp nbgrader's `parse_utc` reads, of digits, letters, spaces and `.:,_-` only (no control character, no
  markup); the random part URL-safe base64, as submit's;
- the entry is a folder, looked at without following a link (a link, a file, a FIFO is refused);
- who wrote it, where nbgrader's `ExchangeCollect.check_owner` is on (its default). On a multi-user exchange
  `nbgrader submit` runs as the student's own account, which then owns the entry: where the id names an account of
  this machine, the entry must be owned by that account, and an entry owned by the account of another student of
  the gradebook is refused. Where the owner cannot tell (every student writes as one account, e.g. hub containers
  run as `jovyan`, and ids are hub names), only the name says who handed it in: its time must not be later than
  the collect's clock (`CLOCK_SKEW` allowed), so that nobody plants a classmate's "latest" submission ahead of
  time. With `check_owner` off every entry is judged that way.

What no rule here can tell: on a one-account exchange, an entry written for a classmate at the time it names is
what the classmate's own submission at that time would be (docs/security.md, "What is not defended").
"""

import os
import pwd
import re
import stat
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from nbgrader.utils import parse_utc

from autograder.integrations.course_roster import id_problem
from autograder.safe_text import clean

__all__ = ["CLOCK_SKEW", "InboundEntry", "InboundName", "InboundRules", "NotHandedIn", "check_entry", "collect_clock",
           "read_name", "shown_name"]

# How far the student's clock (nbgrader submit stamps the name with it) may be ahead of the collect's.
CLOCK_SKEW = timedelta(minutes=5)
# nbgrader's default format, "%Y-%m-%d %H:%M:%S.%f %Z", writes 30 of these: digits, a zone's abbreviation ("UTC",
# "CET") or offset; a zone's full name ("Europe/Paris") cannot be in a file name.
TIMESTAMP = re.compile(r"[0-9A-Za-z .:,_-]{1,64}")
RANDOM_PART = re.compile(r"[A-Za-z0-9_-]{1,64}")  # nbgrader submit's: base64.urlsafe_b64encode(os.urandom(9))
MAX_SHOWN = 200
SUBMIT_FORM = "<student id>+<assignment>+<timestamp>[+<random>]"


class NotHandedIn(Exception):
    """An inbound entry that no student could have handed in as it is named; str() says why, safe to show."""


@dataclass(frozen=True)
class InboundName:
    """The parts of an inbound entry's name, each checked."""

    student: str
    assignment: str
    timestamp: str  # as written in the name (nbgrader's timestamp.txt holds the same text)
    when: datetime  # naive UTC, as nbgrader's parse_utc reads `timestamp`
    random: str | None


@dataclass(frozen=True)
class InboundRules:
    """What an entry is checked against, read once per collect."""

    assignment: str
    students: frozenset[str] | None  # the gradebook's; None where it has none (no roster)
    check_owner: bool  # nbgrader's ExchangeCollect.check_owner
    now: datetime  # the collect's clock, naive UTC


@dataclass(frozen=True)
class InboundEntry:
    """An entry that may be collected: its name, which folder it was (a swap since is not copied), and whether its
    owner vouches for the student (False: only the name says who handed it in)."""

    name: InboundName
    identity: tuple[int, int]  # (st_dev, st_ino)
    owner_vouches: bool


def shown_name(text: str) -> str:
    """A name on one log line: control, escape and bidi characters (newline and tab too) shown as escapes."""
    return clean(text, MAX_SHOWN).replace("\n", "\\n").replace("\t", "\\t")


def read_name(entry: str, rules: InboundRules) -> InboundName:
    """The checked parts of the entry name `entry`; NotHandedIn where one is not what nbgrader submit writes."""
    parts = entry.split("+")
    if len(parts) not in (3, 4):
        raise NotHandedIn(f"not named {SUBMIT_FORM}, as nbgrader submit names a submission")
    student, assignment, timestamp = parts[:3]
    random = parts[3] if len(parts) == 4 else None
    problem = id_problem(student)
    if problem:
        raise NotHandedIn(f"student {shown_name(problem)}")
    if rules.students is not None and student not in rules.students:
        raise NotHandedIn(f"{student} is not a student of the gradebook (`nbgrader db student add {student}` adds "
                          "them; then collect again)")
    if assignment != rules.assignment:
        raise NotHandedIn(f"not named {SUBMIT_FORM}: the assignment part is {shown_name(assignment)!r}")
    if random is not None and not RANDOM_PART.fullmatch(random):
        raise NotHandedIn(f"the random part {shown_name(random)!r} is not nbgrader submit's (URL-safe base64)")
    return InboundName(student, assignment, timestamp, _read_time(timestamp), random)


def _read_time(timestamp: str) -> datetime:
    shown = shown_name(timestamp)
    if not TIMESTAMP.fullmatch(timestamp):
        raise NotHandedIn(f"the timestamp {shown!r} is not one nbgrader submit writes")
    try:
        when = parse_utc(timestamp)
    except Exception:  # noqa: BLE001 - dateutil raises ParserError, OverflowError, TypeError... for a forged text
        raise NotHandedIn(f"the timestamp {shown!r} cannot be read as a time") from None
    if not isinstance(when, datetime):
        raise NotHandedIn(f"the timestamp {shown!r} cannot be read as a time")
    return when


def check_entry(inbound: Path, entry: str, rules: InboundRules) -> InboundEntry:
    """The entry `entry` of the folder `inbound` (see the module), never following a link; NotHandedIn otherwise."""
    name = read_name(entry, rules)
    try:
        info = os.lstat(inbound / entry)
    except OSError as error:
        raise NotHandedIn(f"cannot be looked at: {shown_name(error.strerror or str(error))}") from None
    if stat.S_ISLNK(info.st_mode):
        raise NotHandedIn("a symbolic link: not followed")
    if not stat.S_ISDIR(info.st_mode):
        raise NotHandedIn("not a folder, as nbgrader submit writes a submission")
    vouches = _owner_vouches(info.st_uid, name.student, rules)
    if not vouches and name.when > rules.now + CLOCK_SKEW:
        raise NotHandedIn(f"its timestamp {shown_name(name.timestamp)!r} is later than the collect's clock "
                          f"({rules.now:%Y-%m-%d %H:%M:%S} UTC), and its owner ({_account(info.st_uid)}) cannot "
                          f"vouch for {name.student}")
    return InboundEntry(name, (info.st_dev, info.st_ino), vouches)


def _owner_vouches(uid: int, student: str, rules: InboundRules) -> bool:
    """Whether the entry's owner is the student's own account; NotHandedIn where it is some other student's."""
    if not rules.check_owner:
        return False
    try:
        student_uid: int | None = pwd.getpwnam(student).pw_uid
    except KeyError:
        student_uid = None
    if uid == student_uid:
        return True
    owner = _account(uid)
    if student_uid is not None:
        raise NotHandedIn(f"owned by {owner}, not by {student}'s account (nbgrader submit, run as {student}, "
                          "makes it theirs)")
    if rules.students is not None and owner in rules.students:
        raise NotHandedIn(f"owned by the account of {owner}, another student")
    return False


def _account(uid: int) -> str:
    try:
        return shown_name(pwd.getpwuid(uid).pw_name)
    except KeyError:
        return f"uid {uid}"


def collect_clock() -> datetime:
    """Now, naive UTC: how nbgrader's parse_utc gives a timestamp."""
    return datetime.now(UTC).replace(tzinfo=None)
