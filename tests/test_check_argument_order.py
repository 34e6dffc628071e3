"""One argument order for a check's functions: the thing observed first, then the case (`probe(namespace, case)`,
`judge(record, case, expectations)`, `expect(record, case)`), and mypy refuses a Check whose typed judge or expect
takes them the other way round (autograder.checking.check_types: Check is generic in its case and record)."""

import subprocess
import sys
import textwrap

from autograder.isolation.protected import checkout_root

DECLARED = textwrap.dedent('''\
    from collections.abc import Mapping
    from typing import Any, TypedDict

    from autograder.checking.check_types import Check, Verdict
    from autograder.checking.expectations import Expectations


    class Case(TypedDict):
        seed: int


    class Record(TypedDict):
        output: list[float]


    def cases(rng: Any) -> list[Case]:
        return [{"seed": 1}]


    def probe(namespace: Mapping[str, Any], case: Case) -> Record:
        return {"output": [float(case["seed"])]}


    def judge(record: Record, case: Case, expectations: Expectations) -> Verdict:
        return Verdict(record["output"] == [float(case["seed"])])


    def expect(record: Record, case: Case) -> Expectations:
        return Expectations({})


    def expect_the_other_way_round(case: Case, record: Record) -> Expectations:
        return Expectations({})


    def judge_the_other_way_round(case: Case, record: Record, expectations: Expectations) -> Verdict:
        return Verdict(True)


    RIGHT = Check(id="x.right", exercise="x", points=1, hidden=False, title={"en": "", "zh": ""}, cases=cases,
                  probe=probe, judge=judge, expect=expect)
    ''')
SWAPPED = (  # one Check with its expect the other way round, one with its judge
    "WRONG_EXPECT = Check(id='x.expect', exercise='x', points=1, hidden=False, title={}, cases=cases, probe=probe,\n"
    "                     judge=judge, expect=expect_the_other_way_round)\n"
    "WRONG_JUDGE = Check(id='x.judge', exercise='x', points=1, hidden=False, title={}, cases=cases, probe=probe,\n"
    "                    judge=judge_the_other_way_round, expect=expect)\n")


def test_mypy_accepts_a_check_in_the_one_order_and_refuses_either_function_the_other_way_round(tmp_path):
    (tmp_path / "right.py").write_text(DECLARED, encoding="utf-8")
    (tmp_path / "swapped.py").write_text(DECLARED + SWAPPED, encoding="utf-8")
    config = tmp_path / "mypy.ini"
    config.write_text("[mypy]\nfollow_imports = silent\nignore_missing_imports = true\n", encoding="utf-8")
    run = subprocess.run([sys.executable, "-m", "mypy", "--config-file", str(config), "--cache-dir", "/dev/null",
                          "--no-incremental", str(tmp_path / "right.py"), str(tmp_path / "swapped.py")],
                         cwd=checkout_root(), capture_output=True, text=True, timeout=300)
    errors = [line for line in run.stdout.splitlines() if ": error:" in line]
    assert not [line for line in errors if "right.py" in line], run.stdout
    wrong_lines = {int(line.split(":")[1]) for line in errors if "swapped.py" in line and '"CaseT" of "Check"' in line}
    first = len(DECLARED.splitlines()) + 1
    assert wrong_lines == {first, first + 2}, run.stdout + run.stderr  # each Check(...) refused where it starts
