"""The documentation site (docs/, MyST Markdown built by Sphinx) and the README: the site builds with no warning,
every internal link and anchor resolves (a broken one fails the build), external links are on an allow-list (the
build machine reaches no site to fetch them), and every command a page shows is run.

A page shows commands in `console` blocks, one `$ ` line each (a shell fence under another name is refused, so no
command escapes). Each command is either in RUN_HERE, run verbatim by `test_the_pages_commands_run_as_written` (the
commands of one page's section in one shell, in order, starting in the checkout with a fresh HOME), or in
RUN_BY_TEST with the test that runs it; that test must exist. A command on neither list fails. The student's path
(open, check, hints) follows the student guide's own `check(...)` lines; the instructor's (release, collect,
autograde, feedback, export) is the instructor guide's nbgrader course section, run as written.
"""

import ast
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
DOCS = REPO / "docs"
PAGES = (*sorted(DOCS.rglob("*.md")), REPO / "README.md")

# External links are not fetched (no network but the package registries): each one is named here, and a link that
# is not is a failure. An entry no page uses any more is a failure too.
ALLOWED_EXTERNAL_LINKS = {
    "https://nbgrader.readthedocs.io",
    "https://cosmic-ray.readthedocs.io",
}

# Commands a page shows that this file does not run (a server, root, a cluster, minutes of work): the test that
# runs them, or what they do, for real.
DEMO = "tests/test_demo.py::test_attnkit_gives_each_submission_its_declared_outcome"
GRADESCOPE = "tests/test_gradescope.py::test_run_autograder_untouched_submission_scores_0"
K8S = "tests/test_k8s_manifests.py::test_manifest_is_valid_against_the_kubernetes_api_schema"  # validated, not applied
SLURM = "tests/test_slurm.py::test_four_slurm_shards_merge_into_the_grades_of_one_process"
SLURM_RESUME = "tests/test_slurm.py::test_a_task_cancelled_mid_run_and_resubmitted_alone_resumes"
SHARDS = "tests/test_shards.py::test_merged_grades_csv_equals_the_unsharded_one"
HUB = "tests/test_jupyterhub.py::test_the_course_round_trip_on_jupyterhub"
MUTATION = "tests/test_mutation_sample.py::test_every_sampled_mutant_loses_points"
POINTS_EVERYWHERE = "tests/test_points.py::test_the_release_attnkit_grade_and_sandboxed_nbgrader_give_the_files_points"
RUNBOOK = "tests/test_runbook.py::test_the_runbook_from_course_new_to_the_lms_files_with_a_manual_grade_between"
COURSE_POINTS = ("tests/test_course_points.py::"
                 "test_a_change_of_points_keeps_the_kit_and_manual_grades_and_every_grader_of_the_course_uses_it")
RUN_BY_TEST = {
    "make demo": DEMO,
    "make test": "tests/test_docs.py::test_make_test_runs_the_test_suite",
    "make test-fast": "tests/test_suite_lanes.py::test_make_test_fast_starts_no_venv_browser_hub_or_cluster",
    ".venv/bin/jupyter lab release/attention":
        "tests/test_browser.py::test_mask_hiding_the_diagonal_climbs_the_three_rungs",
    "ATTNKIT_LANG=zh .venv/bin/jupyter lab release/attention":
        "tests/test_browser.py::test_student_kit_kernel_shows_the_same_feedback_in_chinese",
    ".venv/bin/python -m devtools.bench --n 8":
        "tests/test_grade_cli.py::test_bench_runs_plain_and_sandboxed_nbgrader_and_attnkit_on_the_same_submissions_and_they_agree",
    "sudo make hub": HUB,
    "sudo make hub-clean": HUB,
    ".venv/bin/attnkit gradescope build /tmp/ag/attnkit-autograder.zip": GRADESCOPE,
    "mkdir -p /tmp/ag/root/source /tmp/ag/root/submission": GRADESCOPE,
    "unzip -q /tmp/ag/attnkit-autograder.zip -d /tmp/ag/root/source": GRADESCOPE,
    "cp /tmp/ag/root/source/run_autograder /tmp/ag/root/": GRADESCOPE,
    "cp release/attention/*.ipynb /tmp/ag/root/submission/": GRADESCOPE,
    "ATTNKIT_AUTOGRADER_ROOT=/tmp/ag/root ATTNKIT_PYTHON=$PWD/.venv/bin/python /tmp/ag/root/run_autograder": GRADESCOPE,
    "cat /tmp/ag/root/results/results.json": GRADESCOPE,
    ".venv/bin/attnkit export grades/ --canvas canvas-gradebook.csv --out attention-canvas.csv":
        "tests/test_lms.py::test_canvas_import_file_has_the_documented_layout",
    ".venv/bin/attnkit export grades/ --moodle moodle-grades.csv --id-column email --out attention-moodle.csv":
        "tests/test_lms.py::test_moodle_import_file_identifier_and_grade_columns",
    "attnkit grade submitted/ --shard 0/8 --out grades/shards/0-of-8": SHARDS,
    "attnkit merge grades/shards/*-of-8 --out grades/merged": SHARDS,
    "docker build -f deploy/Dockerfile -t registry.example.org/attnkit:0.1.0 .": K8S,
    "docker push registry.example.org/attnkit:0.1.0": K8S,
    "kubectl apply -f deploy/k8s-indexed-job.yaml": K8S,
    "kubectl wait --for=condition=complete --timeout=6h job/attnkit-grade": K8S,
    "kubectl apply -f deploy/k8s-merge-job.yaml": K8S,
    "export ATTNKIT=$PWD/.venv/bin/attnkit": SLURM,
    "deploy/slurm-array.sh /course/submitted /course/grades 4 --cpus-per-task=1 --mem=1G": SLURM,
    "sbatch --parsable --array=2 --cpus-per-task=1 --mem=1G deploy/slurm-array.sh /course/submitted /course/grades 4":
        SLURM_RESUME,
    "sbatch --dependency=afterok:3 --cpus-per-task=1 --mem=1G deploy/slurm-array.sh /course/submitted /course/grades 4":
        SLURM_RESUME,
    ".venv/bin/attnkit similarity submitted/ --out similarity/ --grades grades/":
        "tests/test_similarity.py::test_planted_pairs_outrank_every_honest_pair",
    "make release": "tests/test_release.py::test_committed_release_is_in_sync_with_source",
    "make check-release": "tests/test_release.py::test_sync_check_catches_a_stale_release",
    "make mutation": MUTATION,
    ".venv/bin/python -m devtools.mutation --sample 40": MUTATION,
    "make grid": "tests/test_variant_grid.py::test_every_mistake_loses_points_and_is_named_with_its_own_misconception",
    ".venv/bin/python -m devtools.precision":
        "tests/test_precision.py::test_no_variant_of_the_grid_gets_a_wrong_first_name",
    ".venv/bin/python -m devtools.heldout_eval --set heldout -v":
        "tests/test_heldout_attempts.py::test_the_command_prints_the_table_and_every_wrong_name",
    ".venv/bin/python -m devtools.surprises":
        "tests/test_surprises.py::test_no_buggy_student_passes_every_public_check_and_loses_points",
    ".venv/bin/python -m devtools.student_kit_agreement":
        "tests/test_student_kit.py::test_kit_checks_agree_with_live_public_checks",
    ".venv/bin/python -m devtools.verdict_changes --against 4d17600":
        "tests/test_verdict_changes.py::test_against_main_before_issue_45_the_renormalising_route_is_the_only_causal_attention_change",
    # docs/student-kit.md: the wheel as `make kit-wheel` builds it, installed by the page's terminal line.
    "make kit-wheel":
        "tests/test_student_kit_torch_range.py::test_notebook_line_installs_the_kit_and_keeps_the_learners_torch",
    ".venv/bin/python -m devtools.kit_torch_matrix --docs --drop":
        "tests/test_student_kit_torch_range.py::test_the_range_is_the_verified_one",
    ".venv/bin/python -m devtools.kit_first_check":
        "tests/test_student_kit.py::test_an_exercise_reads_and_decodes_its_own_checks_only",
    "python -m pip install attnkit_student_kit-*.whl":
        "tests/test_student_kit_venv.py::test_solved_notebooks_pass_every_public_check",
    "make similarity-bench":
        "tests/test_similarity_bench.py::test_3000_students_every_planted_pair_on_top_and_few_honest_pairs_flagged",
    # docs/instructor/export.md: the gradebook route, run verbatim in the runbook's course (Canvas's and Moodle's own
    # export files, a manual grade from formgrader, the rehearsal student named, then removed)
    "attnkit export . --canvas canvas-gradebook.csv --out attention-canvas.csv": RUNBOOK,
    "attnkit export . --moodle moodle-grades.csv --id-column email --out attention-moodle.csv": RUNBOOK,
    # docs/instructor/setup.md: a server, until Ctrl-C
    "attnkit course formgrader ~/attnkit-course":
        "tests/test_course_setup.py::test_formgrader_answers_on_the_printed_url_and_chromium_shows_the_course",
    # docs/instructor/points.md: points in course_settings.toml (test_course_points runs these lines verbatim), regrades
    # of one exercise or notebook
    ".venv/bin/attnkit points": "tests/test_points.py::test_attnkit_points_lists_the_points_in_force",
    ".venv/bin/attnkit course points ~/attnkit-course": COURSE_POINTS,
    ".venv/bin/attnkit course points ~/attnkit-course --set softmax_naive.random=3 --set softmax_stable.large=0":
        COURSE_POINTS,
    "(cd ~/attnkit-course && nbgrader release_assignment attention --force)": COURSE_POINTS,
    ".venv/bin/attnkit course release ~/attnkit-course":
        "tests/test_course_points.py::test_a_refused_change_of_points_leaves_the_course_as_it_was",
    ".venv/bin/attnkit grade ~/attnkit-course/submitted/ --out ~/attnkit-course/grades/ --exercise causal_mask":
        "tests/test_points.py::test_a_regrade_of_one_exercise_changes_only_its_scores_and_rewrites_the_totals",
    ".venv/bin/attnkit grade ~/attnkit-course/submitted/ --out ~/attnkit-course/grades/ --notebook 03_causal_attention":
        "tests/test_points.py::test_a_regrade_of_a_notebook_regrades_each_of_its_exercises",
    "(cd ~/attnkit-course && nbgrader autograde attention --notebook 03_causal_attention --force)": POINTS_EVERYWHERE,
    # docs/instructor/grade.md, "How long grading takes": the bench's own tiny run (2 students, both graders)
    ".venv/bin/python -m devtools.class_times --students 30":
        "tests/test_class_times.py::test_a_tiny_class_is_timed_with_both_graders_and_they_agree",
    ".venv/bin/python -m devtools.class_times --students 300":
        "tests/test_class_times.py::test_a_tiny_class_is_timed_with_both_graders_and_they_agree",
    ".venv/bin/python -m devtools.class_times --students 3000 --limit 1080":
        "tests/test_class_times.py::test_a_tiny_class_is_timed_with_both_graders_and_they_agree",
}
# Commands this file runs as the pages show them (test_the_pages_commands_run_as_written). A command on no list fails
# test_the_pages_show_commands_...: a new command is never run before someone has decided that it is safe to run here.
RUN_HERE = {
    "make .venv",
    "make docs",
    "make lint",
    ".venv/bin/python -m pytest -q -p no:cacheprovider tests/test_glossary.py",
    ".venv/bin/python -m devtools.mutation --list",
    # the instructor guide's course: release, collect, autograde, feedback, export
    "source .venv/bin/activate",
    "cd ~/attnkit-course",
    "nbgrader autograde attention",
    "nbgrader generate_feedback attention",
    "nbgrader export",
    ".venv/bin/attnkit check release/attention/01_attention_without_weights.ipynb",
    ".venv/bin/attnkit check release/attention/0*.ipynb --json",
    ".venv/bin/kubernetes-validate --strict -k 1.29 deploy/k8s-indexed-job.yaml deploy/k8s-merge-job.yaml",
    # docs/instructor/setup.md's runbook: a course of one's own, a student rehearsed with the instructor's login
    "attnkit course new ~/attnkit-course --roster docs/instructor/roster-example.csv",
    'nbgrader db assignment add attention --duedate="2027-01-15 17:00:00 Asia/Shanghai"',
    "nbgrader release_assignment attention",
    "mkdir -p ~/rehearsal && cd ~/rehearsal",
    "nbgrader fetch_assignment attention --course=attnkit --Exchange.root=$HOME/attnkit-course/exchange",
    "nbgrader submit attention --course=attnkit --Exchange.root=$HOME/attnkit-course/exchange",
    'nbgrader db student add "$(id -un)" --last-name=Rehearsal',
    "nbgrader collect attention",
    "nbgrader release_feedback attention",
    "attnkit report ~/attnkit-course",
    "cd ~/rehearsal",
    "nbgrader fetch_feedback attention --course=attnkit --Exchange.root=$HOME/attnkit-course/exchange",
    # docs/instructor/setup.md: the rehearsing login taken out of the course again (run after the runbook, by it)
    'attnkit course remove-student ~/attnkit-course "$(id -un)"',
    # docs/instructor/grade.md: attnkit grade on a course folder's submitted/, from the checkout
    "mkdir -p ~/attnkit-course/submitted/student1/attention",
    "cp release/attention/*.ipynb ~/attnkit-course/submitted/student1/attention/",
    ".venv/bin/attnkit grade ~/attnkit-course/submitted/ --out ~/attnkit-course/grades/",
}
# Fence languages that hold shell commands under another name: refused, so that every command is in a console block.
SHELL_FENCES = {"sh", "bash", "shell", "zsh", "shell-session", "shellsession", "sh-session", ""}
FENCE = re.compile(r"^(`{3,}|:{3,})(\S*)[^\n]*\n(.*?)^\1\s*$", re.M | re.S)
EXTERNAL_LINK = re.compile(r"https?://[^\s)>`\"']+")
MARKDOWN_LINK = re.compile(r"\]\(([^)\s]+)\)")


@dataclass(frozen=True)
class Command:
    page: str  # relative to the repository
    section: str  # the heading above the block ("" above the first)
    line: str  # as shown, the `$ ` removed
    command: str  # without a trailing comment

    def __str__(self) -> str:
        return f"{self.page} ({self.section or 'top'}): {self.line}"


def fences(text: str) -> list[tuple[str, str, int]]:
    """(language, body, offset) of every fenced block of a MyST page."""
    return [(match.group(2).strip("{}"), match.group(3), match.start()) for match in FENCE.finditer(text)]


def without_comment(line: str) -> str:
    # Comments in the pages' commands stand after two spaces or more and a '#'.
    return re.split(r"\s{2,}#|^#", line, maxsplit=1)[0].strip()


def page_commands(page: Path) -> list[Command]:
    text = page.read_text(encoding="utf-8")
    blocks = fences(text)
    spans = [(match.start(), match.end()) for match in FENCE.finditer(text)]
    # A line starting with '#' inside a block (a shell comment, Python) is no heading.
    headings = [(match.start(), match.group(1)) for match in re.finditer(r"^#{1,3} (.+)$", text, re.M)
                if not any(start <= match.start() < end for start, end in spans)]
    commands = []
    for language, body, offset in blocks:
        if language != "console":
            continue
        section = ""
        for start, heading in headings:
            if start < offset:
                section = heading
        for line in body.splitlines():
            if line.startswith("$ "):
                shown = line[2:].strip()
                commands.append(Command(str(page.relative_to(REPO)), section, shown, without_comment(shown)))
    return commands


def all_commands() -> list[Command]:
    return [command for page in PAGES for command in page_commands(page)]


def run_here(commands: list[Command]) -> list[Command]:
    return [command for command in commands if command.command in RUN_HERE]


@pytest.mark.slow
def test_the_site_builds_without_a_warning(tmp_path):
    """Warnings are errors (-W), references nitpicky (-n); myst_heading_anchors makes every link to a heading an
    anchor Sphinx resolves."""
    built = subprocess.run([sys.executable, "-m", "sphinx", "-W", "--keep-going", "-n", "-q", "-b", "html",
                            "-d", str(tmp_path / "doctrees"), str(DOCS), str(tmp_path / "html")],
                           capture_output=True, text=True, cwd=REPO)
    assert built.returncode == 0, built.stdout + built.stderr
    assert "WARNING" not in built.stderr
    for page in DOCS.glob("*.md"):
        assert (tmp_path / "html" / page.with_suffix(".html").name).is_file(), page.name


@pytest.mark.slow
def test_a_broken_link_or_anchor_fails_the_build(tmp_path):
    """The build's link check can fail: a copy of the site with a link to a missing page and to a missing heading."""
    copy = tmp_path / "docs"
    subprocess.run(["cp", "-r", str(DOCS), str(copy)], check=True)
    guide = copy / "ta-guide.md"
    guide.write_text(guide.read_text(encoding="utf-8") + "\n[a](no-such-page.md) [b](security.md#no-such-heading)\n",
                     encoding="utf-8")
    built = subprocess.run([sys.executable, "-m", "sphinx", "-W", "--keep-going", "-n", "-q", "-b", "html",
                            "-d", str(tmp_path / "doctrees"), str(copy), str(tmp_path / "html")],
                           capture_output=True, text=True)
    assert built.returncode != 0
    assert "no-such-page.md" in built.stderr and "no-such-heading" in built.stderr


def test_external_links_are_on_the_allow_list():
    found = {link.rstrip(".,;") for page in PAGES for link in EXTERNAL_LINK.findall(page.read_text(encoding="utf-8"))}
    assert found <= ALLOWED_EXTERNAL_LINKS, f"not on the allow-list: {sorted(found - ALLOWED_EXTERNAL_LINKS)}"
    assert ALLOWED_EXTERNAL_LINKS <= found, f"on the allow-list, on no page: {sorted(ALLOWED_EXTERNAL_LINKS - found)}"


def test_the_readme_is_a_short_front_page_whose_links_resolve():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) < 150
    assert "make demo" in readme and "make test" in readme and "make docs" in readme
    targets = [target for target in MARKDOWN_LINK.findall(readme) if not target.startswith(("http://", "https://"))]
    assert {"docs/student-guide.md", "docs/instructor/index.md", "docs/security.md"} <= set(targets)
    for target in targets:
        assert (REPO / target.split("#")[0]).is_file(), target


def test_every_shell_block_is_a_console_block():
    for page in PAGES:
        for language, body, _offset in fences(page.read_text(encoding="utf-8")):
            assert language not in SHELL_FENCES, f"{page.name}: a ```{language} block; use console (or text):\n{body}"


def test_the_pages_show_commands_and_every_one_is_run_here_or_by_a_named_test():
    commands = all_commands()
    assert len(commands) >= 30
    shown = {command.command for command in commands}
    unplaced = [str(command) for command in commands if command.command not in RUN_HERE | set(RUN_BY_TEST)]
    assert not unplaced, f"run here (RUN_HERE) or name the test that runs it (RUN_BY_TEST): {unplaced}"
    assert not RUN_HERE & set(RUN_BY_TEST)
    listed = RUN_HERE | set(RUN_BY_TEST)
    assert listed <= shown, f"listed here, on no page: {sorted(listed - shown)}"
    defined: dict[str, set[str]] = {}
    for command, test_id in RUN_BY_TEST.items():
        path, name = test_id.split("::")
        if path not in defined:
            tree = ast.parse((REPO / path).read_text(encoding="utf-8"))
            defined[path] = {node.name for node in ast.walk(tree) if isinstance(node, ast.FunctionDef)}
        assert name in defined[path], f"{command!r} names {test_id}, which does not exist"


def test_make_test_runs_the_test_suite():
    """`make test` (the front page and the contributor guide show it) runs pytest over tests/ with the venv."""
    dry = subprocess.run(["make", "-n", "test"], capture_output=True, text=True, cwd=REPO, check=True).stdout
    assert re.search(r"\.venv/bin/python -m pytest\b", dry), dry
    assert "pyproject.toml" in (REPO / "Makefile").read_text(encoding="utf-8")
    assert 'testpaths = ["tests"]' in (REPO / "pyproject.toml").read_text(encoding="utf-8")


@pytest.mark.slow
def test_the_student_guides_check_and_hint_lines_climb_the_three_rungs():
    """The student's path from the guide's own lines: a check cell on a mask that also hides the diagonal shows the
    symptom and a question, `hint=True` the reproduced mistake, `hint=3` what to change; in English and in Chinese."""
    rung_labels = {"en": ("ask yourself — ", "reproduced mistake — ", "what to change — "),  # messages.py's labels
                   "zh": ("想一想：", "重现出的错误：", "怎么改：")}
    for page, lang in (("student-guide.md", "en"), ("student-guide.zh-cn.md", "zh")):
        labels = rung_labels[lang]
        cells = [body for language, body, _ in fences((DOCS / page).read_text(encoding="utf-8"))
                 if language == "python" and "check(" in body]
        assert len(cells) == 2 and "hint=True" in cells[1] and "hint=3" in cells[1], cells
        rung_lines = cells[1].strip().splitlines()
        program = "\n".join([
            "import torch",
            "def causal_mask(num_tokens):  # hides each token from itself too",
            "    return torch.triu(torch.ones(num_tokens, num_tokens, dtype=torch.bool))",
            cells[0], "print('@@rung')", rung_lines[0], "print('@@rung')", rung_lines[1]])
        ran = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, cwd=REPO,
                             env={**os.environ, "ATTNKIT_LANG": lang}, timeout=300)
        assert ran.returncode == 0, ran.stderr
        first, second, third = ran.stdout.split("@@rung")
        assert labels[0] in first and labels[1] not in first and labels[2] not in first, first
        assert labels[1] in second and labels[2] not in second, second
        assert labels[2] in third, third


# Sections whose commands a test of their own runs verbatim, with more checks after them: not run twice.
SECTIONS_RUN_BY_TEST = {
    ("docs/instructor/setup.md", "A course of your own, step by step"):
        "tests/test_runbook.py::test_the_runbook_from_course_new_to_the_lms_files_with_a_manual_grade_between",
    ("docs/instructor/setup.md", "Remove the rehearsal student"):
        "tests/test_runbook.py::test_the_runbook_from_course_new_to_the_lms_files_with_a_manual_grade_between",
}


def sections_run_here() -> dict[tuple[str, str], list[Command]]:
    sections: dict[tuple[str, str], list[Command]] = {}
    for command in run_here(all_commands()):
        if (command.page, command.section) not in SECTIONS_RUN_BY_TEST:
            sections.setdefault((command.page, command.section), []).append(command)
    return sections


def test_the_sections_run_by_a_test_of_their_own_exist_and_so_do_their_tests():
    pages = {(command.page, command.section) for command in all_commands()}
    for section, test_id in SECTIONS_RUN_BY_TEST.items():
        assert section in pages, section
        path, name = test_id.split("::")
        assert f"def {name}(" in (REPO / path).read_text(encoding="utf-8"), test_id


def git_status() -> str:
    return subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"], capture_output=True, text=True,
                          cwd=REPO, check=True).stdout


@pytest.mark.slow
@pytest.mark.parametrize("section", sorted(sections_run_here()), ids=lambda section: f"{section[0]}:{section[1]}")
def test_the_pages_commands_run_as_written(section, tmp_path):
    """One section's commands, verbatim and in order, in one bash from the checkout with a fresh HOME (the
    instructor guide's course goes to ~/attnkit-course): each must succeed, and the checkout is left as it was."""
    commands = sections_run_here()[section]
    before = git_status()
    script = "set -euo pipefail\n" + "".join(f"echo '>>> {c.line}'\n{c.line}\n" for c in commands)
    home = tmp_path / "home"
    home.mkdir()
    ran = subprocess.run(["bash", "-c", script], capture_output=True, text=True, cwd=REPO, timeout=900,
                         env={**os.environ, "HOME": str(home), "DOCS_OUT": str(tmp_path / "site")})
    assert ran.returncode == 0, f"{section}:\n{ran.stdout[-4000:]}\n{ran.stderr[-4000:]}"
    assert git_status() == before
    if section[1] == "attnkit grade":
        grades = (home / "attnkit-course" / "grades" / "grades.csv").read_text(encoding="utf-8")
        assert grades.splitlines()[1].startswith("student1,"), grades
