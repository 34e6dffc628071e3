"""`python -m devtools.hub up|down` (`make hub`, `make hub-clean`): the course on a one-machine JupyterHub.

`up` needs root. It builds two environments with Debian's python3 (the hub's users cannot run an interpreter under
/root), cached under ENVIRONMENTS: the students' (JupyterLab, nbgrader's student extensions only, the student kit)
and the instructor's (the full attnkit from this checkout, formgrader). It creates local Linux users whose names
start with a prefix (`attnkit-hub-`: an instructor and two students) with homes, an nbgrader exchange and the hub's
state under one root folder, writes each user's nbgrader settings and the instructor's course, and runs JupyterHub
(deploy/jupyterhub/jupyterhub_config.py) with configurable-http-proxy from npm on 127.0.0.1 until Ctrl-C.
`down` removes the users of that prefix and the root folder. tests/test_jupyterhub.py uses the same functions with
a prefix of its own.
"""

import argparse
import contextlib
import fcntl
import hashlib
import json
import logging
import os
import pwd
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import tomllib
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from autograder.integrations.student_kit.build import build as build_student_kit

log = logging.getLogger("attnkit.hub")

REPO = Path(__file__).resolve().parents[1]
HUB_CONFIG = REPO / "deploy" / "jupyterhub" / "jupyterhub_config.py"
# Readable and runnable by every local user, unlike this checkout's venv interpreter (often under /root).
SYSTEM_PYTHON = Path("/usr/bin/python3")
ENVIRONMENTS = Path("/opt/attnkit-hub")
PROXY_PACKAGE = "configurable-http-proxy@5.3.0"
PINS = ("torch==2.13.0", "jupyterlab==4.6.6", "notebook==7.6.5", "nbgrader==0.9.6", "jupyterhub==6.1.1")
STUDENT_PACKAGES = (*PINS, "numpy", "matplotlib", "ipykernel")
# What students must not have: making assignments, formgrader and the course list are the instructor's.
INSTRUCTOR_ONLY_SERVER_EXTENSIONS = ("nbgrader.server_extensions.formgrader", "nbgrader.server_extensions.course_list")
INSTRUCTOR_ONLY_LAB_PLUGINS = ("@jupyter/nbgrader:formgrader", "@jupyter/nbgrader:course-list",
                               "@jupyter/nbgrader:create-assignment")
# Owns the instructor's environment, which holds the reference: its instructors may read it, students may not.
STAFF_GROUP = "attnkit-hub-staff"
COURSE_ID = "attnkit"
COURSE_FOLDER = "attnkit-course"  # in the instructor's home
START_S = 60
ROOT_MARKER = ".attnkit-hub"  # in a root folder create_site made: the only kind remove_site deletes


class HubError(RuntimeError):
    """A step of setting up or running the hub failed; the message says which and why."""


@dataclass(frozen=True)
class Environments:
    student: Path
    instructor: Path
    proxy: Path  # configurable-http-proxy's executable


@dataclass(frozen=True)
class HubSite:
    """One hub: its users (names start with `prefix`), its folders (all under `root`) and its ports."""

    root: Path
    prefix: str
    password: str
    port: int
    hub_port: int
    proxy_api_port: int

    @property
    def instructor(self) -> str:
        return f"{self.prefix}instructor"

    @property
    def students(self) -> tuple[str, str]:
        return f"{self.prefix}student1", f"{self.prefix}student2"

    @property
    def users(self) -> tuple[str, ...]:
        return (self.instructor, *self.students)

    @property
    def state(self) -> Path:
        return self.root / "state"

    @property
    def exchange(self) -> Path:
        return self.root / "exchange"

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def home(self, user: str) -> Path:
        return self.root / "home" / user

    @property
    def course(self) -> Path:
        return self.home(self.instructor) / COURSE_FOLDER


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def new_site(root: Path, prefix: str, port: int | None = None) -> HubSite:
    return HubSite(root=root, prefix=prefix, password=secrets.token_urlsafe(12), port=port or free_port(),
                   hub_port=free_port(), proxy_api_port=free_port())


def missing_requirements() -> list[str]:
    """Why a hub cannot run here (empty when it can): root, Debian's python3 with venv, node and npm."""
    missing = []
    if os.geteuid() != 0:
        missing.append("root (it creates Linux users and runs each user's server as that user)")
    if not SYSTEM_PYTHON.is_file():
        missing.append(f"{SYSTEM_PYTHON} (Debian's python3, with python3-venv)")
    missing += [f"{tool} (Debian's nodejs)" for tool in ("node", "npm") if not shutil.which(tool)]
    if not shutil.which("useradd"):
        missing.append("useradd (Debian's passwd)")
    return missing


def _run(command: list[str], **kwargs) -> subprocess.CompletedProcess:
    process = subprocess.run(command, capture_output=True, text=True, check=False, **kwargs)
    if process.returncode != 0:
        tail = "\n".join((process.stdout + process.stderr).splitlines()[-15:])
        raise HubError(f"`{' '.join(command)}` failed with exit code {process.returncode}:\n{tail}")
    return process


def _pip(environment: Path, *args: str) -> None:
    _run([str(environment / "bin" / "python"), "-m", "pip", "install", "--quiet", *args],
         env={**_clean_environment(), "PIP_DISABLE_PIP_VERSION_CHECK": "1"})


def _clean_environment() -> dict[str, str]:
    return {key: value for key, value in os.environ.items() if key not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}


@contextlib.contextmanager
def _locked(folder: Path) -> Iterator[None]:
    """One builder at a time (a test and `make hub` may start together)."""
    folder.mkdir(parents=True, exist_ok=True)
    folder.chmod(0o755)
    with open(folder / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def _dependencies_key() -> str:
    """Changes when the pins or the project's dependencies change: the cached environments are then rebuilt."""
    digest = hashlib.sha256()
    digest.update((REPO / "constraints.txt").read_bytes())
    # The project's dependency lists only: an edit elsewhere in pyproject.toml (pytest's settings) keeps the cache.
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    digest.update(json.dumps([project.get("dependencies", []), project.get("optional-dependencies", {})],
                             sort_keys=True).encode())
    digest.update(" ".join(STUDENT_PACKAGES).encode())
    return digest.hexdigest()[:16]


def _fresh_venv(path: Path, packages: list[str]) -> None:
    """A venv of Debian's python3 with `packages`, unless one was made for the same dependencies."""
    stamp = path / ".attnkit-dependencies"
    key = _dependencies_key()
    if stamp.is_file() and stamp.read_text() == key:
        return
    shutil.rmtree(path, ignore_errors=True)
    log.info("building %s (about a minute)", path)
    _run([str(SYSTEM_PYTHON), "-m", "venv", str(path)])
    _pip(path, "-c", str(REPO / "constraints.txt"), *packages)
    stamp.write_text(key)


def build_environments(cache: Path = ENVIRONMENTS) -> Environments:
    """The students' and the instructor's environments and the proxy, each reinstalled from this checkout."""
    with _locked(cache):
        student, instructor = cache / "student-env", cache / "instructor-env"
        _fresh_venv(student, list(STUDENT_PACKAGES))
        _fresh_venv(instructor, [*PINS, f"{REPO}[course]"])
        # The kit and attnkit itself change with the checkout: reinstalled every time, without dependencies.
        kit = Path(tempfile.mkdtemp(prefix="attnkit-hub-kit-"))
        try:
            build_student_kit(kit / "kit")
            _pip(student, "--no-deps", "--force-reinstall", "--no-build-isolation", str(kit / "kit"))
        finally:
            shutil.rmtree(kit, ignore_errors=True)
        _pip(instructor, "--force-reinstall", "--no-deps", str(REPO))
        _hide_from_students(instructor)
        jupyter = str(student / "bin" / "jupyter")
        for extension in INSTRUCTOR_ONLY_SERVER_EXTENSIONS:
            _run([jupyter, "server", "extension", "disable", "--sys-prefix", extension])
        _run([jupyter, "labextension", "disable", "--level=sys_prefix", *INSTRUCTOR_ONLY_LAB_PLUGINS])
        for environment in (student, instructor):
            _write_lab_overrides(environment)
        proxy_folder = cache / "proxy"
        proxy = proxy_folder / "node_modules" / ".bin" / "configurable-http-proxy"
        if not proxy.is_file():
            _run(["npm", "install", "--no-audit", "--no-fund", "--prefix", str(proxy_folder), PROXY_PACKAGE])
        return Environments(student=student, instructor=instructor, proxy=proxy)


def _hide_from_students(environment: Path) -> None:
    """Only root and STAFF_GROUP may read the environment: it holds solutions/ and the hidden checks, which a student
    could otherwise open from disk even though their own kernel cannot import them."""
    if subprocess.run(["getent", "group", STAFF_GROUP], capture_output=True, check=False).returncode != 0:
        _run(["groupadd", "--system", STAFF_GROUP])
    _run(["chgrp", "-R", STAFF_GROUP, str(environment)])
    _run(["chmod", "-R", "o-rwx", str(environment)])


def _write_lab_overrides(environment: Path) -> None:
    """Every cell in the DOM (no windowing: a browser test reads them) and no news toast over the notebook."""
    overrides = environment / "share" / "jupyter" / "lab" / "settings" / "overrides.json"
    overrides.parent.mkdir(parents=True, exist_ok=True)
    overrides.write_text(json.dumps({
        "@jupyterlab/notebook-extension:tracker": {"windowingMode": "none"},
        "@jupyterlab/apputils-extension:notification": {"fetchNews": "false", "checkForUpdates": False},
    }, indent=1), encoding="utf-8")


def create_site(site: HubSite) -> None:
    """The users (with passwords), their homes and nbgrader settings, the exchange and the instructor's course."""
    existing = [user for user in site.users if _user_exists(user)]
    if existing:
        raise HubError(f"users {', '.join(existing)} exist already: run `python -m devtools.hub down` first")
    for folder in (site.root, site.root / "home"):
        folder.mkdir(parents=True, exist_ok=True)
        folder.chmod(0o755)
    (site.root / ROOT_MARKER).write_text("made by devtools.hub: `python -m devtools.hub down` removes this folder\n")
    site.state.mkdir(mode=0o700, exist_ok=True)
    # nbgrader's documented exchange: everyone may write, and its own folders inside keep submissions apart.
    site.exchange.mkdir(exist_ok=True)
    site.exchange.chmod(0o777)
    for user in site.users:
        staff = ["--groups", STAFF_GROUP] if user == site.instructor else []
        _run(["useradd", "--create-home", "--home-dir", str(site.home(user)), "--shell", "/bin/bash",
              "--user-group", *staff, user])
        site.home(user).chmod(0o700)  # one student's work is no other's to read
        _run(["chpasswd"], input=f"{user}:{site.password}\n")
        settings = ["c = get_config()  # noqa: F821 -- written by devtools.hub",
                    f"c.CourseDirectory.course_id = {COURSE_ID!r}",
                    f"c.Exchange.root = {str(site.exchange)!r}"]
        if user == site.instructor:
            settings.append(f"c.CourseDirectory.root = {str(site.course)!r}")
        _write_owned(site, user, site.home(user) / ".jupyter" / "nbgrader_config.py", "\n".join(settings) + "\n")
    course_config = (REPO / "nbgrader_config.py").read_text(encoding="utf-8")
    course_config += f"\nc.CourseDirectory.root = {str(site.course)!r}\n"
    _write_owned(site, site.instructor, site.course / "nbgrader_config.py", course_config)
    shutil.copytree(REPO / "source" / "attention", site.course / "source" / "attention")
    _chown_tree(site.course, site.instructor)


def _user_exists(user: str) -> bool:
    try:
        pwd.getpwnam(user)
    except KeyError:
        return False
    return True


def _write_owned(site: HubSite, user: str, path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    _chown_tree(site.home(user), user)


def _chown_tree(folder: Path, user: str) -> None:
    _run(["chown", "-R", f"{user}:{user}", str(folder)])


def remove_site(root: Path, prefix: str) -> list[str]:
    """End every process of the prefix's users, delete the users and the root folder; the users removed."""
    if not prefix.startswith("attnkit-hub"):
        raise HubError(f"refusing to remove users of prefix {prefix!r}: hub prefixes start with 'attnkit-hub'")
    users = [entry.pw_name for entry in pwd.getpwall() if entry.pw_name.startswith(prefix)]
    for user in users:
        subprocess.run(["pkill", "-KILL", "-u", user], check=False)
    for user in users:
        subprocess.run(["userdel", user], capture_output=True, check=False)
        # torch's compile cache, made by the first op on the meta device in a user's kernel
        shutil.rmtree(Path(tempfile.gettempdir()) / f"torchinductor_{user}", ignore_errors=True)
    if (root / ROOT_MARKER).is_file():  # never a folder the hub did not make (a mistyped --root)
        shutil.rmtree(root, ignore_errors=True)
    elif root.exists():
        log.warning("%s was not made by devtools.hub (no %s): left as it is", root, ROOT_MARKER)
    return users


def start_hub(site: HubSite, environments: Environments) -> subprocess.Popen:
    """JupyterHub as a child in its own session (so it and its proxy can be ended together); returns once it answers."""
    # What jupyterhub_config.py reads; the users' password stays out of it (PAM checks it, the hub never needs it).
    settings = {"port": site.port, "hub_port": site.hub_port, "proxy_api_port": site.proxy_api_port,
                "state": str(site.state), "instructor": site.instructor, "students": list(site.students),
                "student_env": str(environments.student), "instructor_env": str(environments.instructor),
                "proxy": str(environments.proxy)}
    settings_file = site.state / "hub.json"
    settings_file.write_text(json.dumps(settings, indent=1), encoding="utf-8")
    settings_file.chmod(0o600)
    environment = {**_clean_environment(), "ATTNKIT_HUB_SETTINGS": str(settings_file),
                   "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])}
    log_file = open(site.state / "jupyterhub.log", "wb")  # noqa: SIM115 - the hub writes to it until it ends
    hub = subprocess.Popen([str(Path(sys.executable).parent / "jupyterhub"), "-f", str(HUB_CONFIG)],
                           cwd=site.state, env=environment, stdin=subprocess.DEVNULL, stdout=log_file,
                           stderr=subprocess.STDOUT, start_new_session=True)
    log_file.close()
    deadline = time.monotonic() + START_S
    while time.monotonic() < deadline:
        if hub.poll() is not None:
            raise HubError(f"JupyterHub exited with {hub.returncode}:\n{hub_log_tail(site)}")
        with contextlib.suppress(OSError):
            with urllib.request.urlopen(f"{site.url}/hub/api", timeout=2) as response:
                if response.status == 200:
                    return hub
        time.sleep(0.3)
    stop_hub(hub)
    raise HubError(f"JupyterHub did not answer within {START_S} s:\n{hub_log_tail(site)}")


def hub_log_tail(site: HubSite, lines: int = 40) -> str:
    path = site.state / "jupyterhub.log"
    text = path.read_text(encoding="utf-8", errors="replace") if path.is_file() else ""
    return "\n".join(text.splitlines()[-lines:])


def stop_hub(hub: subprocess.Popen) -> None:
    """SIGTERM the hub's session (the hub, its proxy; user servers run as their users and end with them)."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(hub.pid, 15)
    try:
        hub.wait(timeout=20)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(hub.pid, 9)
        hub.wait()


def run_as(site: HubSite, user: str, environment: Path, command: list[str], cwd: Path | None = None,
           check: bool = True) -> subprocess.CompletedProcess:
    """`command` as `user` (runuser), with `environment`'s bin/ first on PATH and the user's HOME."""
    env = {"PATH": f"{environment}/bin:/usr/bin:/bin", "HOME": str(site.home(user)), "LANG": "C.UTF-8"}
    full = ["runuser", "-u", user, "--", "env", "-i", *[f"{key}={value}" for key, value in env.items()], *command]
    process = subprocess.run(full, cwd=cwd or site.home(user), capture_output=True, text=True, check=False)
    if check and process.returncode != 0:
        raise HubError(f"`{' '.join(command)}` as {user} failed ({process.returncode}):\n"
                       f"{(process.stdout + process.stderr)[-3000:]}")
    return process


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m devtools.hub", description=__doc__.splitlines()[0])
    parser.add_argument("action", choices=("up", "down"))
    parser.add_argument("--root", type=Path, default=Path("/tmp/attnkit-hub"),
                        help="the folder for the users' homes, the exchange and the hub's state (default %(default)s)")
    parser.add_argument("--prefix", default="attnkit-hub-", help="user names start with it (default %(default)s)")
    parser.add_argument("--port", type=int, default=8000, help="the hub's port on 127.0.0.1 (default %(default)s)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    if args.action == "down":
        try:
            removed = remove_site(args.root, args.prefix)
        except HubError as error:
            print(f"error: {error}", file=sys.stderr)
            return 2
        print(f"removed {len(removed)} users ({', '.join(removed) or 'none'})"
              + ("" if args.root.exists() else f" and {args.root}"))
        return 0
    missing = missing_requirements()
    if missing:
        print("make hub needs: " + "; ".join(missing), file=sys.stderr)
        return 2
    site = new_site(args.root.resolve(), args.prefix, args.port)
    try:
        environments = build_environments()
        create_site(site)
        hub = start_hub(site, environments)
    except HubError as error:
        print(f"error: {error}\n(`python -m devtools.hub down --root {args.root}` removes what was made)",
              file=sys.stderr)
        return 1
    print(f"JupyterHub for the attnkit course: {site.url}\n"
          f"  instructor: {site.instructor}\n  students:   {', '.join(site.students)}\n"
          f"  password (all three): {site.password}\n"
          f"The instructor's course is {site.course}; the exchange {site.exchange}.\n"
          f"Ctrl-C stops the hub; `make hub-clean` removes the users and {site.root}.")
    try:
        hub.wait()
    except KeyboardInterrupt:
        pass
    finally:
        stop_hub(hub)
    return 0


if __name__ == "__main__":
    sys.exit(main())
