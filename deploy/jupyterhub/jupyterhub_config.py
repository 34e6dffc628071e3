"""JupyterHub for the attnkit course on one machine (`make hub`, tests/test_jupyterhub.py).

`python -m devtools.hub` writes `hub.json` beside the hub's state and starts `jupyterhub -f` on this file with
ATTNKIT_HUB_SETTINGS pointing at it. Local Linux users log in with their passwords (PAM); each user's JupyterLab runs
as that user (LocalProcessSpawner) from one of two environments: the students' holds JupyterLab, nbgrader's
student extensions and the student kit only (no reference, no hidden checks); the instructor's holds the full
attnkit and formgrader. The nbgrader exchange and each user's nbgrader settings are written by devtools.hub.
"""

import json
import os
from pathlib import Path

c = get_config()  # noqa: F821 -- injected by traitlets when JupyterHub loads this file

settings = json.loads(Path(os.environ["ATTNKIT_HUB_SETTINGS"]).read_text(encoding="utf-8"))
state = Path(settings["state"])

c.JupyterHub.ip = "127.0.0.1"
c.JupyterHub.port = settings["port"]
c.JupyterHub.hub_ip = "127.0.0.1"
c.JupyterHub.hub_port = settings["hub_port"]
c.ConfigurableHTTPProxy.command = [settings["proxy"]]
c.ConfigurableHTTPProxy.api_url = f"http://127.0.0.1:{settings['proxy_api_port']}"
c.ConfigurableHTTPProxy.pid_file = str(state / "proxy.pid")
c.JupyterHub.db_url = f"sqlite:///{state / 'jupyterhub.sqlite'}"
c.JupyterHub.cookie_secret_file = str(state / "cookie_secret")
c.JupyterHub.pid_file = str(state / "jupyterhub.pid")

# Real local accounts: PAM checks the password of a Linux user; only the course's users may log in.
c.JupyterHub.authenticator_class = "pam"
c.Authenticator.allowed_users = {settings["instructor"], *settings["students"]}
c.Authenticator.admin_users = {settings["instructor"]}

c.JupyterHub.spawner_class = "localprocess"
c.Spawner.default_url = "/lab"
c.Spawner.notebook_dir = "~"
c.Spawner.start_timeout = 120
c.Spawner.http_timeout = 120
c.Spawner.args = ["--LabApp.news_url=None", "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate"]


def choose_environment(spawner):
    """The instructor's server from the full kit's environment, every student's from the student kit's."""
    environment = settings["instructor_env"] if spawner.user.name == settings["instructor"] else settings["student_env"]
    spawner.cmd = [str(Path(environment) / "bin" / "jupyterhub-singleuser")]
    # nbgrader shells out to alembic, and the kernels are this environment's python: its bin/ comes first.
    spawner.environment = {"PATH": f"{environment}/bin:/usr/bin:/bin", "ATTNKIT_LANG": "en"}


c.Spawner.pre_spawn_hook = choose_environment
