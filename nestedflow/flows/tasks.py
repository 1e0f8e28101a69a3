"""TaskFlow tasks: one per resource action, plus the traversal's begin and end.

Each task re-checks ownership before it acts -- the stack's current
traversal, this run's claim on it, and the resource lock -- because it may
be re-run after a crash or run by a conductor that was paused while another
took over. The ``revert`` handlers are the rollback.
"""

import datetime
import inspect
import logging
import threading
import uuid

from taskflow import task

from nestedflow import exceptions
from nestedflow.db import models
from nestedflow.resources import base
from nestedflow.stacks.children import ChildStacks
from nestedflow.stacks.definition import ANY_ATTRIBUTE
from nestedflow.template.functions import select_path

LOG = logging.getLogger(__name__)

SYMBOL = "resource:{}"
CLEANED = "cleaned:{}"
#: Key of ``attr_data`` holding what reverting the last converge must undo.
UNDO = "undo"
#: Traversals a stack's ``timeout`` applies to (as in Heat: a rollback, a
#: delete and the other actions are not cut short).
TIMED_ACTIONS = ("CREATE", "UPDATE")


class Cancelled(exceptions.NestedflowError):
    """The user cancelled the traversal (``Engine.cancel_update``)."""


class TraversalScope:
    """Shared by every task of one run of one traversal of one stack."""

    def __init__(self, runtime, stack, traversal_id, action, definition=None, owner=None):
        self.runtime = runtime
        self.db = runtime.db
        self.stack = stack
        self.traversal_id = traversal_id
        self.action = action
        self.definition = definition
        self.owner = owner
        # Lock holder: this run of the traversal. A later run (resume after a
        # crash) re-claims the stack and so may take over these locks.
        self.holder = f"{traversal_id}/{owner}"
        self.stop_event = runtime.stop_event(traversal_id)
        #: When a timed create or update must have settled (UTC), else None.
        self.deadline = None
        if stack.timeout and action in TIMED_ACTIONS:
            started = self.db.traversal_started_at(stack, traversal_id)
            self.deadline = started + datetime.timedelta(minutes=stack.timeout)
            runtime.stop_at(traversal_id, self.deadline)
        #: Set once cleanup deleted something: from then on there is no way back.
        self.cleanup_started = False
        # Per task run (TaskFlow runs each task in its own worker thread):
        # whether it is a revert, and the locks it holds.
        self._task = threading.local()

    # -- per task -----------------------------------------------------------

    def begin_task(self, reverting=False):
        self._task.reverting = reverting
        self._task.held = set()

    def end_task(self):
        """Release any lock the task still holds: a task that failed half-way
        must not leave its resources locked for the next traversal."""
        held = getattr(self._task, "held", set())
        self._task.held = set()
        self._task.reverting = False
        for row_id in sorted(held):
            try:
                self.db.release_lock(row_id, self.holder)
            except Exception:  # never fail the engine from a post-task hook
                LOG.exception("could not release the lock of resource row %s", row_id)

    @property
    def reverting(self):
        return getattr(self._task, "reverting", False)

    def _mark(self, row_id, held):
        locks = getattr(self._task, "held", None)
        if locks is None:
            locks = self._task.held = set()
        (locks.add if held else locks.discard)(row_id)

    def wait_event(self):
        """What waits of this task watch: a cancel cuts an action short but
        must not cut short the revert that undoes it."""
        if self.reverting:
            return self.runtime.stop_event(self._revert_key)
        return self.stop_event

    @property
    def _revert_key(self):
        return f"{self.traversal_id}/revert"

    # -- ownership ----------------------------------------------------------

    def check_deadline(self):
        """Raise once a timed traversal is past its deadline (reverts go on)."""
        if self.deadline is not None and not self.reverting and (
                models.utcnow() >= self.deadline):
            raise exceptions.StackTimedOut(self.action, self.stack.timeout)

    def seconds_left(self):
        """Until the deadline (None: no deadline applies to this task)."""
        if self.deadline is None or self.reverting:
            return None
        return max(0.0, (self.deadline - models.utcnow()).total_seconds())

    def check_owner(self, stack=None):
        """Raise unless this run still owns the traversal and may start
        actions; ``stack`` is a row read just now, checked instead of
        reading the stack again."""
        self.check_deadline()
        if stack is not None:
            current, owner, cancel = (stack.current_traversal, stack.traversal_owner,
                                      stack.cancel_requested)
        else:
            current, owner, cancel, _ = self.db.ownership(self.stack.id)
        # No new action once superseded; actions in flight finish (their
        # results are kept and the new traversal converges from them).
        if current != self.traversal_id or (self.owner and owner != self.owner):
            raise exceptions.TraversalSuperseded(self.stack.id, self.traversal_id)
        # A cancel stops new actions; the reverts it asked for must go on.
        if cancel and not self.reverting:
            raise Cancelled(f"Stack {self.action} cancelled")

    def is_owner(self):
        current, owner, _, _ = self.db.ownership(self.stack.id)
        return current == self.traversal_id and (not self.owner or owner == self.owner)

    @property
    def converging(self):
        """Does this traversal bring the stack to a template (update, or the
        convergence pass of a rollback)?"""
        return self.action in ("UPDATE", "ROLLBACK")

    def rollback_enabled(self):
        if self.cleanup_started or self.action not in ("CREATE", "UPDATE"):
            return False
        _, _, cancel, disable_rollback = self.db.ownership(self.stack.id)
        if cancel:
            return cancel == "rollback"
        return not disable_rollback

    def may_steal(self, row):
        """Is the lock on ``row`` stale (its holder fenced or dead)?"""
        traversal, _, owner = (row.engine_id or "").partition("/")
        if traversal == self.traversal_id:
            # An earlier run of this same traversal: our claim fenced it.
            return True
        return not self.runtime.holder_alive(row)

    def lock(self, row_id, start=None):
        """Take the resource lock, waiting while a live holder finishes its action.

        ``start(row)``: the state to record once locked (values for
        :meth:`set_state`'s write, or None), in the lock's own transaction
        when the lock is free; or a list of writes
        (:meth:`Database.try_lock_resource`), the last of which may release
        the lock (``engine_id=None``).
        """
        self.check_deadline()
        row = self.db.try_lock_resource(row_id, self.holder, self.stack.id, self.traversal_id,
                                        owner=self.owner, cancelled_ok=self.reverting,
                                        start=start, event=self.runtime.engine_id)
        if row is None:
            row = self._wait_for_lock(row_id)
            steps = start(row) if start is not None else None
            for step in (steps if isinstance(steps, list) else [steps] if steps else []):
                values = step(row) if callable(step) else step
                if not values:
                    break
                row = self.write(row, event=self.runtime.engine_id, **values)
        self._mark(row.id, row.engine_id == self.holder)
        return row

    def write_free(self, snapshot, start):
        """:meth:`lock` without a lock of its own, for ``start`` writes that
        end by releasing it, when ``snapshot`` (read when the flow was built)
        is still the row as it is: one statement
        (:meth:`Database.write_free_resource`). Returns the row as written,
        or None when that does not apply (then :meth:`lock` it)."""
        self.check_deadline()
        return self.db.write_free_resource(
            snapshot, self.holder, self.stack.id, self.traversal_id, owner=self.owner,
            cancelled_ok=self.reverting, start=start, event=self.runtime.engine_id)

    def _wait_for_lock(self, row_id):
        # Taken, superseded or cancelled: find out which, the slow way.
        delay = 0.02
        while True:
            self.check_owner()
            try:
                row = self.db.lock_resource(row_id, self.holder, may_steal=self.may_steal)
            except exceptions.ResourceLocked:
                # Typically a superseded traversal's action still in flight;
                # it keeps its result and releases the lock when done.
                if self.wait_event().wait(delay):
                    self.check_owner()
                delay = min(delay * 2, 0.5)
            else:
                self._mark(row.id, True)
                return row

    # -- acting -------------------------------------------------------------

    def plugin(self, row, properties):
        data = (row.attr_data or {}).get("data") or {}
        context = base.ActionContext(
            stack_id=row.stack_id,
            stack_name=self.stack.name,
            resource_id=row.id,
            resource_name=row.name,
            type_name=row.type,
            traversal_id=self.traversal_id,
            create_key=f"{row.id}:{row.traversal_id or self.traversal_id}",
            store=self.runtime.store,
            physical_id=row.physical_id,
            data=dict(data),
            stop_event=self.wait_event(),
            still_owner=self.check_owner,
            children=ChildStacks(self),
            holder=self.holder,
        )
        return self.runtime.registry.get(row.type)(row.name, properties, context)

    def in_database_only(self, row):
        """Do the actions of ``row``'s type change nothing outside this
        database (:attr:`Resource.side_effects`)?

        Such an action runs inside its lock's transaction, which also
        records its start and its end: a crash before the commit leaves
        nothing behind, so the start need not be durable first.
        """
        try:
            return not self.runtime.registry.get(row.type).side_effects
        except exceptions.NestedflowError:
            return False  # an unknown type fails where failures are recorded

    def set_state(self, row, action, status, reason="", release=False, **values):
        return self.write(row, event=self.runtime.engine_id, release=release, action=action,
                          status=status, status_reason=reason, **values)

    def write(self, row, release=False, **values):
        """Compare-and-swap write of a row this task locked."""
        row = self.db.update_resource(row, self.holder, release=release, **values)
        if release:
            self._mark(row.id, False)
        return row

    def release(self, row):
        return self.write(row, release=True)

    def set_stack_state(self, action, status, reason, **values):
        self.db.set_stack_state(self.stack.id, self.traversal_id, action, status, reason,
                                owner=self.owner, **values)


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
    cancels = [f for f in failures if f.check(Cancelled)]
    messages = sorted({str(f.exception) if f.exception is not None else f.exception_str
                       for f in (cancels or failures)})
    return "; ".join(messages) or "unknown failure"


def output_of(row):
    data = row.attr_data or {}
    return {"ref": data.get("ref"), "attrs": data.get("attrs") or {}, "row": row.id}


def inputs_by_name(inputs):
    return {name.split(":", 1)[1]: value for name, value in inputs.items()
            if name.startswith("resource:")}


def resolver(inputs):
    resolved = inputs_by_name(inputs)
    return (
        lambda name: resolved[name]["ref"],
        lambda name, attr, path: select_path(resolved[name]["attrs"].get(attr), path),
    )


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


class ScopedTask(task.Task):
    """A task whose runs (execute or revert) are bracketed by its scope:
    reverts are marked as such, and locks a failed run still holds are released."""

    scope = None

    def _build_arg_mapping(self, executor, *args, **kwargs):
        # TaskFlow inspects execute and revert of every task it builds, a
        # thousand per stack, three times each; inspecting a bound method
        # derives its signature anew every time. What it inspects instead
        # carries the signature, derived once per function.
        return super()._build_arg_mapping(_inspectable(executor), *args, **kwargs)

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
            self.scope.runtime.forget(self.scope._revert_key)

    def _settle(self, flow_failures):
        scope = self.scope
        if isinstance_failure(flow_failures, exceptions.OwnershipLost) and not (
            scope.is_owner()
        ):
            return
        reason = failure_reason(flow_failures)
        rolled_back = scope.action in ("CREATE", "UPDATE") and scope.rollback_enabled()
        values = {}
        if rolled_back and scope.action == "UPDATE":
            values["raw_template_id"] = scope.stack.prev_raw_template_id
            _retire_unconverged_additions(scope)
            realized, outputs, why = _realizes_previous(scope)
            if realized:
                values["outputs"] = outputs
            elif _converge_back(scope, f"{reason}; {why}"):
                return
            else:
                scope.set_stack_state("ROLLBACK", "FAILED", f"{reason}; {why}", **values)
                return
        action = "ROLLBACK" if rolled_back else scope.action
        status = "COMPLETE" if rolled_back else "FAILED"
        try:
            scope.set_stack_state(action, status, reason, **values)
        except exceptions.OwnershipLost:
            LOG.info("stack %s: superseded before it could record %s_%s",
                     scope.stack.id, action, status)


def _realizes_previous(scope):
    """Do the rows left by the revert realize the previous template?

    The revert undoes this traversal's own actions only. That is the
    previous template when it was fully applied before this update; not when
    this update superseded one still in progress, or followed a failure.
    Returns (realized, outputs, why not).
    """
    from nestedflow.flows import factories  # imports this module

    stack = scope.stack
    definition = factories.load_definition(scope.runtime, stack, stack.prev_raw_template_id)
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
        if row is None or row.type != res.type or row.status != "COMPLETE" or (
                row.action not in ("CREATE", "UPDATE", "SUSPEND", "RESUME", "CHECK")):
            return False, None, f"{name} is not as the previous template has it"
    plugins = {name: scope.plugin(row, row.properties_data or {})
               for name, row in current.items()}

    def get_resource(name):
        return (current[name].attr_data or {}).get("ref")

    def get_attr(name, attr, path):
        return select_path(plugins[name].get_attribute(attr), path)

    files = definition.template.files or {}
    for name, row in current.items():
        try:
            properties = definition.resolve_properties(name, get_resource=get_resource,
                                                       get_attr=get_attr)
        except Exception:  # an input is missing: not realized
            return False, None, f"{name}'s inputs are not as the previous template has them"
        fingerprint = scope.runtime.registry.get(row.type).fingerprint(
            properties, files, row.type)
        if properties != row.properties_data or fingerprint != (
                row.attr_data or {}).get("fingerprint"):
            return False, None, f"{name} is not as the previous template has it"
    return True, definition.resolve_outputs(get_resource=get_resource,
                                            get_attr=get_attr), ""


def _converge_back(scope, reason):
    """Start the rollback's convergence pass: a ROLLBACK traversal that
    converges the stack to the previous template from whatever exists (as
    an update would). Returns False when this process cannot start one."""
    dispatch = getattr(scope.runtime.stacks, "_dispatch", None)
    if dispatch is None or not scope.is_owner():
        return False
    traversal_id = str(uuid.uuid4())
    try:
        scope.db.begin_traversal(
            scope.stack.id, scope.traversal_id, traversal_id, "ROLLBACK",
            raw_template_id=scope.stack.prev_raw_template_id,
            status_reason=f"{reason}: converging to the previous template")
    except exceptions.TraversalSuperseded:
        return True  # another traversal took over; it decides what happens
    dispatch(scope.stack.id, traversal_id, "ROLLBACK")
    return True


def _retire_unconverged_additions(scope):
    """Resources this update added but never reached leave with the rollback
    (their tasks never ran, so no revert did it)."""
    for row in scope.db.list_resources(scope.stack.id):
        if row.template_id == scope.stack.raw_template_id and row.replaces is None and (
                is_gone(row)):
            scope.write(scope.lock(row.id), release=True, current=False)


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

    def lock_for(self, start):
        """The row locked with ``start`` written (:meth:`TraversalScope.lock`);
        or, on this task's first run and for a database-only type, written
        at once from the row read when the flow was built, if unchanged
        since (:meth:`TraversalScope.write_free`)."""
        scope = self.scope
        # A later run (a retry, a revert) reads the row anew.
        snapshot, self._snapshot = self._snapshot, None
        if snapshot is not None and snapshot.id == self.row_id and (
                scope.in_database_only(snapshot)):
            row = scope.write_free(snapshot, start)
            if row is not None:
                return row
        return scope.lock(self.row_id, start=start)

    def fail(self, row, action, error):
        reason = f"{type(error).__name__}: {error}"
        try:
            self.scope.set_state(row, action, "FAILED", reason, release=True)
        except exceptions.OwnershipLost:
            LOG.info("resource %s: lost ownership before recording failure", row.name)
        if isinstance(error, (exceptions.OwnershipLost, Cancelled)):
            return error
        return exceptions.ResourceFailure(row.name, action, error)

    def fingerprint(self, type_name, properties):
        files = self.scope.definition.template.files or {}
        plugin_cls = self.scope.runtime.registry.get(type_name)
        return plugin_cls.fingerprint(properties, files, type_name)

    def attributes(self, plugin):
        needed = self.scope.definition.needed_attributes().get(self.resource_name, ())
        if ANY_ATTRIBUTE in needed:
            needed = (set(needed) - {ANY_ATTRIBUTE}) | set(plugin.attributes_schema)
        return {name: plugin.get_attribute(name) for name in sorted(needed)}

    def creating(self, row, properties, type_name=None, revive=False):
        """The write that marks ``row`` CREATE_IN_PROGRESS (see :meth:`create_on`)."""
        values = {"type": type_name} if type_name and type_name != row.type else {}
        if revive:
            values["current"] = True
        # A row whose object was deleted (a rollback, a failed create) keeps
        # that object's id; the new object is not it.
        return dict(action="CREATE", status="IN_PROGRESS", status_reason="state changed",
                    properties_data=properties, traversal_id=self.scope.traversal_id,
                    physical_id=None, **values)

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
            raise self.fail(row, "CREATE", error) from error
        return scope.write(row, event=scope.runtime.engine_id, release=release, **values)

    def created(self, row, properties, undo=None):
        """Create the object of ``row`` as :meth:`creating` left it; returns
        the write that records it CREATE_COMPLETE."""
        plugin = self.scope.plugin(row, properties)
        physical_id = plugin.create()
        # What get_resource returns is known once the plugin knows its id.
        if physical_id is not None:
            plugin.context.physical_id = physical_id
        data = {"ref": plugin.reference_id(), "attrs": self.attributes(plugin),
                "data": plugin.stored_data(),
                "fingerprint": self.fingerprint(row.type, properties)}
        if undo:
            data[UNDO] = {"traversal": self.scope.traversal_id, **undo}
        return dict(action="CREATE", status="COMPLETE", status_reason="state changed",
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


class CreateResource(ResourceTask):
    ACTION = "CREATE"

    def __init__(self, scope, row, dependency_names):
        super().__init__(scope, row, requires=[SYMBOL.format(n) for n in dependency_names],
                         provides=SYMBOL.format(row.name))

    def execute(self, traversal, **inputs):
        scope = self.scope
        try:
            properties = self.resolve(inputs)
        except Exception as error:
            row = scope.lock(self.row_id)
            if self._done(row):
                return output_of(scope.release(row))
            raise self.fail(row, self.ACTION, error) from error
        row = self.lock_for(lambda row: self._start(row, properties))
        if row.engine_id != scope.holder:
            return output_of(row)  # created in the lock's transaction
        if self._done(row):
            # Re-run after a crash: the work is done, hand its results on.
            return output_of(scope.release(row))
        return output_of(self.create_on(row, properties, release=True, started=True))

    def _start(self, row, properties):
        if self._done(row):
            return None
        creating = self.creating(row, properties)
        if not self.scope.in_database_only(row):
            return creating
        return [creating, lambda row: _in_lock(self.created, row, properties)]

    def _done(self, row):
        return (row.action, row.status) == ("CREATE", "COMPLETE") and (
            row.traversal_id == self.scope.traversal_id)

    def revert(self, traversal=None, result=None, flow_failures=None, **inputs):
        scope = self.scope
        if not scope.is_owner() or not scope.rollback_enabled():
            return
        row = scope.lock(self.row_id)
        if row.traversal_id != scope.traversal_id or row.action == "INIT" or (
            row.action, row.status) == ("DELETE", "COMPLETE"):
            scope.release(row)
            return
        # Rollback undoes the create: Retain protects objects from a stack
        # delete, not from the failed create that made them.
        delete_resource(scope, row, honour_retain=False)


class ConvergeResource(ResourceTask):
    """Bring an existing resource to the new template: keep, update or replace.

    Its result's ``undo`` says what the revert must do: delete the object it
    ``created``, give back the properties an in-place update changed
    (``updated``/``previous``), or make the original of a replacement
    current again (``replaced``/``replacement``).
    """

    ACTION = "UPDATE"

    def __init__(self, scope, row, dependency_names):
        super().__init__(scope, row, requires=[SYMBOL.format(n) for n in dependency_names],
                         provides=SYMBOL.format(row.name))

    def _current(self):
        """Lock the current version: an older traversal may have replaced ours."""
        scope = self.scope
        row = scope.lock(self.row_id)
        while row.replaced_by is not None:
            scope.release(row)
            row = scope.lock(row.replaced_by)
        return row

    def execute(self, traversal, **inputs):
        scope = self.scope
        row = self._current()
        if row.traversal_id == scope.traversal_id and row.status == "COMPLETE" and (
            row.action in ("UPDATE", "CREATE")
        ):
            # Re-run after a crash: the journal may not have kept the result,
            # so what the revert must undo comes from the row.
            return {**output_of(scope.release(row)), "undo": stored_undo(row, scope)}
        properties = self.resolve(inputs, row)
        if row.action == "INIT" or (row.action, row.status) == ("DELETE", "COMPLETE"):
            undo = {"created": row.id}
            # An older traversal's cleanup may have retired the row while this
            # traversal (whose template has the resource) was starting: the
            # object made now is the current version again.
            row = self.create_on(row, properties, type_name=self._new_type(), release=True,
                                 undo=undo, revive=not row.current)
            return {**output_of(row), "undo": undo}
        # A failed or interrupted action left the object in an unknown state:
        # replace it (as Heat does); cleanup deletes whatever the old row made.
        if row.status != "COMPLETE" or row.type != self._new_type() or (
            self._needs_replacement(row, properties)
        ):
            return self._replace(row, properties, inputs)
        old = row.properties_data or {}
        plugin = scope.plugin(row, old)
        unchanged_inputs = (row.attr_data or {}).get("fingerprint") == self.fingerprint(
            row.type, properties)
        if properties == old and unchanged_inputs:
            # Unchanged: no plugin action, but dependents still get its data.
            data = dict(row.attr_data or {})
            data.pop(UNDO, None)
            data["attrs"] = self.attributes(plugin)
            row = scope.write(row, release=True, attr_data=data,
                              traversal_id=scope.traversal_id)
            return {**output_of(row), "undo": None}
        row = scope.set_state(row, "UPDATE", "IN_PROGRESS", "state changed",
                              traversal_id=scope.traversal_id)
        try:
            new_id = plugin.update(properties, old)
        except exceptions.UpdateReplace:
            row = scope.set_state(row, "UPDATE", "COMPLETE", "replacing")
            return self._replace(row, properties, inputs)
        except Exception as error:
            raise self.fail(row, "UPDATE", error) from error
        undo = {"updated": row.id, "previous": old}
        data = {"ref": plugin.reference_id(), "attrs": self.attributes(plugin),
                "data": plugin.stored_data(),
                "fingerprint": self.fingerprint(row.type, properties),
                UNDO: {"traversal": scope.traversal_id, **undo}}
        row = scope.set_state(row, "UPDATE", "COMPLETE", "state changed", release=True,
                              properties_data=properties, attr_data=data,
                              physical_id=new_id or row.physical_id)
        return {**output_of(row), "undo": undo}

    def _new_type(self):
        return self.scope.definition.resources[self.resource_name].type

    def _needs_replacement(self, row, properties):
        plugin_cls = self.scope.runtime.registry.get(row.type)
        schema = plugin_cls.properties_schema or {}
        old = row.properties_data or {}
        changed = {k for k in set(old) | set(properties) if old.get(k) != properties.get(k)}
        return any(k in schema and not schema[k].update_allowed for k in changed)

    def _replace(self, row, properties, inputs):
        """Create a replacement first; the original is deleted in cleanup."""
        scope = self.scope
        requires = [value["row"] for value in inputs_by_name(inputs).values()
                    if isinstance(value, dict) and value.get("row")]
        new = scope.db.add_replacement(row, scope.holder, scope.stack.raw_template_id,
                                       requires, type_name=self._new_type(),
                                       traversal_id=scope.traversal_id)
        scope._mark(new.id, True)
        undo = {"replaced": row.id, "replacement": new.id}
        new = self.create_on(new, properties, undo=undo)
        scope.db.swap_current(row, new, scope.holder)
        scope.release(row)
        new = scope.release(new)
        return {**output_of(new), "undo": undo}

    def revert(self, traversal=None, result=None, flow_failures=None, **inputs):
        scope = self.scope
        if not scope.is_owner() or not scope.rollback_enabled():
            return
        if not isinstance(result, dict):
            # The execute failed (or never finished): undo what it left.
            self._revert_failed()
            return
        undo = result.get("undo") or {}
        if undo.get("replaced"):
            self._revert_replacement(undo["replaced"], undo["replacement"])
        elif undo.get("created"):
            row = scope.lock(undo["created"])
            delete_resource(scope, row, honour_retain=False, retire=self._added(row))
        elif undo.get("updated"):
            row = scope.lock(undo["updated"])
            plugin = scope.plugin(row, row.properties_data or {})
            row = scope.set_state(row, "UPDATE", "IN_PROGRESS", "rolling back")
            new_id = plugin.update(undo["previous"], row.properties_data or {})
            scope.set_state(row, "UPDATE", "COMPLETE", "rolled back", release=True,
                            properties_data=undo["previous"],
                            physical_id=new_id or row.physical_id)

    def _added(self, row):
        """Did this update add the resource (so the rollback retires its row)?"""
        return row.template_id == self.scope.stack.raw_template_id and row.replaces is None

    def _revert_replacement(self, original_id, replacement_id):
        """The original becomes current again; the replacement goes."""
        scope = self.scope
        original = scope.lock(original_id)
        new = scope.lock(replacement_id)
        if new.current:
            scope.db.swap_current(new, original, scope.holder)
        delete_resource(scope, new, honour_retain=False, retire=True)
        scope.write(original, release=True, current=True, replaced_by=None)

    def _revert_failed(self):
        scope = self.scope
        row = self._current()
        # A replacement whose create failed: never made current.
        for other in scope.db.list_all_resources(row.stack_id):
            if other.replaces == row.id and other.traversal_id == scope.traversal_id and (
                    not other.current and not is_gone(other)):
                delete_resource(scope, scope.lock(other.id), honour_retain=False, retire=True)
        if row.traversal_id != scope.traversal_id or row.status != "FAILED":
            scope.release(row)
        elif row.action == "CREATE":
            # It was created here (it had no object before) and failed.
            delete_resource(scope, row, honour_retain=False, retire=self._added(row))
        elif row.action == "UPDATE":
            # An in-place update failed part-way: put the old properties back.
            old = row.properties_data or {}
            plugin = scope.plugin(row, old)
            row = scope.set_state(row, "UPDATE", "IN_PROGRESS", "rolling back")
            plugin.update(old, old)
            scope.set_state(row, "UPDATE", "COMPLETE", "rolled back", release=True)
        else:
            scope.release(row)


#: The write that marks a row DELETE_IN_PROGRESS (see :func:`delete_resource`).
DELETING = {"action": "DELETE", "status": "IN_PROGRESS", "status_reason": "state changed"}


def _in_lock(action, row, *args):
    """Run a database-only ``action`` inside the lock's transaction; its
    write also releases the lock. On an error the lock stays taken (and the
    start written) for the ordinary path to run the action again and record
    the failure: running it twice changes nothing outside the database."""
    try:
        return {**action(row, *args), "engine_id": None}
    except Exception:
        return None


def delete_resource(scope, row, honour_retain=True, retire=False, started=False):
    """Delete the physical object of a locked row, then release it.

    ``retire`` also drops the row from the stack's current resources (an
    old version or a resource the template no longer has). ``started``: the
    lock already wrote :data:`DELETING`.
    """
    if not started:
        row = scope.write(row, event=scope.runtime.engine_id, **DELETING)
    try:
        values = deleted(scope, row, honour_retain, retire)
    except exceptions.OwnershipLost:
        raise
    except Exception as error:
        reason = f"{type(error).__name__}: {error}"
        scope.set_state(row, "DELETE", "FAILED", reason, release=True)
        raise exceptions.ResourceFailure(row.name, "DELETE", error) from error
    return scope.write(row, event=scope.runtime.engine_id, release=True, **values)


def deleted(scope, row, honour_retain=True, retire=False):
    """Delete the object of ``row`` as :data:`DELETING` left it; returns the
    write that records it DELETE_COMPLETE (see :func:`delete_resource`)."""
    if not (honour_retain and row.deletion_policy == "Retain"):
        scope.plugin(row, row.properties_data or {}).delete()
    values = {"current": False} if retire else {}
    return dict(action="DELETE", status="COMPLETE", status_reason="state changed", **values)


def deleting(scope, row, retire=False):
    """The lock's writes that start a cleanup's delete of ``row`` (and, for a
    database-only type, do it: :func:`_in_lock`)."""
    if not scope.in_database_only(row):
        return dict(DELETING)

    def delete(row):
        scope.cleanup_started = True
        return deleted(scope, row, retire=retire)

    return [dict(DELETING), lambda row: _in_lock(delete, row)]


def is_gone(row):
    return row.action == "INIT" and row.physical_id is None or (
        row.action, row.status) == ("DELETE", "COMPLETE")


class DeleteResource(ResourceTask):
    """Delete one row, after every row that needed it (in its own template's graph)."""

    ACTION = "DELETE"

    def __init__(self, scope, row, needed_by_ids, after=()):
        super().__init__(
            scope,
            row,
            requires=[CLEANED.format(i) for i in needed_by_ids] + list(after),
            provides=CLEANED.format(row.id),
        )

    def execute(self, traversal, **inputs):
        scope = self.scope
        retire = scope.converging

        def kept(row):
            # A replacement an older traversal was still creating when this
            # flow was built: it has become the current version since.
            return retire and row.current and row.name in scope.definition.resources

        row = self.lock_for(lambda row: None if kept(row) or is_gone(row)
                            else deleting(scope, row, retire))
        if row.engine_id != scope.holder:
            return True  # deleted in the lock's transaction
        if kept(row):
            scope.release(row)
            return True
        if is_gone(row):
            # Never created (or already deleted): an update still drops it
            # from the stack's resources.
            scope.write(row, release=True, **({"current": False} if retire else {}))
            return True
        scope.cleanup_started = True
        delete_resource(scope, row, retire=retire, started=True)
        return True


class CleanupReplaced(DeleteResource):
    """Cleanup of a row that stays in the template: delete it only if replaced."""

    ACTION = "CLEANUP"

    def execute(self, traversal, **inputs):
        scope = self.scope
        row = self.lock_for(lambda row: None if row.current or is_gone(row)
                            else deleting(scope, row))
        if row.engine_id != scope.holder:
            return True  # deleted in the lock's transaction
        if row.current or is_gone(row):
            scope.release(row)
            return True
        scope.cleanup_started = True
        delete_resource(scope, row, started=True)
        return True


class ResourceAction(ResourceTask):
    """Suspend, resume or check one resource (no revert: nothing to undo)."""

    def __init__(self, scope, row, action, after_ids):
        self.ACTION = action
        super().__init__(scope, row, requires=[f"done:{i}" for i in after_ids],
                         provides=f"done:{row.id}")

    def execute(self, traversal, **inputs):
        scope = self.scope
        row = scope.lock(self.row_id)
        if is_gone(row):
            scope.release(row)
            return True
        if row.traversal_id == scope.traversal_id and (row.action, row.status) == (
                self.ACTION, "COMPLETE"):
            scope.release(row)
            return True
        row = scope.set_state(row, self.ACTION, "IN_PROGRESS", "state changed",
                              traversal_id=scope.traversal_id)
        plugin = scope.plugin(row, row.properties_data or {})
        try:
            getattr(plugin, self.ACTION.lower())()
        except Exception as error:
            raise self.fail(row, self.ACTION, error) from error
        scope.set_state(row, self.ACTION, "COMPLETE", "state changed", release=True)
        return True


class CompleteTraversal(ScopedTask):
    """Last task: record outputs, the new graph, and the stack's final state."""

    def __init__(self, scope, requires):
        reads = requires
        if scope.action not in ("CREATE", "UPDATE", "ROLLBACK"):
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
        if scope.converging or scope.action == "DELETE":
            _sweep(scope)
        if scope.action in ("CREATE", "UPDATE", "ROLLBACK"):
            get_resource, get_attr = resolver(inputs)
            values["outputs"] = scope.definition.resolve_outputs(
                get_resource=get_resource, get_attr=get_attr)
        if scope.action == "DELETE":
            values["deleted_at"] = models.utcnow()
        if scope.converging:
            # Before the stack settles: the next update builds its cleanup
            # from these edges.
            scope.check_owner()
            _record_graph(scope)
        scope.set_stack_state(scope.action, "COMPLETE",
                              f"Stack {scope.action} completed successfully", **values)


def _sweep(scope):
    """Clean up versions this flow could not know about when it was built.

    An older traversal's action in flight when this one took over may have
    replaced a resource afterwards (a new row, or a current row for a
    resource this template removed); this flow's cleanup tasks were made
    from the rows that existed then. Whatever is still stale now is deleted
    here, dependents first.
    """
    keep = set(scope.definition.resources) if scope.converging else set()
    retire = scope.converging
    while True:
        stale = [
            row for row in scope.db.list_all_resources(scope.stack.id)
            if (not row.current or row.name not in keep)
            and (not is_gone(row) or (retire and row.current))
        ]
        if not stale:
            return
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


def _record_graph(scope):
    """Persist the new template's edges on the rows that are now current."""
    rows = {row.name: row for row in scope.db.list_resources(scope.stack.id)}
    dependencies = scope.definition.dependencies()
    needed_by = {row.id: set() for row in rows.values()}
    requires = {}
    for name, row in rows.items():
        requires[row.id] = {rows[d].id for d in dependencies.get(name, ()) if d in rows}
        for dep in requires[row.id]:
            needed_by[dep].add(row.id)
    scope.db.set_edges({i: (requires[i], needed_by[i]) for i in requires})

