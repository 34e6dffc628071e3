"""Links from a grading output's class_report.html to what later commands made of it (similarity, LMS exports).

`attnkit similarity` and `attnkit export` call `add_link(grades_dir, label, target)`: the link is kept in
GRADES_DIR/report_links.json and the class report is written again with it. `present_links(grades_dir)` is what
the report shows: the recorded links whose target still exists, as paths relative to the report.
"""

import json
import os
from pathlib import Path

from autograder import class_report, exports

LINKS_FILE = "report_links.json"


def present_links(grades_dir):
    """[(label, href)] of the recorded links whose target exists, href relative to GRADES_DIR."""
    grades_dir = Path(grades_dir)
    links = []
    for label, target in _recorded(grades_dir).items():
        if Path(target).exists():
            links.append((label, Path(os.path.relpath(target, grades_dir.resolve())).as_posix()))
    return links


def add_link(grades_dir, label, target):
    """Record a link to `target` under `label` and write the class report again; False when there is no report."""
    grades_dir = Path(grades_dir)
    if not (grades_dir / class_report.FILE_NAME).exists():
        return False
    recorded = _recorded(grades_dir)
    recorded[label] = str(Path(target).resolve())
    exports.write_atomically(grades_dir / LINKS_FILE, json.dumps(recorded, indent=2, ensure_ascii=False))
    documents = [document for path in sorted((grades_dir / "students").glob("*.json"))
                 if (document := exports.read_student(grades_dir, path.stem)) is not None]
    class_report.write_class_report(grades_dir, documents)
    return True


def _recorded(grades_dir):
    try:
        recorded = json.loads((Path(grades_dir) / LINKS_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return {str(label): str(target) for label, target in recorded.items()} if isinstance(recorded, dict) else {}
