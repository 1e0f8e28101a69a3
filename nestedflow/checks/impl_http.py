"""``http``: an HTTP request answers with an expected status."""

import re
import urllib.error
import urllib.request

from nestedflow import exceptions
from nestedflow.checks import base

_METHODS = ("GET", "HEAD", "POST", "PUT", "DELETE", "OPTIONS")


class HttpCheck(base.Check):
    """``url``; ``method`` (GET); ``status``: a code or a list of codes
    (200); ``matches``: a regular expression the body must contain."""

    parameters = {"url": True, "method": False, "status": False, "matches": False}

    @classmethod
    def validate(cls, params, path):
        super().validate(params, path)
        url = params["url"]
        if not isinstance(url, str) or not url.startswith(("http://", "https://")):
            raise exceptions.StackValidationFailed("must be an http:// or https:// URL",
                                                   path=f"{path}.url")
        if str(params.get("method", "GET")).upper() not in _METHODS:
            raise exceptions.StackValidationFailed(f"must be one of {list(_METHODS)}",
                                                   path=f"{path}.method")
        statuses = params.get("status", 200)
        statuses = statuses if isinstance(statuses, list) else [statuses]
        if not statuses or any(isinstance(s, bool) or not isinstance(s, int) for s in statuses):
            raise exceptions.StackValidationFailed("must be a status code or a list of them",
                                                   path=f"{path}.status")
        if "matches" in params:
            try:
                re.compile(params["matches"])
            except (re.error, TypeError) as error:
                raise exceptions.StackValidationFailed(
                    f"not a regular expression: {error}", path=f"{path}.matches") from error

    def run(self, target, timeout):
        url = self.params["url"]
        method = str(self.params.get("method", "GET")).upper()
        expected = self.params.get("status", 200)
        expected = expected if isinstance(expected, list) else [expected]
        request = urllib.request.Request(url, method=method)
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:  # noqa: S310
                status, body = response.status, response.read(1 << 20)
        except urllib.error.HTTPError as error:
            status, body = error.code, error.read(1 << 20)
        except (urllib.error.URLError, OSError) as error:
            raise exceptions.CheckError(f"{method} {url}: {error}") from error
        if status not in expected:
            raise exceptions.CheckError(
                f"{method} {url} answered {status}, expected {_codes(expected)}")
        pattern = self.params.get("matches")
        if pattern and not re.search(pattern, body.decode("utf-8", "replace")):
            raise exceptions.CheckError(f"{method} {url}: body does not match {pattern!r}")
        return f"{method} {url} answered {status}"


def _codes(codes):
    return " or ".join(str(c) for c in codes)
