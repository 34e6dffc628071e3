"""`attnkit` ends its process as soon as a command returns (autograder.cli.run): the log and the outputs are whole,
and no process of its own is left behind (its zygote is stopped, not left to the parent-death signal)."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from autograder.course.assignment import ASSIGNMENT

CHECKOUT = Path(__file__).resolve().parents[1]


def _session_members(session: int) -> list[str]:
    """The processes still in session `session`: (pid, command) of each."""
    members = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue  # gone meanwhile
        if int(fields[3]) == session:  # after ")": state, ppid, pgrp, session
            members.append(stat.parent.name)
    return members


def test_a_grade_run_ends_with_its_log_and_files_whole_and_nothing_left_running(tmp_path):
    submitted = tmp_path / "submitted"
    shutil.copytree(CHECKOUT / "release" / ASSIGNMENT, submitted / "student1" / ASSIGNMENT,
                    ignore=shutil.ignore_patterns(".ipynb_checkpoints", "*.py", "*.json"))
    process = subprocess.Popen([sys.executable, "-m", "autograder.cli", "-v", "grade", str(submitted), "--out",
                                str(tmp_path / "out"), "--workers", "1"], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, start_new_session=True)
    out, err = process.communicate(timeout=300)
    assert process.returncode == 0, err
    assert _session_members(process.pid) == []
    assert err.rstrip().splitlines()[-1].startswith("attnkit grade: 1 students (1 graded")
    assert (tmp_path / "out" / "grades.csv").read_text(encoding="utf-8").startswith("student_id,")
    assert (tmp_path / "out" / "class_report.html").read_text(encoding="utf-8").rstrip().endswith("</html>")


def test_a_process_that_grades_in_process_stops_its_zygote_when_it_ends(tmp_path):
    """main() called in-process (a test run, another tool) keeps the zygote warm for the next class; when that
    process ends the zygote is stopped and reaped, not left running for the collector to warn about."""
    submitted = tmp_path / "submitted"
    shutil.copytree(CHECKOUT / "release" / ASSIGNMENT, submitted / "student1" / ASSIGNMENT,
                    ignore=shutil.ignore_patterns(".ipynb_checkpoints", "*.py", "*.json"))
    script = ("import sys\nfrom autograder import cli\n"
              f"assert cli.main(['grade', {str(submitted)!r}, '--out', {str(tmp_path / 'out')!r}, '--workers', '1']) "
              "== 0\n")
    process = subprocess.Popen([sys.executable, "-W", "default", "-c", script], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, start_new_session=True)
    _out, err = process.communicate(timeout=300)
    assert process.returncode == 0, err
    assert "ResourceWarning" not in err, err
    assert _session_members(process.pid) == []


def test_what_a_command_prints_into_a_pipe_all_arrives():
    """Printed into a pipe, stdout is block-buffered: the process must not end before it is written out."""
    notebook = CHECKOUT / "release" / ASSIGNMENT / "01_attention_without_weights.ipynb"
    environment = {name: value for name, value in os.environ.items() if name != "PYTHONUNBUFFERED"}  # as at a prompt
    process = subprocess.run([sys.executable, "-m", "autograder.cli", "check", str(notebook), "--json"],
                             capture_output=True, text=True, timeout=300, check=False, env=environment)
    assert process.returncode == 0, process.stderr
    checked = json.loads(process.stdout)
    assert checked["max_score"] > 0 and len(checked["notebooks"][0]["checks"]) > 1
