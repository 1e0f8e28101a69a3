"""What every task shares: the base classes, the symbols tasks exchange
through TaskFlow's storage, and the helpers reading their results."""

import inspect
import logging

from nestedflow import exceptions, states
from nestedflow.flows import hooks
from nestedflow.flows.scope import CREATE_KEY, create_key
from nestedflow.stacks import changes
from nestedflow.stacks.definition import ANY_ATTRIBUTE
from nestedflow.taskflow import compat as taskflow_compat
from nestedflow.template.functions import select_path

LOG = logging.getLogger(__name__)

SYMBOL = "resource:{}"
CLEANED = "cleaned:{}"
#: Key of ``attr_data`` holding what reverting the last converge must undo.
UNDO = "undo"


def stored_undo(row, scope):
    """The undo a converge task of ``scope``'s traversal recorded on ``row``."""
    undo = dict((row.attr_data or {}).get(UNDO) or {})
    if undo.pop("traversal", None) != scope.traversal_id:
        return None
    return undo


def isinstance_failure(flow_failures, exc_type):
    return any(f.check(exc_type) for f in (flow_failures or {}).values())


def failure_reason(flow_failures):
    """One line naming the failed resources and their errors."""
    # Failures restored from an earlier run's journal carry only their text.
    failures = [f for f in (flow_failures or {}).values()
                if f.exception is not None or f.exception_str]
    # A user's cancel explains itself better than the waits it interrupted.
    cancels = [f for f in failures if f.check(exceptions.Cancelled)]
    messages = sorted({str(f.exception) if f.exception is not None else f.exception_str
                       for f in (cancels or failures)})
    return "; ".join(messages) or "unknown failure"


#: attr_data key: attribute name -> [resource, key] of an attribute the
#: plugin refused (exceptions.InvalidTemplateAttribute), raised again when read.
ATTR_ERRORS = "attr_errors"


def output_of(row):
    data = row.attr_data or {}
    out = {"ref": data.get("ref"), "attrs": data.get("attrs") or {}, "row": row.id}
    if data.get(ATTR_ERRORS):
        out[ATTR_ERRORS] = data[ATTR_ERRORS]
    return out


def attribute_reader(outputs):
    """``get_attr(name, attr, path)`` over ``outputs`` (resource name ->
    :func:`output_of`, or None for a resource that has none): None where
    there is no value, InvalidTemplateAttribute where the plugin refused."""
    def get_attr(name, attr, path):
        out = outputs.get(name)
        if out is None:
            return None
        if attr is None:  # get_attr's all-attributes form reads them all
            return select_path(out["attrs"], path)
        refused = (out.get(ATTR_ERRORS) or {}).get(attr)
        if refused:
            raise exceptions.InvalidTemplateAttribute(*refused)
        return select_path(out["attrs"].get(attr), path)
    return get_attr


def inputs_by_name(inputs):
    return {name.split(":", 1)[1]: value for name, value in inputs.items()
            if name.startswith("resource:")}


def resolver(inputs):
    resolved = inputs_by_name(inputs)
    return lambda name: resolved[name]["ref"], attribute_reader(resolved)


_INSPECTABLE = {}


def _inspectable(method):
    """A stand-in for ``method`` that only answers ``inspect.signature``:
    the signature of the bound method, worked out once per function."""
    function = getattr(method, "__func__", None)
    if function is None:
        return method
    stand_in = _INSPECTABLE.get(function)
    if stand_in is None:
        def stand_in(*args, **kwargs):
            raise TypeError("a signature stand-in is not callable")

        stand_in.__signature__ = inspect.signature(method)
        stand_in.__name__ = function.__name__
        _INSPECTABLE[function] = stand_in
    return stand_in


class ScopedTask(taskflow_compat.Task):
    """A task whose runs (execute or revert) are bracketed by its scope:
    reverts are marked as such, and locks a failed run still holds are released."""

    scope = None

    def inspected(self, method):
        # TaskFlow inspects execute and revert of every task it builds, a
        # thousand per stack, three times each; inspecting a bound method
        # derives its signature anew every time. What it inspects instead
        # carries the signature, derived once per function.
        return _inspectable(method)

    def revert(self, *args, **kwargs):
        """Nothing to undo unless a task says otherwise."""

    def pre_execute(self):
        self.scope.begin_task(reverting=False)

    def post_execute(self):
        self.scope.end_task()

    def pre_revert(self):
        self.scope.begin_task(reverting=True)

    def post_revert(self):
        self.scope.end_task()


def is_gone(row):
    return row.action == states.INIT and row.physical_id is None or (
        row.action, row.status) == (states.DELETE, states.COMPLETE)


def in_lock(action, row, *args):
    """Run a database-only ``action`` inside the lock's transaction; its
    write also releases the lock. On the plugin's error the lock stays
    taken (and the start written) for the ordinary path to run the action
    again and record the failure: running it twice changes nothing outside
    the database. Lost ownership is not retried: it ends the transaction."""
    try:
        return {**action(row, *args), "engine_id": None}
    except exceptions.OwnershipLost:
        raise
    except Exception as error:
        LOG.debug("%s of %s failed in its lock's transaction; it runs again "
                  "to record the failure: %s", action.__name__, row.name, error)
        return None


def _waits_for_stacks(registry, type_name):
    try:
        return getattr(registry.get(type_name), "waits_for_stacks", False)
    except exceptions.NestedflowError:
        return False  # an unknown type is reported when the task runs


class ResourceTask(ScopedTask):
    """Base of the per-resource tasks."""

    ACTION = None

    def __init__(self, scope, row, requires=(), provides=None):
        super().__init__(
            name=f"{self.ACTION.lower()} {row.name} #{row.id}",
            provides=provides,
            requires=["traversal", *requires],
        )
        self.scope = scope
        self.row_id = row.id
        self.resource_name = row.name
        self.provides_symbol = provides
        self.waits_for_stacks = _waits_for_stacks(scope.runtime.registry, row.type)
        self._snapshot = row

    def lock_for(self, start, fresh=False):
        """The row locked with ``start`` written (:meth:`TraversalScope.lock`);
        or, on this task's first run, written at once from the row read
        when the flow was built, if unchanged since
        (:meth:`TraversalScope.write_free`): for a database-only type, whose
        ``start`` also releases the lock; for any type if ``fresh`` (the
        caller's row is seldom written between the flow's build and the
        task: a create, a delete), the lock kept."""
        scope = self.scope
        # A later run (a retry, a revert) reads the row anew.
        snapshot, self._snapshot = self._snapshot, None
        if snapshot is not None and snapshot.id == self.row_id:
            database_only = scope.in_database_only(snapshot)
            if database_only or fresh:
                # Lock and start in one statement: a type with side effects
                # still commits its start before it acts, but the lock is
                # no statement of its own (on PostgreSQL the start and its
                # event are one, so BEGIN, it and COMMIT: three round trips
                # where there were four; on SQLite two statements, not three).
                row = scope.write_free(snapshot, start, keep_lock=not database_only)
                if row is not None:
                    return row
        return scope.lock(self.row_id, start=start)

    def fail(self, row, action, error):
        reason = f"{type(error).__name__}: {error}"
        # A failed post-check: the object exists, the row must keep its id.
        record = getattr(error, "record", None) or {}
        try:
            self.scope.set_state(row, action, states.FAILED, reason, release=True, **record)
        except exceptions.OwnershipLost:
            LOG.info("resource %s: lost ownership before recording failure", row.name)
        if isinstance(error, (exceptions.OwnershipLost, exceptions.Cancelled)):
            return error
        return exceptions.ResourceFailure(row.name, action, error)

    def fingerprint(self, type_name, properties):
        return changes.fingerprint(self.scope.runtime.registry, type_name, properties,
                                   self.scope.definition.template, self.resource_name)

    def attributes(self, plugin):
        """attr_data's ``attrs`` (and ``attr_errors``): the attributes other
        resources and the outputs read. One the plugin refuses is an error
        for its readers (Heat resolves get_attr when read), not the resource's."""
        needed = self.scope.definition.needed_attributes().get(self.resource_name, ())
        if ANY_ATTRIBUTE in needed:
            needed = (set(needed) - {ANY_ATTRIBUTE}) | set(plugin.attributes_schema)
        attrs, errors = {}, {}
        for name in sorted(needed):
            try:
                attrs[name] = plugin.get_attribute(name)
            except exceptions.InvalidTemplateAttribute as error:
                attrs[name] = None
                errors[name] = [error.resource, error.key]
        return {"attrs": attrs, ATTR_ERRORS: errors} if errors else {"attrs": attrs}

    def creating(self, row, properties, type_name=None, revive=False):
        """The write that marks ``row`` CREATE_IN_PROGRESS (see :meth:`create_on`)."""
        values = {"type": type_name} if type_name and type_name != row.type else {}
        if revive:
            values["current"] = True
        return self.create_start(create_key(row.id, self.scope.traversal_id), properties,
                                 row.attr_data, **values)

    def create_start(self, key, properties, attr_data=None, **values):
        """The write that marks a row CREATE_IN_PROGRESS under create key
        ``key``, its ``attr_data`` kept (a replacement, a new row, keeps none)."""
        # The create's idempotency key is kept with the row until the object's
        # id is recorded: a later delete (whose writes change the row's
        # traversal) finds by it what an interrupted or failed create made.
        # It is the key of this row only: a row holding another's would
        # delete (or adopt) that row's object.
        data = dict(attr_data or {}, **{CREATE_KEY: key})
        # A row whose object was deleted (a rollback, a failed create) keeps
        # that object's id; the new object is not it.
        return dict(action=states.CREATE, status=states.IN_PROGRESS, status_reason="state changed",
                    properties_data=properties, traversal_id=self.scope.traversal_id,
                    physical_id=None, attr_data=data, **values)

    def create_on(self, row, properties, type_name=None, release=False, started=False,
                  undo=None, revive=False):
        """Create the physical object of locked ``row``; returns the row when done
        (unlocked if ``release``: in the same write as its completion).

        ``type_name``: the template's type, when an update creates an object
        for a row that has none (its type may have changed meanwhile).
        ``started``: the lock already wrote :meth:`creating`.
        ``undo``: what a revert of this traversal must do, kept on the row
        (:func:`stored_undo`). ``revive``: make the row current again.
        """
        scope = self.scope
        if not started:
            row = scope.write(row, event=scope.runtime.engine_id,
                              **self.creating(row, properties, type_name, revive))
        try:
            values = self.created(row, properties, undo)
        except Exception as error:
            raise self.fail(row, states.CREATE, error) from error
        return scope.write(row, event=scope.runtime.engine_id, release=release, **values)

    def created(self, row, properties, undo=None):
        """Create the object of ``row`` as :meth:`creating` left it; returns
        the write that records it CREATE_COMPLETE."""
        # Heat pauses at pre-create only in a stack create (Resource.create).
        if self.scope.action == states.CREATE:
            hooks.break_if_required(self.scope, row, states.CREATE, "pre-create")
        plugin = self.scope.plugin(row, properties)
        self.scope.checks.before(plugin, states.CREATE)
        # Adopting (Engine.create_stack(adopt_stack_data=...)): take over
        # the object the abandon data names instead of creating one.
        adopt = (row.attr_data or {}).get("adopt")
        try:
            physical_id = plugin.handle_adopt(adopt) if adopt else plugin.create()
        except Exception as error:
            # Known before it failed (a nested stack exists once made, as
            # Heat's StackResource sets its resource_id at once): recorded
            # with the failure, so a delete finds the object.
            if plugin.context.physical_id and getattr(error, "record", None) is None:
                error.record = {"physical_id": plugin.context.physical_id}
            raise
        # What get_resource returns is known once the plugin knows its id.
        if physical_id is not None:
            plugin.context.physical_id = physical_id
        data = {"ref": plugin.reference_id(), **self.attributes(plugin),
                "data": plugin.stored_data(),
                "fingerprint": self.fingerprint(row.type, properties)}
        if undo:
            data[UNDO] = {"traversal": self.scope.traversal_id, **undo}
        self.scope.checks.after(plugin, states.CREATE,
                                record={"physical_id": physical_id, "attr_data": data})
        return dict(action=states.CREATE, status=states.COMPLETE, status_reason="state changed",
                    physical_id=physical_id, attr_data=data)

    def resolve(self, inputs, row=None):
        """The resource's properties from its dependencies' outputs; a failure
        is recorded on ``row`` (locked) when given."""
        get_resource, get_attr = resolver(inputs)
        try:
            return self.scope.definition.resolve_properties(
                self.resource_name, get_resource=get_resource, get_attr=get_attr)
        except Exception as error:
            if row is None:
                raise
            raise self.fail(row, self.ACTION, error) from error
