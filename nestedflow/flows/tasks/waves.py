"""Database-only waves: the resources whose actions only write nestedflow's
own database (:attr:`nestedflow.resources.base.Resource.side_effects`
False: ``OS::Heat::None``, ``Value``, a scaling policy, ...) acted on
together -- one TaskFlow task and one transaction per wave -- where each
would otherwise cost a task of its own, a journal record and a commit.

How waves are cut (:func:`cut`): a resource joins a wave only if its type is
database-only (no checks, no hooks) and everything it waits for is too;
its wave is its depth in that all-database-only part of the graph (0: it
waits for nothing, else one more than the deepest of what it waits for).
So a wave task waits only for earlier waves, which are database writes:
a database-only resource never waits for a slow real resource it does not
depend on. Anything after a real resource keeps a task of its own, as do
waves of a single resource.

What users see stays per resource: each row gets its own states and
events, in one transaction with the rest of its wave; the transaction's
first statement is a locking read of the run's ownership and each row's
compare-and-swap checks it again (:meth:`Database.write_free_resources`),
so a run taken over, superseded or cancelled writes nothing. A row that
cannot be written so -- changed since the flow read it (a resumed run, a
lock held by another traversal), or whose action fails (a property that
does not resolve) -- is acted on the ordinary way, by the per-resource
task's code (which records a failure on its resource); the wave then fails
with it. Rows this traversal already finished are handed on as they are
(a resumed run redoes nothing). The revert deletes exactly what the wave's
traversal created of its rows, in one transaction the same way.
"""

import logging
import operator

from nestedflow import exceptions, states
from nestedflow.db import models
from nestedflow.flows.tasks.base import (
    CLEANED,
    SYMBOL,
    UNDO,
    ResourceTask,
    ScopedTask,
    is_gone,
    output_of,
    stored_undo,
)
from nestedflow.flows.tasks.converge import ConvergeResource
from nestedflow.flows.tasks.create import CreateResource
from nestedflow.flows.tasks.delete import DeleteResource, _deleting, deleted
from nestedflow.stacks import changes

LOG = logging.getLogger(__name__)


def cut(rows, before, eligible):
    """Split ``rows`` into waves: returns (waves, the rest), each wave a
    list of rows of two or more.

    ``before``: row id -> ids of the rows its action waits for (among
    ``rows``); ``eligible(row)``: may the row be acted on in a wave.
    """
    by_id = {row.id: row for row in rows}
    waiting = {row.id: [i for i in before.get(row.id, ()) if i in by_id] for row in rows}
    dependents = {row.id: [] for row in rows}
    for row_id, ids in waiting.items():
        for i in ids:
            dependents[i].append(row_id)
    # Depths in topological order (Kahn): the graph may be thousands deep.
    left = {row_id: len(ids) for row_id, ids in waiting.items()}
    ready = [row_id for row_id, count in left.items() if not count]
    depth = {}
    while ready:
        row_id = ready.pop()
        parents = waiting[row_id]
        if eligible(by_id[row_id]) and all(depth.get(i) is not None for i in parents):
            depth[row_id] = 1 + max((depth[i] for i in parents), default=-1)
        else:
            depth[row_id] = None
        for child in dependents[row_id]:
            left[child] -= 1
            if not left[child]:
                ready.append(child)
    levels = {}
    for row in rows:
        if depth.get(row.id) is not None:
            levels.setdefault(depth[row.id], []).append(row)
    waves = [members for _, members in sorted(levels.items()) if len(members) > 1]
    in_waves = {row.id for members in waves for row in members}
    return waves, [row for row in rows if row.id not in in_waves]


class _Member:
    """What a wave needs of the per-resource task of one of its rows,
    without building that task (a TaskFlow task costs its inspection)."""

    __slots__ = ("scope", "row_id", "resource_name")

    creating = ResourceTask.creating
    create_start = ResourceTask.create_start
    created = ResourceTask.created
    attributes = ResourceTask.attributes
    fingerprint = ResourceTask.fingerprint
    resolve = ResourceTask.resolve

    def __init__(self, scope, row):
        self.scope = scope
        self.row_id = row.id
        self.resource_name = row.name


class _Wave(ScopedTask):
    """A task acting on the rows of one wave; each provides its own symbol.

    ``dependencies`` is the map the flow factory built for the per-resource
    tasks too: a row's :attr:`KEY` to the keys of the rows it waits for.
    Kept per row id (:attr:`dependencies`): the member tasks are made from
    it when a row goes the ordinary way.
    """

    VERB = None
    #: What a row's symbol names it by: its resource name (a create's or an
    #: update's symbols, which dependents read), or its row id (a delete's:
    #: old and new versions of one name are deleted apart).
    KEY = operator.attrgetter("name")
    #: The format of the symbol each row provides and dependents require.
    SYMBOL = SYMBOL

    def __init__(self, scope, rows, dependencies):
        key, symbol = self.KEY, self.SYMBOL.format
        keys = [key(row) for row in rows]
        self.dependencies = {row.id: dependencies.get(k, [])
                             for row, k in zip(rows, keys, strict=True)}
        requires = sorted({symbol(k) for ks in self.dependencies.values() for k in ks})
        symbols = tuple(symbol(k) for k in keys)
        first = min(row.id for row in rows)
        super().__init__(name=f"{self.VERB} wave of {len(rows)} #{first}",
                         provides=symbols, requires=["traversal", *requires])
        self.scope = scope
        self.provides_symbol = symbols
        self.row_ids = [row.id for row in rows]
        self.resource_names = [row.name for row in rows]
        # The rows as read when the flow was built: the first run writes
        # from them. A later run (a retry, a revert) reads them anew.
        self._snapshots = rows

    def rows(self):
        snapshots, self._snapshots = self._snapshots, None
        if snapshots is not None:
            return snapshots
        found = {row.id: row for row in self.scope.db.list_all_resources(self.scope.stack.id)}
        return [found[i] for i in self.row_ids if i in found]

    def write(self, plans):
        """Write ``plans`` (row, writes) as one; the rows written, or None."""
        scope = self.scope
        if not plans:
            return []
        return scope.db.write_free_resources(
            plans, scope.holder, scope.stack.id, scope.traversal_id, owner=scope.owner,
            cancelled_ok=scope.reverting, event=scope.runtime.engine_id)

    def one_by_one(self, rows, act):
        """``act(row)`` for each row the wave could not write; the first
        failure is raised once all were tried (each recorded its own),
        lost ownership at once."""
        failure = None
        for row in rows:
            try:
                act(row)
            except (exceptions.OwnershipLost, exceptions.Cancelled):
                raise
            except Exception as error:
                LOG.debug("wave %s: %s failed: %s", self.name, row.name, error)
                failure = failure or error
        if failure is not None:
            raise failure


class CreateWave(_Wave):
    """Create the rows of one wave of a stack create (see the module's doc)."""

    VERB = "create"

    def _task(self, row):
        return CreateResource(self.scope, row, self.dependencies[row.id])

    def execute(self, traversal, **inputs):
        scope = self.scope
        scope.check_deadline()
        results, plans, slow = {}, [], []
        for row in self.rows():
            if (row.action, row.status) == (states.CREATE, states.COMPLETE) and (
                    row.traversal_id == scope.traversal_id):
                results[row.id] = output_of(row)  # a resumed run: done already
                continue
            writes = self._writes(row, inputs) if row.engine_id is None else None
            (plans.append((row, writes)) if writes else slow.append(row))
        written = self.write(plans)
        if written is None:
            scope.check_owner()  # superseded, cancelled: raises why
            slow = [row for row, _ in plans] + slow
        else:
            results.update((row.id, output_of(row)) for row in written)

        def create(row):
            results[row.id] = self._task(row).execute(traversal, **inputs)

        # A lock a failed row's code still holds is released when this task
        # ends (ScopedTask.post_execute), as for the row's own task.
        self.one_by_one(slow, create)
        return tuple(results[i] for i in self.row_ids)

    def _writes(self, row, inputs):
        """The create of ``row`` as one transaction's writes (its start, then
        its completion releasing the lock), or None if it fails: then the
        ordinary way runs it again and records the failure."""
        member = _Member(self.scope, row)
        try:
            properties = member.resolve(inputs)
            start = member.creating(row, properties)
            view = models.ResourceRow.copy(row)
            for key, value in start.items():
                setattr(view, key, value)
            done = member.created(view, properties)
        except exceptions.OwnershipLost:
            raise
        except Exception as error:
            LOG.debug("wave %s: %s goes the ordinary way: %s", self.name, row.name, error)
            return None
        return [start, {**done, "engine_id": None}]

    def revert(self, traversal=None, result=None, flow_failures=None, **inputs):
        scope = self.scope
        if not scope.is_owner() or not scope.rollback_enabled():
            return
        self._snapshots = None
        plans, slow = [], []
        for row in self.rows():
            if row.traversal_id != scope.traversal_id or row.action == states.INIT or (
                    row.action, row.status) == (states.DELETE, states.COMPLETE):
                continue  # not created by this traversal: nothing to undo
            if row.engine_id is not None:
                slow.append(row)
                continue
            try:
                done = deleted(scope, row, honour_retain=False)
            except Exception:  # recorded by the ordinary way
                slow.append(row)
                continue
            plans.append((row, [_deleting(scope), {**done, "engine_id": None}]))
        if self.write(plans) is None:
            if not scope.is_owner():
                return
            slow = [row for row, _ in plans] + slow
        self.one_by_one(slow, lambda row: self._task(row).revert(traversal=traversal))


class DeleteWave(_Wave):
    """Delete the rows of one wave of a stack delete (see the module's doc)."""

    VERB = "delete"
    KEY = operator.attrgetter("id")
    SYMBOL = CLEANED

    def execute(self, traversal, **inputs):
        scope = self.scope
        scope.check_deadline()
        plans, slow = [], []
        for row in self.rows():
            if is_gone(row) and row.engine_id is None:
                continue  # never created, or deleted already
            writes = self._writes(row) if row.engine_id is None else None
            (plans.append((row, writes)) if writes else slow.append(row))
        if plans:
            scope.cleanup_started = True
        if self.write(plans) is None:
            scope.check_owner()
            slow = [row for row, _ in plans] + slow

        def delete(row):
            DeleteResource(scope, row, self.dependencies[row.id]).execute(traversal)

        self.one_by_one(slow, delete)
        return tuple(True for _ in self.row_ids)

    def _writes(self, row):
        scope = self.scope
        try:
            done = deleted(scope, row)
        except exceptions.OwnershipLost:
            raise
        except Exception as error:
            LOG.debug("wave %s: %s goes the ordinary way: %s", self.name, row.name, error)
            return None
        return [_deleting(scope), {**done, "engine_id": None}]


class ConvergeWave(_Wave):
    """Converge the rows of one wave of an update (or a rollback's pass):
    a resource kept as it is, updated in place or not created yet is
    written with its wave; a replacement, a re-run after a crash and
    anything that fails go the per-resource way
    (:class:`~nestedflow.flows.tasks.converge.ConvergeResource`)."""

    VERB = "update"

    def __init__(self, scope, rows, dependencies):
        super().__init__(scope, rows, dependencies)
        #: Row id -> the member's result, as it was produced: what a revert
        #: of a wave that failed part-way must undo of the others.
        self._results = {}

    def _task(self, row):
        return ConvergeResource(self.scope, row, self.dependencies[row.id])

    def execute(self, traversal, **inputs):
        scope = self.scope
        scope.check_deadline()
        self._results = results = {}
        plans, slow, outcomes = [], [], {}
        for row in self.rows():
            planned = self._plan(row, inputs) if row.engine_id is None else None
            if planned is None:
                slow.append(row)
                continue
            plans.append((row, planned[0]))
            outcomes[row.id] = planned[1]
        written = self.write(plans)
        if written is None:
            scope.check_owner()
            slow = [row for row, _ in plans] + slow
        else:
            for row in written:
                scope.converged[row.id] = bool(row.current)
                results[row.id] = {**output_of(row), "undo": outcomes[row.id]}

        def converge(row):
            results[row.id] = self._task(row).execute(traversal, **inputs)

        self.one_by_one(slow, converge)
        return tuple(results[i] for i in self.row_ids)

    def _plan(self, row, inputs):
        """(writes, undo) of converging ``row``, or None: the ordinary way."""
        task = _Converging(self.scope, row)
        if row.replaced_by is not None or task._rerun_done(row) or task._resumes_in_place(row):
            return None
        try:
            properties = task._external_properties(row, task.resolve(inputs))
            change = task._decide(row, properties)
            if change == changes.UNCHANGED:
                return [{**task._kept(row), "engine_id": None}], None
            view = models.ResourceRow.copy(row)
            if change == changes.CREATE:
                undo = {"created": row.id}
                start = task.creating(row, properties, task._new_type(), not row.current)
                for key, value in start.items():
                    setattr(view, key, value)
                return [start, {**task.created(view, properties, undo),
                                "engine_id": None}], undo
            if change != changes.UPDATE:
                return None  # a replacement: a row of its own, its own way
            old = row.properties_data or {}
            plugin = self.scope.plugin(row, old)
            new_id = plugin.update(properties, old)
            undo = {"updated": row.id, "previous": old}
            data = {"ref": plugin.reference_id(), **task.attributes(plugin),
                    "data": plugin.stored_data(),
                    "fingerprint": task.fingerprint(row.type, properties),
                    UNDO: {"traversal": self.scope.traversal_id, **undo}}
            done = dict(action=states.UPDATE, status=states.COMPLETE,
                        status_reason="state changed", properties_data=properties,
                        attr_data=data, physical_id=new_id or row.physical_id,
                        engine_id=None)
            return [task._updating(), done], undo
        except exceptions.OwnershipLost:
            raise
        except Exception as error:
            LOG.debug("wave %s: %s goes the ordinary way: %s", self.name, row.name, error)
            return None

    def revert(self, traversal=None, result=None, flow_failures=None, **inputs):
        scope = self.scope
        if not scope.is_owner() or not scope.rollback_enabled():
            return
        done = dict(self._results)
        if isinstance(result, (list, tuple)):
            done.update(zip(self.row_ids, result, strict=False))
        self._snapshots = None
        # Per resource, the way its own task reverts: a rollback is rare,
        # and each undo (a delete, properties given back, a swap) is its own.
        for row in reversed(self.rows()):
            member = done.get(row.id)
            if member is None and row.traversal_id == scope.traversal_id:
                undo = stored_undo(row, scope)  # a resumed run: the row says
                member = {"undo": undo} if undo else None
            self._task(row).revert(traversal=traversal, result=member)


class _Converging(_Member):
    """What a converge wave needs of a resource's ConvergeResource."""

    __slots__ = ()

    _rerun_done = ConvergeResource._rerun_done
    _resumes_in_place = ConvergeResource._resumes_in_place
    _external_properties = ConvergeResource._external_properties
    _decide = ConvergeResource._decide
    _kept = ConvergeResource._kept
    _updating = ConvergeResource._updating
    _new_type = ConvergeResource._new_type
