"""`nbgrader collect` (the default exchange) takes only what a student could have handed in
(autograder/integrations/nbgrader_inbound.py, checked by OwnFilesCollect in nbgrader_intake.py).

nbgrader's release_assignment leaves `inbound/` writable by every student. Through real `nbgrader collect` runs on a
throwaway course whose exchange nbgrader's release_assignment made, with an honest class beside each attack:

- an inbound entry that is a link (to `source/`, to a classmate's `submitted/` folder or inbound entry, dangling), a
  plain file, a FIFO or a folder over `max_dir_size` is not collected;
- escape sequences and markup in each part of an entry's name (id, assignment, timestamp, random) are refused, each
  in one log line with the escapes shown;
- a later submission forged for a classmate is refused: by its time where every student writes as one account, by
  its owner on a multi-user exchange (as root: entries owned by this machine's `daemon` and `bin` accounts);
- an id outside the gradebook's students is refused until `nbgrader db student add` adds it;
- a `timestamp.txt` nbgrader cannot read stops no later `nbgrader collect --update`;
- an entry swapped for a link, or a dangling one, between the check and the copy is not read (in-process).

In every case each honest classmate is collected with their own work, the command exits 0, and its console output
(bytes) holds no raw ESC or BEL.
"""

import os
import pwd
import shutil
import subprocess
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from nbgrader.api import Gradebook
from nbgrader.coursedir import CourseDirectory
from traitlets.config.loader import PyFileConfigLoader

from autograder.course.exercises import NOTEBOOKS
from autograder.integrations import nbgrader_course, nbgrader_intake

ASSIGNMENT = nbgrader_course.ASSIGNMENT
HONEST = ("ada", "bob", "carol", "dave")
ATTACKERS = ("eve", "zed", "mallory")
WORK = f"{NOTEBOOKS[0]}.ipynb"  # each entry's one file: "work of <who wrote it>"
RANDOM = "AbCdEf-12_34"  # as nbgrader submit's random part: URL-safe base64 of 9 bytes
OSC = "\x1b]0;pwned\x07\x1b]52;c;cm0gLXJmIH4=\x07"  # retitle the window, write "rm -rf ~" to the clipboard
FORGED_LINE = "x\r\n[CollectApp | INFO] Collecting submission: eve attention"  # a log line of nbgrader's own
MARKUP = ("<img src=x onerror=alert(1)>", '"><script>alert(1)')  # a file name holds no "/": no closing tag
PAYLOADS = (OSC, FORGED_LINE, *MARKUP)
HOUR_AGO = datetime.now(UTC) - timedelta(hours=1)


@dataclass(frozen=True)
class Course:
    root: Path
    inbound: Path

    @property
    def submitted(self) -> Path:
        return self.root / "submitted"


def stamp(when: datetime) -> str:
    """A timestamp as nbgrader submit writes it (its default format, in UTC)."""
    return when.strftime("%Y-%m-%d %H:%M:%S.%f UTC")


def hand_in(course: Course, student: str, when: datetime = HOUR_AGO, *, by: str | None = None,
            name: str | None = None) -> Path:
    """An inbound entry as `nbgrader submit` writes it (or named `name`), holding the work of `by`."""
    entry = course.inbound / (name or f"{student}+{ASSIGNMENT}+{stamp(when)}+{RANDOM}")
    entry.mkdir()
    (entry / WORK).write_text(f"work of {by or student}", encoding="utf-8")
    (entry / "timestamp.txt").write_text(stamp(when), encoding="utf-8")
    return entry


def set_roster(course: Course, students: tuple[str, ...]) -> None:
    """The gradebook's students are exactly `students`."""
    with Gradebook(nbgrader_course.db_url(course.root), nbgrader_course.COURSE_ID) as gradebook:
        for student in gradebook.students:
            if student.id not in students:
                gradebook.remove_student(student.id)
        for student_id in students:
            gradebook.update_or_create_student(student_id)


@pytest.fixture(scope="module")
def built_course(tmp_path_factory, repo_root):
    """A throwaway course, its exchange's folders made by nbgrader's own release_assignment (inbound: 0733)."""
    for student in (*HONEST, *ATTACKERS, "oscar"):
        with pytest.raises(KeyError):
            pwd.getpwnam(student)  # one account for every student here: no id names an account of this machine
    root = tmp_path_factory.mktemp("exchange-collect")
    exchange = root / "exchange"
    exchange.mkdir()
    exchange.chmod(0o1777)
    course_root = nbgrader_course.make_course(root / "course", repo_root, exchange=exchange)
    shutil.copytree(repo_root / "release" / ASSIGNMENT, course_root / "release" / ASSIGNMENT)
    nbgrader_course.run_nbgrader(course_root, "release_assignment", ASSIGNMENT)
    return Course(course_root, exchange / nbgrader_course.COURSE_ID / "inbound")


@pytest.fixture
def course(built_course):
    """The course with an empty inbound folder, nothing collected, and the class on the gradebook's roster."""
    for entry in built_course.inbound.iterdir():
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry)
        else:
            entry.unlink()
    shutil.rmtree(built_course.submitted, ignore_errors=True)
    set_roster(built_course, (*HONEST, *ATTACKERS))
    return built_course


def collect(course: Course, *args: str) -> bytes:
    """`nbgrader collect attention ARGS` in the course folder; its console output, as bytes. It must exit 0 and send
    no raw ESC or BEL to the console."""
    command, env = nbgrader_course.nbgrader_command(course.root, "collect", ASSIGNMENT, *args)
    process = subprocess.run(command, cwd=course.root, env=env, capture_output=True, check=False, timeout=600)
    output = process.stdout + process.stderr
    assert process.returncode == 0, output.decode("utf-8", "replace")[-4000:]
    assert b"\x1b" not in output and b"\x07" not in output, output.decode("utf-8", "replace")[-4000:]
    return output


def collected(course: Course) -> dict[str, str]:
    """{student folder in submitted/: whose work it holds}."""
    if not course.submitted.is_dir():
        return {}
    return {folder.name: (folder / ASSIGNMENT / WORK).read_text(encoding="utf-8").removeprefix("work of ")
            if (folder / ASSIGNMENT / WORK).is_file() else "(none)" for folder in sorted(course.submitted.iterdir())}


def escaped(name: str) -> str:
    """How a log line shows `name`: a newline as \\n, every other control character as \\xNN."""
    return "".join("\\n" if char == "\n" else f"\\x{ord(char):02x}" if ord(char) < 0x20 or ord(char) == 0x7F
                   else char for char in name)


def refusal_lines(output: bytes, entry: str) -> list[str]:
    shown = escaped(entry)
    return [line for line in output.decode("utf-8").splitlines() if "not collected" in line and shown in line]


# --- inbound entries that are no folder of the student's --------------------------------------------------------

def _link_to_source(course, entry):
    entry.symlink_to(course.root / "source" / ASSIGNMENT, target_is_directory=True)


def _link_to_a_classmates_submission(course, entry):
    entry.symlink_to(course.submitted / "bob" / ASSIGNMENT, target_is_directory=True)


def _link_to_a_classmates_inbound_entry(course, entry):
    entry.symlink_to(next(course.inbound.glob(f"bob+{ASSIGNMENT}+*")), target_is_directory=True)


def _dangling_link(course, entry):
    entry.symlink_to(course.root / "no-such-folder", target_is_directory=True)


def _plain_file(course, entry):
    entry.write_text("work of zed")


def _fifo(course, entry):
    os.mkfifo(entry)


def _too_large(course, entry):
    entry.mkdir()
    (entry / WORK).write_text("work of zed")
    with open(entry / "huge.bin", "wb") as huge:  # sparse: nbgrader's size check reads its length, not its blocks
        huge.truncate(200 * 1000 * 1000)


NOT_A_FOLDER_OF_THEIR_OWN = [_link_to_source, _link_to_a_classmates_submission, _link_to_a_classmates_inbound_entry,
                             _dangling_link, _plain_file, _fifo, _too_large]


@pytest.mark.slow
@pytest.mark.parametrize("make", NOT_A_FOLDER_OF_THEIR_OWN, ids=lambda make: make.__name__.strip("_"))
def test_an_inbound_entry_that_is_no_folder_of_the_students_is_not_collected_and_stops_no_classmate(course, make):
    """The issue's `zed+attention+<time>+x -> source/attention` (graded 100/100 with the instructor's solutions), a
    link to bob's collected work, to bob's inbound entry, a dangling link (nbgrader's owner check raised
    FileNotFoundError: 0 students collected), a file, a FIFO, a folder over max_dir_size. Every entry is named for a
    student of the roster, later than the honest submissions."""
    (course.submitted / "bob" / ASSIGNMENT).mkdir(parents=True)  # collected before: nbgrader leaves it as it is
    (course.submitted / "bob" / ASSIGNMENT / WORK).write_text("work of bob")
    for student in HONEST:
        hand_in(course, student)
    name = f"zed+{ASSIGNMENT}+{stamp(HOUR_AGO + timedelta(minutes=30))}+{RANDOM}"
    make(course, course.inbound / name)

    output = collect(course)
    assert collected(course) == {student: student for student in HONEST}
    assert len(refusal_lines(output, name)) == 1, output.decode()[-3000:]


# --- escape sequences and markup in each part of the name --------------------------------------------------------

LATER = stamp(HOUR_AGO + timedelta(minutes=50))  # later than ada's own, not in the future
HOSTILE_NAMES = {
    "id": [f"{payload}+{ASSIGNMENT}+{LATER}+{RANDOM}" for payload in PAYLOADS],
    "assignment": [f"ada+{payload}+{ASSIGNMENT}+{LATER}" for payload in PAYLOADS],
    "timestamp": [f"ada+{ASSIGNMENT}+{timestamp}+{RANDOM}"
                  for payload in PAYLOADS for timestamp in (payload, f"{LATER[:19]} {payload}")],
    "random": [f"ada+{ASSIGNMENT}+{LATER}+{payload}" for payload in PAYLOADS],
}


@pytest.mark.slow
@pytest.mark.parametrize("part", HOSTILE_NAMES)
def test_escape_sequences_and_markup_in_any_part_of_the_name_are_refused_in_one_safe_line(course, part):
    """The issue's timestamp `<ESC>]0;…<BEL><ESC>]52;c;…` stopped the collect (0 of the class collected), nbgrader's
    parser printing its traceback with the raw sequences; an id of them was collected as a student folder, a random
    part of them as ada's latest submission. Each name is refused in one log line that shows the escapes, so that a
    name holding a line break forges no line of nbgrader's log."""
    for student in HONEST:
        hand_in(course, student)
    for name in HOSTILE_NAMES[part]:
        hand_in(course, "eve", by="eve", name=name)

    output = collect(course)
    assert collected(course) == {student: student for student in HONEST}
    for name in HOSTILE_NAMES[part]:
        assert len(refusal_lines(output, name)) == 1, (name, output.decode()[-3000:])
    assert not any(line.startswith(FORGED_LINE.split("\n")[1]) for line in output.decode().splitlines())
    assert b"\r" not in output


# --- a later submission forged for a classmate ----------------------------------------------------------------

@pytest.mark.slow
def test_a_later_submission_forged_for_a_classmate_on_a_one_account_exchange_is_refused_by_its_time(course):
    """Every entry here is owned by this one account, so only the name says who handed it in: eve's entries for bob
    stamped in the future (next year; an hour ahead) are refused, and bob's own latest submission is collected (the
    issue: eve's was collected as bob's, graded 0 instead of 18). One within the clocks' allowance is not."""
    for student in HONEST:
        hand_in(course, student)
    bob_later = hand_in(course, "bob", HOUR_AGO + timedelta(minutes=20), by="bob (later)")
    now = datetime.now(UTC)
    forged = [hand_in(course, "bob", when, by="eve") for when in (now + timedelta(days=365), now + timedelta(hours=1))]
    hand_in(course, "carol", now + timedelta(minutes=1), by="carol (a clock a minute ahead)")

    output = collect(course)
    assert collected(course) == {"ada": "ada", "bob": "bob (later)", "carol": "carol (a clock a minute ahead)",
                                 "dave": "dave"}
    for entry in forged:
        (line,) = refusal_lines(output, entry.name)
        assert "later than the collect's clock" in line
    assert not refusal_lines(output, bob_later.name)


@pytest.mark.slow
@pytest.mark.skipif(os.geteuid() != 0, reason="making entries owned by other accounts needs root (chown)")
def test_on_a_multi_user_exchange_the_owner_decides_who_handed_an_entry_in(course):
    """This machine's `daemon` and `bin` accounts are students (nbgrader submit, run as them, makes their entries
    theirs); ada has no account here (hub users writing as one account). bin's entry for daemon, later in the past,
    and for ada, and the instructor's (root's) for bin are refused by their owner; daemon's, bin's and ada's own are
    collected."""
    set_roster(course, (*HONEST, "daemon", "bin"))
    daemon, bin_ = pwd.getpwnam("daemon"), pwd.getpwnam("bin")

    def owned(entry, account):
        for path in (entry, *entry.iterdir()):
            os.chown(path, account.pw_uid, account.pw_gid)
        return entry

    for student in HONEST:
        hand_in(course, student)
    owned(hand_in(course, "daemon"), daemon)
    owned(hand_in(course, "bin"), bin_)
    later = HOUR_AGO + timedelta(minutes=30)
    refused = {
        owned(hand_in(course, "daemon", later, by="bin"), bin_).name: "owned by bin, not by daemon's account",
        owned(hand_in(course, "ada", later, by="bin"), bin_).name: "owned by the account of bin, another student",
        hand_in(course, "bin", later, by="root").name: "owned by root, not by bin's account",
    }

    output = collect(course)
    assert collected(course) == {**{student: student for student in HONEST}, "daemon": "daemon", "bin": "bin"}
    for name, reason in refused.items():
        (line,) = refusal_lines(output, name)
        assert reason in line


# --- ids outside the gradebook -------------------------------------------------------------------------------------

@pytest.mark.slow
def test_an_id_outside_the_gradebooks_students_is_collected_only_once_the_instructor_adds_it(course):
    for student in HONEST:
        hand_in(course, student)
    oscar = hand_in(course, "oscar")

    output = collect(course)
    assert collected(course) == {student: student for student in HONEST}
    (line,) = refusal_lines(output, oscar.name)
    assert "oscar is not a student of the gradebook (`nbgrader db student add oscar`" in line

    nbgrader_course.run_nbgrader(course.root, "db", "student", "add", "oscar")
    collect(course)
    assert collected(course)["oscar"] == "oscar"


# --- timestamp.txt ----------------------------------------------------------------------------------------------

@pytest.mark.slow
def test_a_timestamp_file_nbgrader_cannot_read_stops_no_later_update(course):
    """bob's entries hold a timestamp.txt that nbgrader's parse_utc cannot read (OverflowError, then ValueError):
    once collected, each stopped the next `nbgrader collect --update` of the whole class. The collected copy holds the
    time of the entry's name, as nbgrader submit writes both."""
    for student in HONEST:
        hand_in(course, student)
    (next(course.inbound.glob(f"bob+{ASSIGNMENT}+*")) / "timestamp.txt").write_text("99999999999999999999")
    collect(course)

    later = HOUR_AGO + timedelta(minutes=10)
    entries = {student: hand_in(course, student, later, by=f"{student} (later)") for student in HONEST}
    (entries["bob"] / "timestamp.txt").write_text("not a time")
    collect(course, "--update")
    assert collected(course) == {student: f"{student} (later)" for student in HONEST}
    for student in HONEST:
        assert (course.submitted / student / ASSIGNMENT / "timestamp.txt").read_text() == stamp(later)
    collect(course, "--update")  # nothing newer: every collected timestamp.txt is read again


# --- swapped between the check and the copy (in-process) ---------------------------------------------------------

@pytest.mark.slow
def test_an_entry_swapped_for_a_link_after_it_was_checked_is_not_read(course, monkeypatch):
    """bob's entry becomes a link to source/ and carol's a dangling link after collect checked them (nbgrader's
    init_dest runs between the two): neither is collected, nothing of source/ is read, the others are."""
    for student in HONEST:
        hand_in(course, student)
    config = PyFileConfigLoader("nbgrader_config.py", path=str(course.root)).load_config()
    coursedir = CourseDirectory(config=config)
    coursedir.assignment_id = ASSIGNMENT
    exchange = nbgrader_intake.OwnFilesCollect(coursedir=coursedir, authenticator=None, config=config)
    messages = []
    monkeypatch.setattr(exchange.log, "warning", lambda text, *args: messages.append(text % args))

    def swap():
        for student, target in (("bob", course.root / "source" / ASSIGNMENT), ("carol", course.root / "gone")):
            entry = next(course.inbound.glob(f"{student}+{ASSIGNMENT}+*"))
            entry.rename(course.inbound / f".{student}-moved")
            entry.symlink_to(target, target_is_directory=True)

    monkeypatch.setattr(exchange, "init_dest", swap)
    exchange.start()
    assert collected(course) == {"ada": "ada", "dave": "dave"}
    assert sum("changed since it was checked" in message for message in messages) == 2, messages

