"""The environment's ``checks`` section: which checks guard which resources.

It leaves the template unchanged: a team adds checks to an existing
template by passing an environment file::

    checks:
      web:                       # a resource name, or an fnmatch pattern ("web*", "*")
        - type: http             # an entry point of the nestedflow.checks group
          name: web answers      # optional; names the check in results
          phase: post            # pre (before the action) or post (default)
          actions: [CREATE, UPDATE]   # the default
          timeout: 5             # seconds per attempt ([checks] default_timeout)
          retries: 2             # further attempts after a failure
          delay: 1               # seconds between attempts
          url: http://127.0.0.1:8080/health   # the type's own keys
          status: 200

Every resource whose name matches a key gets that key's checks (a
resource matched by several keys gets all of them, exact names first).
"""

import dataclasses
import fnmatch

from nestedflow import exceptions, states
from nestedflow.checks import loader
from nestedflow.conf import CONF

PHASES = ("pre", "post")
ACTIONS = (states.CREATE, states.UPDATE, states.CHECK, states.SUSPEND, states.RESUME)
DEFAULT_ACTIONS = (states.CREATE, states.UPDATE)
COMMON_KEYS = frozenset({"name", "type", "phase", "actions", "timeout", "retries", "delay"})
_WILDCARDS = frozenset("*?[")


@dataclasses.dataclass(frozen=True)
class CheckSpec:
    name: str
    type: str
    phase: str
    actions: tuple
    timeout: float | None
    retries: int | None
    delay: float | None
    params: dict

    def attempts(self):
        retries = CONF.checks.default_retries if self.retries is None else self.retries
        return 1 + retries

    def attempt_timeout(self):
        return CONF.checks.default_timeout if self.timeout is None else self.timeout

    def retry_delay(self):
        return CONF.checks.default_delay if self.delay is None else self.delay


def parse(section, path="environment.checks"):
    """``{pattern: [CheckSpec]}`` from the section; raises StackValidationFailed
    naming the first bad entry."""
    if section is None:
        return {}
    if not isinstance(section, dict):
        raise exceptions.StackValidationFailed("must be a mapping of resource names "
                                               "to lists of checks", path=path)
    parsed = {}
    for pattern, specs in section.items():
        where = f"{path}.{pattern}"
        if isinstance(specs, dict):
            specs = [specs]
        if not isinstance(specs, list):
            raise exceptions.StackValidationFailed("must be a list of checks", path=where)
        parsed[str(pattern)] = [_parse_one(spec, f"{where}[{i}]") for i, spec in enumerate(specs)]
    return parsed


def _parse_one(spec, path):
    if not isinstance(spec, dict):
        raise exceptions.StackValidationFailed("a check must be a mapping", path=path)
    type_name = spec.get("type")
    if not isinstance(type_name, str):
        raise exceptions.StackValidationFailed("missing check type", path=f"{path}.type")
    check_cls = loader.get(type_name, f"{path}.type")
    phase = spec.get("phase", "post")
    if phase not in PHASES:
        raise exceptions.StackValidationFailed(f"must be one of {list(PHASES)}",
                                               path=f"{path}.phase")
    actions = spec.get("actions", DEFAULT_ACTIONS)
    if isinstance(actions, str):
        actions = [actions]
    if not isinstance(actions, (list, tuple)) or not actions or any(
            str(a).upper() not in ACTIONS for a in actions):
        raise exceptions.StackValidationFailed(f"must be a list of {list(ACTIONS)}",
                                               path=f"{path}.actions")
    timeout = _number(spec, "timeout", path, minimum=0.001)
    retries = _number(spec, "retries", path, minimum=0, integer=True)
    delay = _number(spec, "delay", path, minimum=0)
    params = {k: v for k, v in spec.items() if k not in COMMON_KEYS}
    check_cls.validate(params, path)
    name = spec.get("name", type_name)
    if not isinstance(name, str) or not name:
        raise exceptions.StackValidationFailed("must be a non-empty string",
                                               path=f"{path}.name")
    return CheckSpec(name=name, type=type_name, phase=phase,
                     actions=tuple(str(a).upper() for a in actions), timeout=timeout,
                     retries=retries, delay=delay, params=params)


def _number(spec, key, path, minimum, integer=False):
    value = spec.get(key)
    if value is None:
        return None
    wrong = isinstance(value, bool) or not isinstance(value, (int, float)) or (
        integer and not isinstance(value, int)) or value < minimum
    if wrong:
        kind = "a whole number" if integer else "a number"
        raise exceptions.StackValidationFailed(f"must be {kind} >= {minimum}",
                                               path=f"{path}.{key}")
    return value


def for_resource(parsed, resource_name, action, phase):
    """The specs of ``parsed`` guarding ``action`` of ``resource_name`` in ``phase``."""
    exact = parsed.get(resource_name, [])
    wild = [spec for pattern, specs in parsed.items()
            if pattern != resource_name and _WILDCARDS & set(pattern)
            and fnmatch.fnmatchcase(resource_name, pattern) for spec in specs]
    return [spec for spec in exact + wild if spec.phase == phase and action in spec.actions]


def guards(parsed, resource_name):
    """Does any spec of ``parsed`` apply to ``resource_name`` at all?"""
    return resource_name in parsed or any(
        _WILDCARDS & set(pattern) and fnmatch.fnmatchcase(resource_name, pattern)
        for pattern in parsed)
