"""``command``: a local command from the operator's allow-list exits 0.

The environment only names the command (``command: db-ready``); the
command line comes from the ``[checks] commands`` option, so whoever
writes templates and environments cannot make an engine run anything else.
"""

import os
import shlex
import subprocess

from nestedflow import exceptions
from nestedflow.checks import base
from nestedflow.conf import CONF


class CommandCheck(base.Check):
    """``command``: a name listed in ``[checks] commands``."""

    parameters = {"command": True}

    @classmethod
    def validate(cls, params, path):
        super().validate(params, path)
        # Whether the name is allowed is decided where the check runs: a
        # conductor's allow-list may differ from the API's.
        if not isinstance(params["command"], str):
            raise exceptions.StackValidationFailed(
                "must name a command of the operator's allow-list ([checks] commands)",
                path=f"{path}.command")

    def run(self, target, timeout):
        name = self.params["command"]
        line = CONF.checks.commands.get(name)
        if not line:
            raise exceptions.CheckError(
                f"command {name!r} is not in this engine's allow-list ([checks] commands)")
        env = dict(os.environ, NESTEDFLOW_STACK=target.stack_name,
                   NESTEDFLOW_RESOURCE=target.resource_name,
                   NESTEDFLOW_PHYSICAL_ID=target.physical_id or "",
                   NESTEDFLOW_ACTION=target.action, NESTEDFLOW_PHASE=target.phase)
        try:
            done = subprocess.run(shlex.split(line), env=env, capture_output=True,  # noqa: S603
                                  timeout=timeout, check=False)
        except subprocess.TimeoutExpired as error:
            raise exceptions.CheckError(f"command {name!r} timed out after {timeout}s") \
                from error
        except OSError as error:
            raise exceptions.CheckError(f"command {name!r} could not run: {error}") from error
        output = (done.stdout or done.stderr or b"").decode("utf-8", "replace").strip()
        last = output.splitlines()[-1][:200] if output else ""
        if done.returncode != 0:
            raise exceptions.CheckError(f"command {name!r} exited {done.returncode}"
                                        + (f": {last}" if last else ""))
        return f"command {name!r} exited 0" + (f": {last}" if last else "")
