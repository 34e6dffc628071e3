"""A real single-node Slurm cluster in a temporary directory, for tests/test_slurm.py.

Debian's `slurm-wlm` and `munge` packages (`.ci/run` installs them), run as root: munged as the `munge` user
(reused when one already answers), slurmctld and slurmd in the foreground with `-f` a slurm.conf written into the
directory (state, spool, logs and pid files there too, ports picked free), SlurmUser=root, no cgroups
(proctrack/linuxproc, task/none), no accounting. Client commands get SLURM_CONF through `Cluster.env`.
`stop()` cancels what is still queued and stops, by their pids, only the daemons it started.
"""

import os
import re
import shlex
import shutil
import socket
import subprocess
import time
from pathlib import Path

DAEMONS = ("slurmctld", "slurmd", "munged")
CLIENTS = ("sbatch", "scontrol", "scancel", "sinfo", "munge")
# Job states after which a job never runs again (squeue's "base" states, without the pending/running ones).
FINISHED = {"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY", "PREEMPTED", "BOOT_FAIL",
            "DEADLINE"}
START_S = 30  # the node is idle within seconds; this bounds a broken configuration
MUNGE_DIR = Path("/run/munge")
MUNGE_KEY = Path("/etc/munge/munge.key")


class ClusterError(RuntimeError):
    """The cluster could not start, or a job did not end as expected; the message carries the logs."""


def missing_requirements():
    """Why a cluster cannot start here (empty when it can): not root, or packages missing."""
    reasons = []
    if os.geteuid() != 0:
        reasons.append("not root (slurmd and munged start as root)")
    missing = [name for name in DAEMONS + CLIENTS if not _which(name)]
    if missing:
        reasons.append(f"{', '.join(missing)} not found (apt-get install slurm-wlm munge)")
    elif not MUNGE_KEY.exists() and not (_which("mungekey") or _which("create-munge-key")):
        reasons.append(f"no {MUNGE_KEY} and no mungekey to create one")
    return reasons


def _which(name):
    # The daemons live in /usr/sbin, which a non-login root shell may not have on PATH.
    return shutil.which(name) or shutil.which(name, path="/usr/sbin:/sbin")


def _free_ports(count):
    sockets = [socket.socket() for _ in range(count)]
    try:
        for sock in sockets:
            sock.bind(("", 0))
        return [sock.getsockname()[1] for sock in sockets]
    finally:
        for sock in sockets:
            sock.close()


def _tail(path, lines=40):
    try:
        return "\n".join(Path(path).read_text(encoding="utf-8", errors="replace").splitlines()[-lines:])
    except OSError as error:
        return f"({path}: {error})"


class Cluster:
    def __init__(self, root):
        self.root = Path(root)
        self.conf = self.root / "slurm.conf"
        self.logs = self.root / "log"
        self.env = {key: value for key, value in os.environ.items()
                    if not key.startswith(("SLURM_", "SBATCH_", "SALLOC_", "SRUN_")) and key != "ENVIRONMENT"}
        self.env["SLURM_CONF"] = str(self.conf)
        self.node = socket.gethostname().split(".")[0]
        self._daemons = {}  # name -> Popen of what this cluster started

    # --- start and stop -------------------------------------------------------------------------------------

    def start(self):
        try:
            self._start_munge()
            self._write_conf()
            for name in ("slurmctld", "slurmd"):
                self._spawn(name, [_which(name), "-D", "-f", str(self.conf)])
            self._wait_until_idle()
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self):
        """Cancel every job still queued, then stop the daemons this cluster started (by pid), newest first."""
        if "slurmctld" in self._daemons and self._daemons["slurmctld"].poll() is None:
            try:  # no job may outlive the test: its processes would keep running without slurmd
                unfinished = [job["JobId"] for job in self.jobs() if job.get("JobState") not in FINISHED]
                if unfinished:
                    subprocess.run([_which("scancel"), *unfinished], env=self.env, capture_output=True, timeout=30)
                    deadline = time.monotonic() + 15
                    while time.monotonic() < deadline and any(
                            job.get("JobState") not in FINISHED for job in self.jobs()):
                        time.sleep(0.2)
            except (ClusterError, subprocess.SubprocessError):
                pass  # the daemons are stopped below all the same
        for name in reversed(list(self._daemons)):
            process = self._daemons.pop(name)
            if process.poll() is None:
                process.terminate()
                try:
                    process.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()

    def _spawn(self, name, command, **options):
        self.logs.mkdir(parents=True, exist_ok=True)
        with open(self.logs / f"{name}.out", "ab") as output:
            self._daemons[name] = subprocess.Popen(command, stdout=output, stderr=subprocess.STDOUT,
                                                   stdin=subprocess.DEVNULL, **options)

    def _munge_answers(self):
        result = subprocess.run([_which("munge"), "-n"], capture_output=True, timeout=10)
        return result.returncode == 0

    def _start_munge(self):
        if self._munge_answers():
            return  # a munged is already running (the system's): use it, and leave it alone
        as_munge = {"user": "munge", "group": "munge", "extra_groups": []}
        if not MUNGE_KEY.exists():
            create = [_which("mungekey"), "--create"] if _which("mungekey") else [_which("create-munge-key")]
            subprocess.run(create, check=True, capture_output=True, timeout=60, **as_munge)
        MUNGE_DIR.mkdir(mode=0o755, parents=True, exist_ok=True)
        shutil.chown(MUNGE_DIR, "munge", "munge")
        # --force: start even over a stale socket, which a munged that was killed leaves behind (none answers here)
        self._spawn("munged", [_which("munged"), "--foreground", "--force"], **as_munge)
        deadline = time.monotonic() + 10
        while not self._munge_answers():
            if self._daemons["munged"].poll() is not None or time.monotonic() > deadline:
                raise ClusterError(f"munged did not start:\n{_tail(self.logs / 'munged.out')}")
            time.sleep(0.2)

    def _write_conf(self):
        detected = subprocess.run([_which("slurmd"), "-C"], capture_output=True, text=True, timeout=30,
                                  env=self.env).stdout
        values = dict(re.findall(r"(\w+)=(\S+)", detected))
        cpus, memory = values.get("CPUs", str(os.cpu_count() or 1)), values.get("RealMemory", "1024")
        for name in ("state", "spool", "log"):
            (self.root / name).mkdir(parents=True, exist_ok=True)
        controller_port, node_port = _free_ports(2)
        settings = {
            "ClusterName": "attnkit-test",
            "SlurmctldHost": f"{self.node}(127.0.0.1)",
            "SlurmctldPort": controller_port,
            "SlurmdPort": node_port,
            "SlurmUser": "root",
            "AuthType": "auth/munge",
            "StateSaveLocation": self.root / "state",
            "SlurmdSpoolDir": self.root / "spool",
            "SlurmctldPidFile": self.root / "slurmctld.pid",
            "SlurmdPidFile": self.root / "slurmd.pid",
            "SlurmctldLogFile": self.logs / "slurmctld.log",
            "SlurmdLogFile": self.logs / "slurmd.log",
            # No cgroups (a container may not delegate them): processes tracked by parent pid, no binding.
            "ProctrackType": "proctrack/linuxproc",
            "TaskPlugin": "task/none",
            "JobAcctGatherType": "jobacct_gather/none",
            "AccountingStorageType": "accounting_storage/none",
            "SelectType": "select/cons_tres",
            "SelectTypeParameters": "CR_Core",
            "MpiDefault": "none",
            "ReturnToService": "2",
        }
        lines = [f"{key}={value}" for key, value in settings.items()]
        lines.append(f"NodeName={self.node} NodeAddr=127.0.0.1 CPUs={cpus} RealMemory={memory} State=UNKNOWN")
        lines.append(f"PartitionName=test Nodes={self.node} Default=YES MaxTime=INFINITE State=UP")
        self.conf.write_text("\n".join(lines) + "\n", encoding="utf-8")
        self.cpus = int(cpus)

    def _wait_until_idle(self):
        deadline = time.monotonic() + START_S
        state = ""
        while time.monotonic() < deadline:
            for name in ("slurmctld", "slurmd"):
                if self._daemons[name].poll() is not None:
                    raise ClusterError(f"{name} exited with status {self._daemons[name].returncode}:\n"
                                       f"{self.logs_text()}")
            result = subprocess.run([_which("sinfo"), "-h", "-N", "-n", self.node, "-o", "%T"], env=self.env,
                                    capture_output=True, text=True, timeout=30)
            state = result.stdout.strip() or result.stderr.strip()
            if state == "idle":
                return
            time.sleep(0.3)
        raise ClusterError(f"node {self.node} not idle after {START_S} s (sinfo: {state!r}):\n{self.logs_text()}")

    def logs_text(self):
        return "\n".join(f"--- {path.name}\n{_tail(path)}" for path in sorted(self.logs.glob("*")))

    # --- jobs -----------------------------------------------------------------------------------------------

    def run(self, command, cwd, extra_env=None):
        """A client command (sbatch, the deploy script...) with this cluster's SLURM_CONF; its stdout."""
        result = subprocess.run(command, cwd=cwd, env={**self.env, **(extra_env or {})}, capture_output=True,
                                text=True, timeout=60)
        if result.returncode != 0:
            raise ClusterError(f"`{shlex.join(map(str, command))}` exited with status {result.returncode}:\n"
                               f"{result.stdout}{result.stderr}")
        return result.stdout

    def jobs(self, job_id=None):
        """`scontrol show job` as dicts, one per job or array task (all jobs without job_id)."""
        command = [_which("scontrol"), "-o", "show", "job"] + ([str(job_id)] if job_id is not None else [])
        result = subprocess.run(command, env=self.env, capture_output=True, text=True, timeout=30)
        if result.returncode != 0:
            if "Invalid job id" in result.stderr:
                return []
            raise ClusterError(f"scontrol: {result.stderr.strip()}")
        records = [dict(re.findall(r"(\w+)=(\S*)", line)) for line in result.stdout.splitlines()]
        return [record for record in records if "JobId" in record]  # not "No jobs in the system"

    def states(self, job_id):
        """{task: state} of a job, or of each task of an array ("0", "1"...; "" for a job that is no array)."""
        return {job.get("ArrayTaskId", ""): job.get("JobState", "") for job in self.jobs(job_id)}

    def wait(self, job_ids, timeout, outputs_dir, done=None):
        """Wait until every job (every task of an array) is finished; their {job id: {task: state}}.

        `done(states)` may end the wait sooner. Past `timeout` seconds: ClusterError with the states, the jobs'
        output files (in outputs_dir, where they were submitted) and the daemons' logs.
        """
        deadline = time.monotonic() + timeout
        while True:
            states = {job_id: self.states(job_id) for job_id in job_ids}
            finished = all(states[job_id] and set(states[job_id].values()) <= FINISHED for job_id in job_ids)
            if finished or (done and done(states)):
                return states
            if time.monotonic() > deadline:
                raise ClusterError(f"jobs {', '.join(map(str, job_ids))} not finished after {timeout} s: {states}\n"
                                   f"{self.outputs_text(outputs_dir)}\n{self.logs_text()}")
            time.sleep(0.3)

    def outputs_text(self, outputs_dir):
        return "\n".join(f"--- {path.name}\n{_tail(path)}" for path in sorted(Path(outputs_dir).glob("*.out")))
