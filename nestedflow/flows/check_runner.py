"""Running the checks of a resource action: timeout, retries, results.

A traversal's tasks call :meth:`CheckRunner.before` just before a plugin
action and :meth:`CheckRunner.after` once it succeeded. Every check of the
phase runs (one failure does not hide the others' results), each result is
stored with an event, and then the first failure is raised as
:class:`nestedflow.exceptions.CheckFailed`: the task fails the resource
with it, so the stack's reason names the resource and the check.
"""

import functools
import logging
import time

from nestedflow import exceptions
from nestedflow.checks import base, loader, spec
from nestedflow.db import check_results
from nestedflow.resources.base import Resource

LOG = logging.getLogger(__name__)
#: The ``check`` and ``type`` of a result of a plugin's own pre_check/post_check.
PLUGIN = "plugin"


@functools.lru_cache(maxsize=1024)
def plugin_checks(plugin_cls, phase):
    """Does the resource type define its own check of ``phase``? (Asked
    around every action of every resource: the answer is kept per type.)"""
    name = f"{phase}_check"
    return getattr(plugin_cls, name, None) is not getattr(Resource, name)


class CheckRunner:
    """The checks of one traversal of one stack."""

    def __init__(self, scope):
        self.scope = scope
        self._parsed = None

    def specs(self):
        """The stack's environment's checks, parsed once per traversal."""
        if self._parsed is None:
            scope = self.scope
            if scope.definition is not None:
                environment = scope.definition.template.environment or {}
            else:
                environment = scope.db.get_template(scope.stack.raw_template_id).environment
            self._parsed = spec.parse((environment or {}).get("checks"))
        return self._parsed

    def guards(self, resource_name, plugin_cls):
        """Will any check run around actions of this resource?"""
        return (plugin_checks(plugin_cls, "pre") or plugin_checks(plugin_cls, "post")
                or spec.guards(self.specs(), resource_name))

    def before(self, plugin, action):
        self._run(plugin, action, "pre")

    def after(self, plugin, action, record=None):
        """``record``: what the failed resource's row must still keep (the
        physical id of an object the action made), carried by the failure."""
        self._run(plugin, action, "post", record)

    def _run(self, plugin, action, phase, record=None):
        parsed = self.specs()
        specs = spec.for_resource(parsed, plugin.name, action, phase) if parsed else ()
        own = plugin_checks(type(plugin), phase)
        if not specs and not own:
            return
        target = base.CheckTarget(
            stack_id=plugin.context.stack_id, stack_name=plugin.context.stack_name,
            resource_name=plugin.name, action=action, phase=phase,
            physical_id=plugin.context.physical_id, get_attribute=plugin.get_attribute)
        failures = []
        if own:
            failures += self._attempts(plugin, target, PLUGIN, PLUGIN, 1, None, 0,
                                       lambda timeout: getattr(plugin, f"{phase}_check")(action))
        for check_spec in specs:
            check = _instance(check_spec)
            failures += self._attempts(plugin, target, check_spec.name, check_spec.type,
                                       check_spec.attempts(), check_spec.attempt_timeout(),
                                       check_spec.retry_delay(),
                                       lambda timeout, check=check: check.run(target, timeout))
        if failures:
            name, message = failures[0]
            error = exceptions.CheckFailed(plugin.name, action, phase, name, message)
            error.record = record
            raise error

    def _attempts(self, plugin, target, name, type_name, attempts, timeout, delay, run):
        """Run one check up to ``attempts`` times; record its result; returns
        ``[(name, message)]`` if it failed, else ``[]``."""
        started = time.monotonic()
        for attempt in range(1, attempts + 1):
            try:
                message, status = run(timeout) or "passed", "PASS"
            except exceptions.OwnershipLost:
                raise
            except Exception as error:  # any error of a check is its failure
                message, status = str(error) or type(error).__name__, "FAIL"
            if status == "PASS" or attempt == attempts:
                break
            LOG.info("%s-check %r of %s %s failed (attempt %d of %d): %s", target.phase,
                     name, target.action, plugin.name, attempt, attempts, message)
            plugin.context.sleep(delay)
        self._record(plugin, target, name, type_name, status, str(message),
                     time.monotonic() - started, attempt)
        return [(name, message)] if status == "FAIL" else []

    def _record(self, plugin, target, name, type_name, status, message, duration, attempts):
        scope = self.scope
        check_results.record(scope.db, scope.stack.id, {
            "stack_id": scope.stack.id, "resource_name": plugin.name,
            "resource_id": plugin.context.resource_id, "traversal_id": scope.traversal_id,
            "action": target.action, "phase": target.phase, "check_name": name,
            "type": type_name, "status": status, "message": message[:2000],
            "duration": round(duration, 6), "attempts": attempts,
        }, engine_id=scope.runtime.engine_id)


def _instance(check_spec):
    return loader.get(check_spec.type, "check")(check_spec.params)
