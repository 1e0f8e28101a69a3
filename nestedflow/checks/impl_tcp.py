"""``tcp``: a TCP port accepts connections."""

import socket

from nestedflow import exceptions
from nestedflow.checks import base


class TcpCheck(base.Check):
    """``host`` (default 127.0.0.1) and ``port``: connect, then close."""

    parameters = {"host": False, "port": True}

    @classmethod
    def validate(cls, params, path):
        super().validate(params, path)
        port = params["port"]
        if isinstance(port, bool) or not isinstance(port, int) or not 0 < port < 65536:
            raise exceptions.StackValidationFailed("must be a port number 1-65535",
                                                   path=f"{path}.port")

    def run(self, target, timeout):
        host, port = self.params.get("host", "127.0.0.1"), self.params["port"]
        try:
            with socket.create_connection((host, port), timeout=timeout):
                pass
        except OSError as error:
            raise exceptions.CheckError(f"{host}:{port} refused or unreachable: {error}") \
                from error
        return f"{host}:{port} accepts connections"
