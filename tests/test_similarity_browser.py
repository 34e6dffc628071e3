"""similarity.html in a real browser: Debian's headless Chromium renders it, screenshot and DOM.

A small synthetic class with one verbatim copy, analysed without grading (code evidence only). Chromium dumps the
DOM it built (the notice first, the pair, highlighted passages, no script run from student text) and takes a
screenshot, saved to $ATTNKIT_ARTIFACTS (default /tmp/attnkit-artifacts), never into the repository.
Without chromium the test skips, except in CI (CI set), where a missing browser fails it.
"""

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from autograder.review.page import DISCLAIMER_EN
from autograder.review.run import run_similarity
from devtools.similarity_class import build_class, write_class

pytestmark = [pytest.mark.browser, pytest.mark.slow]

PNG = b"\x89PNG\r\n\x1a\n"
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--hide-scrollbars")


def _chromium():
    for name in ("chromium", "chromium-browser"):
        path = shutil.which(name)
        if path:
            return path
    if os.environ.get("CI"):
        pytest.fail("chromium is missing: .ci/run installs it in CI")
    pytest.skip("chromium is not installed")


def _artifacts():
    folder = Path(os.environ.get("ATTNKIT_ARTIFACTS", "/tmp/attnkit-artifacts"))
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def test_similarity_page_renders_in_chromium(tmp_path, repo_root):
    chromium = _chromium()
    plan = build_class(8, seed=2, planted_per_kind=1, book_pairs=0)
    submitted = write_class(plan, tmp_path / "submitted", repo_root)
    hostile = submitted / "<b>x"  # a folder name that would be markup if it were not escaped
    shutil.copytree(submitted / plan.students[0].id, hostile)
    run = run_similarity(submitted, tmp_path / "out")
    url = run.html.resolve().as_uri()
    profile = tmp_path / "profile"
    dom = subprocess.run([chromium, *FLAGS, f"--user-data-dir={profile}", "--dump-dom", url],
                         capture_output=True, text=True, timeout=90, check=True).stdout
    assert DISCLAIMER_EN.split(".")[0] in dom
    assert dom.index('id="notice"') < dom.index('id="pairs"')
    assert "<mark>" in dom and 'class="cells"' in dom
    # As text, never as an element (Chromium serialises attribute values with < and > as they are).
    assert "<td>&lt;b&gt;x</td>" in dom and "<td><b>" not in dom

    screenshot = _artifacts() / "similarity.png"
    screenshot.unlink(missing_ok=True)
    subprocess.run([chromium, *FLAGS, f"--user-data-dir={profile}", "--window-size=1400,1800",
                    f"--screenshot={screenshot}", url], capture_output=True, timeout=90, check=True)
    assert screenshot.read_bytes().startswith(PNG) and screenshot.stat().st_size > 20_000
