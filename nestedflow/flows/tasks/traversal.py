"""The first and last task of every traversal: the stack's own state,
the rollback of a failed create or update, and the final sweep."""

import logging

from nestedflow import exceptions, states
from nestedflow.db import models
from nestedflow.flows.tasks.base import (
    SYMBOL,
    ScopedTask,
    attribute_reader,
    failure_reason,
    is_gone,
    isinstance_failure,
    output_of,
    resolver,
)
from nestedflow.flows.tasks.delete import delete_resource
from nestedflow.stacks import changes
from nestedflow.stacks.children import ChildStacks
from nestedflow.stacks.definition import load_definition
from nestedflow.template.functions import select_path

LOG = logging.getLogger(__name__)

#: The actions after which a resource realizes its template.
SETTLED_ACTIONS = (states.CREATE, states.UPDATE, states.SUSPEND, states.RESUME, states.CHECK)


class BeginTraversal(ScopedTask):
    """First task of every traversal; its revert, run last, settles the stack."""

    def __init__(self, scope):
        super().__init__(name=f"begin {scope.action.lower()}", provides="traversal")
        self.scope = scope
        # The stack as read when the flow was built, just before it runs
        # (the run's claim returns it): what the first check of this task
        # needs to know. A later run of the task reads the stack anew.
        self._built_from = scope.stack

    def execute(self):
        built_from, self._built_from = self._built_from, None
        self.scope.check_owner(built_from)
        return self.scope.traversal_id

    def revert(self, flow_failures=None, **kwargs):
        try:
            self._settle(flow_failures)
        finally:
            self.scope.runtime.forget(self.scope.revert_key)

    def _settle(self, flow_failures):
        scope = self.scope
        if isinstance_failure(flow_failures, exceptions.OwnershipLost) and not (
            scope.is_owner()
        ):
            return
        reason = failure_reason(flow_failures)
        rolled_back = scope.action in (states.CREATE, states.UPDATE) and scope.rollback_enabled()
        values = {}
        if rolled_back and scope.action == states.UPDATE:
            values["raw_template_id"] = scope.stack.prev_raw_template_id
            _retire_unconverged_additions(scope)
            realized, outputs, why = _realizes_previous(scope)
            if realized:
                values["outputs"], values["output_errors"] = outputs
            elif _converge_back(scope, f"{reason}; {why}"):
                return
            else:
                scope.set_stack_state(states.ROLLBACK, states.FAILED, f"{reason}; {why}", **values)
                return
        action = states.ROLLBACK if rolled_back else scope.shown_action
        status = states.COMPLETE if rolled_back else states.FAILED
        if scope.definition is not None and "outputs" not in values:
            # A failed (or rolled back) create, a failed update: outputs as
            # the resources stand, as Heat shows them for any stack not deleted.
            values["outputs"], values["output_errors"] = _outputs_as_they_stand(scope)
        try:
            scope.set_stack_state(action, status, reason, **values)
        except exceptions.OwnershipLost:
            LOG.info("stack %s: superseded before it could record %s_%s",
                     scope.stack.id, action, status)


def _outputs_as_they_stand(scope):
    """(outputs, output errors) of the current template from the current
    rows: what a completed resource recorded, None for one that failed, was
    never made or is gone (Heat's get_attr answers None for a resource
    whose result is not ready)."""
    outputs = {row.name: None if is_gone(row) or not row.attr_data else output_of(row)
               for row in scope.db.list_resources(scope.stack.id)}

    def get_resource(name):
        out = outputs.get(name)
        return None if out is None else out["ref"]

    return scope.definition.resolve_outputs_and_errors(
        get_resource=get_resource, get_attr=attribute_reader(outputs))


def _realizes_previous(scope):
    """Do the rows left by the revert realize the previous template?

    The revert undoes this traversal's own actions only. That is the
    previous template when it was fully applied before this update; not when
    this update superseded one still in progress, or followed a failure.
    Returns (realized, (outputs, output errors), why not).
    """
    stack = scope.stack
    definition = load_definition(scope.db, scope.runtime.registry, stack,
                                 stack.prev_raw_template_id)
    current = {}
    for row in scope.db.list_all_resources(stack.id):
        if row.engine_id and row.engine_id != scope.holder:
            return False, None, f"{row.name} is still being acted on"
        if not row.current:
            if not is_gone(row):
                return False, None, f"an old version of {row.name} still exists"
        elif row.name in current or row.name not in definition.resources:
            return False, None, f"{row.name} is not in the previous template"
        else:
            current[row.name] = row
    for name, res in definition.resources.items():
        row = current.get(name)
        if row is None or row.type != res.type or row.status != states.COMPLETE or (
                row.action not in SETTLED_ACTIONS):
            return False, None, f"{name} is not as the previous template has it"
    plugins = {name: scope.plugin(row, row.properties_data or {})
               for name, row in current.items()}

    def get_resource(name):
        return (current[name].attr_data or {}).get("ref")

    def get_attr(name, attr, path):
        if attr is None:  # get_attr's all-attributes form
            plugin = plugins[name]
            return {key: plugin.get_attribute(key) for key in plugin.attributes_schema}
        return select_path(plugins[name].get_attribute(attr), path)

    for name, row in current.items():
        try:
            properties = definition.resolve_properties(name, get_resource=get_resource,
                                                       get_attr=get_attr)
        except Exception:  # an input is missing: not realized
            return False, None, f"{name}'s inputs are not as the previous template has them"
        fingerprint = changes.fingerprint(scope.runtime.registry, row.type, properties,
                                          definition.template, name)
        if properties != row.properties_data or fingerprint != (
                row.attr_data or {}).get("fingerprint"):
            return False, None, f"{name} is not as the previous template has it"
    return True, definition.resolve_outputs_and_errors(get_resource=get_resource,
                                                       get_attr=get_attr), ""


def _converge_back(scope, reason):
    """Start the rollback's convergence pass: a ROLLBACK traversal that
    converges the stack to the previous template from whatever exists (as
    an update would). Returns False when this process cannot start one."""
    stacks = scope.runtime.stacks
    if stacks is None or not scope.is_owner():
        return False
    try:
        stacks.start_traversal(
            scope.stack.id, scope.traversal_id, states.ROLLBACK,
            raw_template_id=scope.stack.prev_raw_template_id,
            status_reason=f"{reason}: converging to the previous template")
    except exceptions.TraversalSuperseded:
        pass  # another traversal took over; it decides what happens
    return True


def _retire_unconverged_additions(scope):
    """Resources this update added but never reached leave with the rollback
    (their tasks never ran, so no revert did it)."""
    for row in scope.db.list_resources(scope.stack.id):
        if row.template_id == scope.stack.raw_template_id and row.replaces is None and (
                is_gone(row)):
            scope.write(scope.lock(row.id), release=True, current=False)


#: Provided once every resource of an update has converged.
CONVERGED = "converged"


class Converged(ScopedTask):
    """Nothing to do: stands between an update's converge tasks and its
    cleanup, so that each cleanup task requires it alone instead of every
    converge task's result -- n x n graph edges for n resources, which made
    updates quadratic (a thousand resources: a million edges to compile and
    scan)."""

    def __init__(self, scope, requires):
        super().__init__(name=f"converged {scope.action.lower()}", requires=["traversal"],
                         provides=CONVERGED)
        # Edges only, not arguments (as CompleteTraversal's).
        self.requires = self.requires.union(requires)
        self.scope = scope

    def execute(self, traversal):
        return True


class CompleteTraversal(ScopedTask):
    """Last task: record outputs, the new graph, and the stack's final state."""

    def __init__(self, scope, requires):
        reads = requires
        if scope.action not in (states.CREATE, states.UPDATE, states.ROLLBACK):
            reads = []
        else:
            names = scope.definition.output_references()
            if names is not None:
                wanted = {SYMBOL.format(name) for name in names}
                reads = [symbol for symbol in requires if symbol in wanted]
        super().__init__(name=f"complete {scope.action.lower()}",
                         requires=["traversal", *reads])
        # Every resource still runs before this task (the graph flow's
        # edges come from ``requires``), but only what the outputs read is
        # an argument: TaskFlow looks each argument up among every atom
        # before this one, which made the last task of a stack quadratic.
        self.requires = self.requires.union(requires)
        self.scope = scope

    def execute(self, traversal, **inputs):
        scope = self.scope
        values = {}
        rows = None
        if scope.converging or scope.action == states.DELETE:
            rows = _sweep(scope)
        if scope.action in (states.CREATE, states.UPDATE, states.ROLLBACK):
            get_resource, get_attr = resolver(inputs)
            values["outputs"], values["output_errors"] = (
                scope.definition.resolve_outputs_and_errors(
                    get_resource=get_resource, get_attr=get_attr))
        if scope.action == states.DELETE:
            _delete_unowned_children(scope)
            values["deleted_at"] = models.utcnow()
        if scope.converging:
            # Before the stack settles: the next update builds its cleanup
            # from these edges.
            scope.check_owner()
            _record_graph(scope, rows)
        scope.set_stack_state(scope.shown_action, states.COMPLETE,
                              f"Stack {scope.shown_action} completed successfully", **values)


def _delete_unowned_children(scope):
    """A stack delete leaves no nested stack behind: a child no row of the
    stack names any more (one a failed or interrupted create made before it
    could record it, or one an older release lost track of) is deleted
    here, after the rows' own deletes, and waited for."""
    children = ChildStacks(scope)
    for child in scope.db.list_children(scope.stack.id):
        if child.deleted_at is None:
            LOG.info("stack %s: deleting nested stack %s that no resource records",
                     scope.stack.id, child.id)
            children.delete(child.id)


def _sweep(scope):
    """Clean up versions this flow could not know about when it was built.

    An older traversal's action in flight when this one took over may have
    replaced a resource afterwards (a new row, or a current row for a
    resource this template removed); this flow's cleanup tasks were made
    from the rows that existed then. Whatever is still stale now is deleted
    here, dependents first. Returns the stack's rows as they are then.
    """
    keep = set(scope.definition.resources) if scope.converging else set()
    retire = scope.converging
    while True:
        rows = scope.db.list_all_resources(scope.stack.id)
        stale = [
            row for row in rows
            if (not row.current or row.name not in keep)
            and (not is_gone(row) or (retire and row.current))
        ]
        if not stale:
            return rows
        row = scope.lock(_first_to_delete(stale).id)
        if is_gone(row):
            scope.write(row, release=True, **({"current": False} if retire else {}))
            continue
        scope.cleanup_started = True
        delete_resource(scope, row, retire=retire)


def _first_to_delete(rows):
    """A row no other of ``rows`` depends on (the lowest id if they all do)."""
    ids = {row.id for row in rows}
    needed = set()
    for row in rows:
        needed.update(i for i in row.requires if i in ids and i != row.id)
    for row in rows:
        needed.update(row.id for i in row.needed_by if i in ids and i != row.id)
    free = [row for row in rows if row.id not in needed]
    return min(free or rows, key=lambda row: row.id)


def _record_graph(scope, rows):
    """Persist the new template's edges on the rows that are now current
    (``rows``: the stack's rows as the sweep read them last)."""
    current = {row.name: row for row in rows if row.current}
    dependencies = scope.definition.dependencies()
    needed_by = {row.id: set() for row in current.values()}
    requires = {}
    for name, row in current.items():
        requires[row.id] = {current[d].id for d in dependencies.get(name, ()) if d in current}
        for dep in requires[row.id]:
            needed_by[dep].add(row.id)
    # Only the rows whose edges changed: an update that keeps the graph
    # (the common case) writes none instead of one statement per resource.
    scope.db.set_edges({
        row.id: (requires[row.id], needed_by[row.id]) for row in current.values()
        if (sorted(requires[row.id]), sorted(needed_by[row.id]))
        != (sorted(row.requires or ()), sorted(row.needed_by or ()))})
