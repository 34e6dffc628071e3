"""What a new kernel does: run code in a fresh interpreter of this venv and return the words it printed."""

import subprocess
import sys
import textwrap


def fresh(code: str) -> list[str]:
    """Run `code` (dedented) with this interpreter; its stdout split into words. A non-zero exit fails the test."""
    process = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                             timeout=300, check=False)
    assert process.returncode == 0, process.stderr
    return process.stdout.split()
