"""`attnkit course formgrader DIR [--port N]`: JupyterLab with nbgrader's formgrader, for the course in DIR.

The server listens on 127.0.0.1 only and asks for a fresh random token: a browser on this machine opens the printed
URL (`http://127.0.0.1:PORT/formgrader?token=...`); nobody else on the network reaches it, and a local user without
the token is refused. The token travels to the server in its environment (JUPYTER_TOKEN), which other users cannot
read, never on its command line, which they can (`ps`). The server's own log goes to DIR/formgrader.log (owner-only:
it repeats the URL). It runs in DIR, so nbgrader reads DIR/nbgrader_config.py: Autograde grades in the sandbox, with
the points of the course's own settings file, which that config names (autograder.integrations.course_points); the
launcher says which points those are.
"""

import contextlib
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from autograder.integrations.course_points import points_in_words
from autograder.refusal import Refused
from autograder.safe_text import clean

__all__ = ["free_port", "serve"]

HOST = "127.0.0.1"
LOG_NAME = "formgrader.log"
START_SECONDS = 120  # JupyterLab imports and loads its extensions: seconds on a loaded 2-core machine
STOP_SECONDS = 15
LOG_TAIL_LINES = 30


@dataclass(frozen=True)
class Formgrader:
    process: subprocess.Popen[bytes]
    port: int
    token: str
    log: Path

    @property
    def base_url(self) -> str:
        return f"http://{HOST}:{self.port}"

    @property
    def url(self) -> str:
        """What the instructor opens: formgrader's page, with the token."""
        return f"{self.base_url}/formgrader?token={self.token}"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])


def _port_is_free(port: int) -> bool:
    with socket.socket() as sock:
        try:
            sock.bind((HOST, port))
        except OSError:
            return False
        return True


def start(course: Path, port: int | None = None) -> Formgrader:
    """Start the server for the course in `course` and wait until it answers; Refused when it cannot."""
    course = Path(course).absolute()
    if not (course / "nbgrader_config.py").is_file():
        raise Refused(f"course formgrader: {clean(course)} holds no course (no nbgrader_config.py); make one with "
                      "`attnkit course new DIR`")
    if port is None:
        port = free_port()
    elif not 0 < port < 65536:
        raise Refused(f"course formgrader: --port {port} is not a port number")
    elif not _port_is_free(port):
        raise Refused(f"course formgrader: port {port} on {HOST} is in use; give another with --port, or leave "
                      "--port out for a free one")
    token = secrets.token_hex(24)
    command = [sys.executable, "-m", "jupyterlab", "--no-browser", f"--ServerApp.ip={HOST}",
               f"--ServerApp.port={port}", "--ServerApp.port_retries=0", f"--ServerApp.root_dir={course}",
               "--LabApp.news_url=None", "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate"]
    if os.geteuid() == 0:
        command.append("--allow-root")  # Jupyter refuses root without it; said in the docs: run it as a user
    env = dict(os.environ, JUPYTER_TOKEN=token)
    # nbgrader's extension shells out to `alembic`, installed next to this interpreter.
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    log = course / LOG_NAME
    try:
        descriptor = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    except OSError as error:  # a link there (O_NOFOLLOW), a read-only course folder
        raise Refused(f"course formgrader: cannot write the server's log {clean(log)}: {clean(error.strerror)}") \
            from None
    os.fchmod(descriptor, 0o600)  # an older log left readable keeps no token readable
    with os.fdopen(descriptor, "wb") as log_file:
        process = subprocess.Popen(command, cwd=course, env=env, stdin=subprocess.DEVNULL, stdout=log_file,
                                   stderr=subprocess.STDOUT, start_new_session=True)
    server = Formgrader(process, port, token, log)
    try:
        _wait_until_it_answers(server)
    except BaseException:
        stop(server)
        raise
    return server


def _wait_until_it_answers(server: Formgrader) -> None:
    deadline = time.monotonic() + START_SECONDS
    while True:
        if server.process.poll() is not None:
            raise Refused(f"course formgrader: JupyterLab exited with status {server.process.returncode}; the end of "
                          f"{server.log}:\n{log_tail(server.log)}")
        if answers(server):
            return
        if time.monotonic() > deadline:
            raise Refused(f"course formgrader: JupyterLab did not answer on {server.base_url} within "
                          f"{START_SECONDS} s; the end of {server.log}:\n{log_tail(server.log)}")
        time.sleep(0.25)


def answers(server: Formgrader) -> bool:
    request = urllib.request.Request(f"{server.base_url}/api/status",
                                     headers={"Authorization": f"token {server.token}"})
    try:
        with urllib.request.urlopen(request, timeout=2) as response:
            return bool(response.status == 200)
    except (OSError, urllib.error.URLError):
        return False


def log_tail(log: Path) -> str:
    try:
        lines = log.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return "(no log)"
    return clean("\n".join(lines[-LOG_TAIL_LINES:]))


def stop(server: Formgrader) -> int:
    """Stop the server (its whole process group, kernels included); its exit status."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(server.process.pid, signal.SIGTERM)
    try:
        return server.process.wait(timeout=STOP_SECONDS)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(server.process.pid, signal.SIGKILL)
        return server.process.wait()


def serve(course: Path, port: int | None, say: Callable[[str], None]) -> int:
    """Start the server, `say` the URL, and keep it until it exits or Ctrl-C stops it; 0 after Ctrl-C."""
    server = start(course, port)
    say(f"formgrader for {clean(Path(course).absolute())}: open {server.url}")
    say(f"(listening on {HOST} only; the server's log: {server.log}; Ctrl-C stops it)")
    say(points_in_words(course))
    try:
        with _stopped_by_term_and_hangup():
            status = server.process.wait()
    except KeyboardInterrupt:
        stop(server)
        return 0
    if status != 0:
        raise Refused(f"course formgrader: JupyterLab exited with status {status}; the end of {server.log}:\n"
                      f"{log_tail(server.log)}")
    return 0


class _Stop(KeyboardInterrupt):
    """SIGTERM or SIGHUP (a closed terminal): stop the server as Ctrl-C does."""


@contextlib.contextmanager
def _stopped_by_term_and_hangup() -> Iterator[None]:
    # The server runs in a session of its own (Ctrl-C reaches only this process, which stops it cleanly); these
    # signals would otherwise end this process and leave the server running.
    def interrupt(_signum: int, _frame: object) -> None:
        raise _Stop

    previous = {signum: signal.signal(signum, interrupt) for signum in (signal.SIGTERM, signal.SIGHUP)}
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
