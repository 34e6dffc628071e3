"""`python -m devtools.demo_diff BEFORE AFTER`: are two `make demo --keep` folders the same outputs?

Compares every file of two demo folders (`python -m devtools.demo --keep DIR`) byte for byte, after normalising only
what cannot be equal by construction:
- the demo folder's own path, wherever it is written;
- the grader-code fingerprint (grading.json's "catalogue" and "students", each record's "submission_hash"): it
  hashes every .py file of the grader and the reference, so any code change changes it (and resuming regrades);
- nbgrader's execution timestamps, and how Jupyter chunked a cell's stdout in the in-kernel course (a cell's stream
  text is joined; its other outputs are compared as a set);
- sqlite gradebooks (skipped: grades.csv, exported from them, is compared).
Prints the files that still differ; exit status 1 when any does.
"""

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

FINGERPRINT_KEYS = {"submission_hash", "catalogue"}
HEX_DIGEST = re.compile(r"[0-9a-f]{64}")


def normalised_json(value: Any) -> Any:
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            if key in FINGERPRINT_KEYS:
                item = "<fingerprint>"
            elif key == "execution":
                item = "<timestamps>"
            elif key == "students" and isinstance(item, dict) and all(
                    isinstance(digest, str) and HEX_DIGEST.fullmatch(digest) for digest in item.values()):
                item = dict.fromkeys(item, "<fingerprint>")
            out[key] = normalised_json(item)
        return out
    if isinstance(value, list):
        return [normalised_json(item) for item in value]
    return value


def normalised_notebook(notebook: dict[str, Any]) -> dict[str, Any]:
    for cell in notebook.get("cells", []):
        outputs = cell.get("outputs")
        if outputs is None:
            continue
        streams: dict[str, str] = {}
        others = []
        for output in outputs:
            if output.get("output_type") == "stream":
                text = output.get("text", "")
                name = output.get("name", "")
                streams[name] = streams.get(name, "") + ("".join(text) if isinstance(text, list) else text)
            else:
                others.append(json.dumps(output, sort_keys=True))
        cell["outputs"] = [streams, sorted(others)]
    return notebook


def comparable(path: Path, root: Path) -> bytes | str:
    data = path.read_bytes().replace(str(root).encode(), b"<DEMO>")
    if path.suffix not in (".json", ".ipynb"):
        return data
    try:
        document = json.loads(data)
    except ValueError:
        return data
    if path.suffix == ".ipynb":
        document = normalised_notebook(document)
    return json.dumps(normalised_json(document), sort_keys=True)


def differing(before: Path, after: Path) -> tuple[int, list[str]]:
    """(files compared, the relative paths that differ)."""
    files = sorted({p.relative_to(before) for p in before.rglob("*") if p.is_file()}
                   | {p.relative_to(after) for p in after.rglob("*") if p.is_file()})
    files = [relative for relative in files if relative.suffix != ".db"]
    found = []
    for relative in files:
        if not (before / relative).is_file() or not (after / relative).is_file():
            found.append(f"{relative} (only on one side)")
        elif comparable(before / relative, before) != comparable(after / relative, after):
            found.append(str(relative))
    return len(files), found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("before", type=Path)
    parser.add_argument("after", type=Path)
    args = parser.parse_args(argv)
    count, found = differing(args.before.resolve(), args.after.resolve())
    print(f"{count} files compared (sqlite gradebooks left out): {count - len(found)} the same, {len(found)} differ")
    for relative in found:
        print(f"  differs: {relative}")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
