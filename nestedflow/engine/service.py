"""The public Engine: validate, store, then dispatch each traversal."""

import functools
import os
import socket
import threading
import time

from nestedflow import exceptions, states, tenancy
from nestedflow.conf import CONF
from nestedflow.db import models
from nestedflow.db import requests as db_requests
from nestedflow.db.api import Database
from nestedflow.db.owners import OwnerToken
from nestedflow.db.snapshots import TagStore
from nestedflow.engine import hosting, listing, recovery, services, views
from nestedflow.engine.parts import Built
from nestedflow.engine.software_config import SoftwareConfigMethods
from nestedflow.engine.tags import check_tags
from nestedflow.taskflow import collector


class Engine(SoftwareConfigMethods, services.ServiceMethods):
    """Deploys stacks; the contract is doc/source/user-guide.rst, "Python API".

    With no ``jobboard_url`` every traversal runs in this process, in the
    same flows and tasks a conductor would run. The software-config store's
    methods (Heat's ``create_software_config``...) and ``list_services``
    come from the two mixins (:mod:`~nestedflow.engine.software_config`, :mod:`.services`).
    """

    def __init__(self, db_url=None, jobboard_url=None, transport_url=None, *,
                 max_workers=None, registry=None, engine_id=None, conf=None):
        # A host's own configuration: see nestedflow.engine.hosting.
        hosting.check_conf(conf, CONF)
        hosting.check_process()
        self.jobboard_url = jobboard_url or CONF.engine.jobboard_url
        #: Resolved when the engine is built (messaging.transport.url).
        self.transport_url = transport_url
        self.db = Database(db_url or CONF.database.connection)
        self.db.sync()
        self._parts = {"registry": registry, "max_workers": max_workers,
                       "engine_id": engine_id}
        self._build_lock = threading.Lock()
        #: Stack tags: read with every stack shown or listed.
        self._tags = TagStore(self.db)
        self._settled = threading.Condition()
        #: Bumped on every wake-up, so a waiter that read the stack before a
        #: settle it was not yet waiting for does not sleep through it.
        self._settle_count = 0
        #: Stack id -> a _WaitSlot per wait() on it, given the row each
        #: in-process write of the stack's state returned.
        self._waiting = {}
        # A stack settles when its state is written, before its traversal's
        # thread has flushed the journal and returned: waiters wake at once.
        # Last: a waiter it wakes finds the settle notified already.
        self.db.on_stack_change(self._notify_if_settled, last=True)
        self._closed = False

    # What runs traversals (TaskFlow, oslo.messaging, the plugins) is made on
    # first use: reading stacks needs only the database, so a command line
    # answering ``stack list`` does not import or start any of it.
    registry = Built()
    store = Built()
    runtime = Built()
    stacks = Built()
    events = Built()
    notifications = Built()
    _backend = Built()
    _dispatcher = Built()
    _previews = Built()
    _data = Built()
    _snapshots = Built()
    _reruns = Built()

    def _build(self):
        with self._build_lock:
            if self._parts is None:
                return
            from nestedflow.db.physical import PhysicalStore
            from nestedflow.db.snapshots import SnapshotStore
            from nestedflow.dispatch.impl_local import JOB_SLOTS
            from nestedflow.dispatch.slots import SlotGate
            from nestedflow.engine.previews import Previews
            from nestedflow.engine.reruns import Reruns
            from nestedflow.engine.snapshots import Snapshots
            from nestedflow.engine.stack_data import StackData
            from nestedflow.messaging import transport
            from nestedflow.messaging.events import StackEvents
            from nestedflow.messaging.notifications import Notifications
            from nestedflow.resources.registry import ResourceRegistry
            from nestedflow.stacks.lifecycle import StackLifecycle
            from nestedflow.taskflow.sql_backend import TaskflowBackend

            parts, self._parts = self._parts, None
            attrs = self.__dict__
            attrs["registry"] = parts["registry"] or ResourceRegistry()
            attrs["store"] = PhysicalStore(self.db)
            attrs["_backend"] = TaskflowBackend.for_database(self.db)
            attrs["stacks"] = StackLifecycle(self.db, self.registry, self._dispatch)
            self.transport_url = transport.url(CONF, self.transport_url)
            attrs["events"] = StackEvents(self.transport_url)
            attrs["runtime"] = self._make_runtime(
                db=self.db,
                store=self.store,
                registry=self.registry,
                engine_id=(parts["engine_id"]
                           or f"engine-{socket.gethostname()}-{os.getpid()}"),
                max_workers=parts["max_workers"] or CONF.engine.max_workers,
                max_nested_waits=CONF.engine.max_nested_waits,
                database_only_waves=CONF.engine.database_only_waves, stacks=self.stacks,
                events=self.events,
                # Where this process runs the jobs (a conductor brings its
                # own slots: Runtime.with_parts).
                slots=(SlotGate(JOB_SLOTS) if self._dispatcher_class().runs_in_process
                       else None),
            )
            attrs["_previews"] = Previews(self.db, self.registry, self.stacks, self.store)
            attrs["_data"] = StackData(self.db, self.stacks, self._tags)
            attrs["_reruns"] = Reruns(self.db, self.registry, self.stacks)
            attrs["_snapshots"] = Snapshots(self.db, self.registry, self.stacks, self.store,
                                            self._data, SnapshotStore(self.db))
            self.db.on_stack_change(self.events.changed)
            attrs["notifications"] = Notifications(CONF, self.db, self.transport_url,
                                                   CONF.rpc.host)
            self.db.on_stack_change(self.notifications.stack_changed)
            self.db.on_resource_events(self.notifications.resource_events)
            self.stacks.on_created = self.notifications.stack_changed
            if "_dispatcher" not in attrs:  # a test may have put its own there
                attrs["_dispatcher"] = self._make_dispatcher()
                self._dispatcher.add_done_callback(self._notify_settled)
            if CONF.engine.freeze_startup_objects:
                collector.freeze_long_lived()
        heartbeat = self.__dict__.get("_heartbeat")
        if heartbeat is not None and heartbeat.start(recover=self.recover_orphans):
            self.recover_orphans()

    def _make_runtime(self, **fields):
        """The runtime of this engine's traversals, built once."""
        from nestedflow.flows.runtime import Runtime

        return Runtime(**fields)

    def _dispatcher_class(self):
        from nestedflow.dispatch import base

        try:
            return base.dispatcher_class(self.jobboard_url)
        except ImportError as error:
            # kazoo is only needed by distributed deployments.
            raise exceptions.NestedflowError(
                f"jobboard_url needs the ZooKeeper client ({error}): "
                "pip install 'nestedflow[zookeeper]'") from error

    def _make_dispatcher(self):
        from nestedflow.engine import recovery

        cls = self._dispatcher_class()
        engine_id = recovery.new_engine_id(self.runtime.engine_id)
        heartbeat = recovery.Heartbeat(self.db, engine_id)
        self.__dict__["_heartbeat"] = heartbeat
        if not cls.runs_in_process:
            # The outbox: a traversal is stored marked unposted by this
            # engine, in the transaction that stores it; if the process
            # dies before its job is posted, a live engine posts it.
            self.db.queued_owner = OwnerToken.unposted(engine_id)
            return cls.from_url(self.jobboard_url, runtime=self.runtime, backend=self._backend)
        # Runs in this process's threads die with it: beat, so that another
        # engine can resume what a killed one left IN_PROGRESS.
        self.db.queued_owner = OwnerToken.queued(engine_id)
        return cls(self.runtime.with_parts(owner_alive=heartbeat.owner_alive), self._backend,
                   engine_id=engine_id)

    def recover_orphans(self, context=None):
        """Resume here the stacks dead embedded engines left IN_PROGRESS
        (see :mod:`nestedflow.engine.recovery`); with a jobboard, post the
        jobs of the traversals dead engines stored and may not have posted
        (conductors resume the posted ones). Returns the stacks' ids. Done
        when the engine starts running stacks and at every heartbeat."""
        if not CONF.engine.recover_orphans:
            return []
        from nestedflow.engine import recovery

        repost = getattr(self._dispatcher, "repost", None)
        if repost is not None:
            return repost(OwnerToken.unposted(self._heartbeat.engine_id))
        resume = getattr(self._dispatcher, "resume", None)
        if resume is None:
            return []
        return recovery.recover_orphans(self.db, resume)

    def _notify_settled(self):
        with self._settled:
            self._settle_count += 1
            self._settled.notify_all()

    def _notify_if_settled(self, stack_id, action, status, stack=None):
        with self._settled:
            for slot in self._waiting.get(stack_id, ()):
                # A write from before the wait began (its listeners ran
                # late) is not news: the waiter reads the stack instead.
                if stack is None or stack.updated_at is None or (
                        stack.updated_at >= slot.since):
                    slot.row = stack
            if status != states.IN_PROGRESS:
                self._settle_count += 1
                self._settled.notify_all()

    @property
    def runs_in_process(self):
        return self._dispatcher.runs_in_process

    # -- lifecycle ----------------------------------------------------------

    def create_stack(self, name, template, parameters=None, files=None, environment=None,
                     disable_rollback=False, timeout=None, adopt_stack_data=None, tags=None,
                     context=None):
        """Store the stack and start its create.

        ``adopt_stack_data`` (Heat's abandon data, a mapping or its JSON/YAML
        text) adopts: each resource it names takes over the physical object
        it names instead of creating one; ``template``, ``files`` and
        ``environment`` default to the data's (``template=None``). ``tags``:
        a list of strings (Heat's stack tags; ``list_stacks`` filters on them).
        """
        tags = check_tags(tags)
        # Loading and validating the template allocates what lives as long
        # as its definition: as for a flow's build (taskflow.collector), a full
        # collection then walks the heap for nothing -- 0.08 s of a
        # 1,000-resource update.
        with collector.paused():
            row = self.stacks.create(name, template, parameters, files, environment,
                                     disable_rollback, timeout, context=context,
                                     adopt_stack_data=adopt_stack_data)
        if tags:
            self._tags.set(row.id, tags)
        # The row as stored: reading it back would cost a round trip.
        return views.Stack.from_row(row, tags)

    def update_stack(self, stack_id, template, parameters=None, files=None, environment=None,
                     existing=False, disable_rollback=None, timeout=None, tags=None,
                     clear_parameters=None, context=None):
        """Converge the stack to a new template; supersedes a traversal in progress.

        ``existing=True`` is Heat's PATCH: the stored template (``template``
        may be None), parameters, files, environment and tags are kept where
        not given. Without it, as Heat's PUT, tags not given are cleared.
        ``timeout`` (minutes) replaces the stack's timeout from this update on.
        ``clear_parameters`` (with ``existing``): stored parameters set back
        to their defaults, as Heat's PATCH ``clear_parameters``.
        """
        stack_id = self._visible(stack_id, context)
        tags = check_tags(tags)
        if clear_parameters and not existing:
            raise exceptions.StackValidationFailed(
                "clear_parameters applies to an update of the existing stack (existing=True)",
                path="clear_parameters")
        with collector.paused():  # as create_stack's
            stack_id = self.stacks.update(stack_id, template, parameters, files, environment,
                                          existing, disable_rollback, context=context,
                                          timeout=timeout,
                                          clear_parameters=clear_parameters or ())
        if tags is not None or not existing:
            self._tags.set(stack_id, tags or [])
        return self.get_stack(stack_id)

    def delete_stack(self, stack_id, context=None):
        stack_id = self._visible(stack_id, context)
        return self.get_stack(self.stacks.delete(stack_id, context=context))

    def suspend_stack(self, stack_id, context=None):
        return self._act(stack_id, states.SUSPEND, context)

    def resume_stack(self, stack_id, context=None):
        return self._act(stack_id, states.RESUME, context)

    def check_stack(self, stack_id, context=None):
        return self._act(stack_id, states.CHECK, context)

    def _act(self, stack_id, action, context):
        stack_id = self._visible(stack_id, context)
        return self.get_stack(self.stacks.action(stack_id, action, context=context))

    def _visible(self, stack_id, context):
        """``stack_id`` if ``context`` may act on it (its id, when given a
        name), else StackNotFound; no read without a project-scoped context."""
        if not tenancy.is_scoped(context):
            return stack_id
        return tenancy.find(self.db, stack_id, context).id

    def cancel_update(self, stack_id, rollback=True, context=None):
        """Cancel a create or update in progress.

        With ``rollback`` the traversal reverts (waits in flight are cut
        short); without, no new action starts and the stack ends FAILED once
        the actions in flight finish.
        """
        stack_id = self._visible(stack_id, context)
        traversal_id = self.stacks.cancel(stack_id, rollback)
        if rollback:
            self.runtime.stop_event(traversal_id).set()
        return self.get_stack(stack_id)

    def subscribe(self, callback):
        """Call ``callback(event_type, payload, context)`` for each of this
        process's notifications (Heat's format, see
        :mod:`nestedflow.messaging.notifications`), with or without a broker;
        returns a function that unsubscribes it."""
        return self.notifications.subscribe(callback)

    def stop_stack(self, stack_id, context=None):
        """Stop a create or update at a safe point, keeping its state: no new
        resource action starts, those in flight finish, nothing is rolled
        back; the stack ends FAILED. Same as ``cancel_update(rollback=False)``;
        :meth:`continue_stack` picks it up later."""
        return self.cancel_update(stack_id, rollback=False, context=context)

    def continue_stack(self, stack_id, context=None):
        """Continue a stopped (or failed) create or update from where it
        stopped: what was done is kept, the rest is done."""
        return self.get_stack(self._reruns.continue_stack(self._visible(stack_id, context),
                                                          context))

    def rerun(self, stack_id, resources, with_dependents=False, with_dependencies=False,
              checks_only=False, context=None):
        """Re-run the named resources of a settled stack (re-check and
        converge them; re-create what cannot be), and if asked what depends
        on them or what they depend on; nothing else is touched.
        ``checks_only`` runs only their checks."""
        return self.get_stack(self._reruns.rerun(self._visible(stack_id, context), resources,
                                                 with_dependents, with_dependencies,
                                                 checks_only, context))

    # -- stored data, abandon (nestedflow.engine.stack_data) -----------------

    def get_template(self, stack_id, context=None):
        """The stack's current template as given."""
        return self._data.get_template(self._visible(stack_id, context))

    def get_environment(self, stack_id, context=None):
        """The stack's environment (parameters, parameter_defaults, resource_registry)."""
        return self._data.get_environment(self._visible(stack_id, context))

    def get_files(self, stack_id, context=None):
        """The stack's files map (name -> contents)."""
        return self._data.get_files(self._visible(stack_id, context))

    def abandon_stack(self, stack_id, abandon=True, context=None):
        """Heat's abandon data of the stack; with ``abandon`` (Heat's default)
        the stack then leaves nestedflow and its physical objects stay;
        ``abandon=False`` only exports them (``stack export``)."""
        stack_id = self._visible(stack_id, context)
        if abandon:
            return self._data.abandon(stack_id, context)
        return self._data.prepare_abandon(stack_id)

    # -- snapshots (nestedflow.engine.snapshots) ------------------------------

    def stack_snapshot(self, stack_id, name=None, context=None):
        """Take a snapshot of the settled stack; returns it (Heat's format:
        ``id``, ``name``, ``stack_id``, ``data``, ``status``, ...)."""
        return self._snapshots.stack_snapshot(self._visible(stack_id, context), name, context)

    def list_snapshots(self, stack_id, context=None):
        return self._snapshots.list_snapshots(self._visible(stack_id, context))

    def show_snapshot(self, stack_id, snapshot_id, context=None):
        return self._snapshots.show_snapshot(self._visible(stack_id, context), snapshot_id)

    def delete_snapshot(self, stack_id, snapshot_id, context=None):
        self._snapshots.delete_snapshot(self._visible(stack_id, context), snapshot_id)

    def restore_snapshot(self, stack_id, snapshot_id, context=None):
        """Start converging the stack back to the snapshot (an update)."""
        stack_id = self._visible(stack_id, context)
        return self.get_stack(self._snapshots.restore_snapshot(stack_id, snapshot_id, context))

    # -- previews (nestedflow.engine.previews) --------------------------------

    def preview_stack(self, name, template, parameters=None, files=None, environment=None,
                      timeout=None, disable_rollback=False, context=None):
        """What creating the stack would make (Heat's preview format); stores nothing."""
        return self._previews.preview_stack(name, template, parameters, files, environment,
                                            timeout, disable_rollback)

    def preview_update_stack(self, stack_id, template, parameters=None, files=None,
                             environment=None, existing=False, show_nested=False,
                             context=None):
        """What updating the stack would do: ``added``, ``updated``, ``replaced``,
        ``deleted`` and ``unchanged`` resources (Heat's format); stores nothing."""
        stack_id = self._visible(stack_id, context)
        return self._previews.preview_update_stack(stack_id, template, parameters, files,
                                                   environment, existing, show_nested)

    def _dispatch(self, stack_id, traversal_id, action):
        if self._closed:
            raise exceptions.NestedflowError("engine is closed")
        self._dispatcher.dispatch(stack_id, traversal_id, action)

    def validate_template(self, template, files=None, environment=None, parameters=None,
                          show_nested=False, ignorable_errors=None, context=None):
        """Heat's template-validate answer (Description, Parameters, ParameterGroups,
        NestedParameters with ``show_nested``, Environment); raises
        StackValidationFailed naming where the problem is. ``ignorable_errors``:
        Heat's error codes to ignore. Nothing is stored."""
        from nestedflow.engine import validation

        return validation.validate_template(
            self.registry, template, files=files, environment=environment, params=parameters,
            show_nested=show_nested, ignorable_errors=ignorable_errors)

    # -- reading ------------------------------------------------------------

    def get_stack(self, stack_id, context=None):
        row = tenancy.find(self.db, stack_id, context)
        return views.Stack.from_row(row, self._tags.of([row.id])[row.id])

    def list_stacks(self, show_nested=False, tags=None, tags_any=None, not_tags=None,
                    not_tags_any=None, show_deleted=False, show_hidden=False, context=None):
        """Live stacks, oldest first; Heat's tag filters: ``tags`` (has all),
        ``tags_any`` (has one), ``not_tags`` (lacks one), ``not_tags_any``
        (has none) -- lists or comma-separated strings. ``show_deleted``
        adds deleted stacks; stacks tagged with one of ``[engine]
        hidden_stack_tags`` are listed only with ``show_hidden`` (Heat's)."""
        return listing.list_stacks(self.db, self._tags.of, show_nested, context,
                                   show_deleted, show_hidden,
                                   tuple(CONF.engine.hidden_stack_tags), tags=tags,
                                   tags_any=tags_any, not_tags=not_tags,
                                   not_tags_any=not_tags_any)

    def mark_resource_unhealthy(self, stack_id, resource_name, mark_unhealthy=True,
                                resource_status_reason="", context=None):
        """Mark the resource CHECK_FAILED (the next update replaces it), or
        healthy again with ``mark_unhealthy=False`` (Heat's)."""
        from nestedflow.engine import health

        health.mark_resource_unhealthy(self.db, self.stacks, self._visible(stack_id, context),
                                       resource_name, mark_unhealthy, resource_status_reason)

    def resource_attributes(self, stack_id, resource_name, names=None, context=None):
        """The resource's attribute values now: ``{name: value}`` for every
        attribute of its type (or those ``names``); None where one cannot be read."""
        return self._previews.resource_attributes(self._visible(stack_id, context),
                                                  resource_name, names)

    def signal_resource(self, stack_id, resource_name, details=None, context=None):
        """Signal a resource (Heat's ``resource_signal``): ``details`` go to
        its type's ``handle_signal`` (a wait condition handle, a scaling
        policy); ``{"unset_hook": "pre-create"}`` clears a breakpoint its
        action is paused at. See :mod:`nestedflow.engine.signals`."""
        from nestedflow.engine import signals

        signals.signal_resource(self, self._visible(stack_id, context), resource_name,
                                details, context)

    def count_stacks(self, show_nested=False, context=None):
        """How many stacks list_stacks() would return (RPC API 1.1)."""
        return len(self.list_stacks(show_nested, context=context))

    def list_resources(self, stack_id, nested_depth=0, context=None):
        """The stack's current resources; ``nested_depth`` levels of nested
        stacks' resources follow the resource that owns each of them."""
        result = []
        for stack in self._tree(stack_id, nested_depth, context):
            rows = self.db.list_resources(stack.id)
            result.extend(views.Resource.from_row(row, stack.name) for row in rows)
        return result

    def list_events(self, stack_id, nested_depth=0, context=None):
        """The stack's events (oldest first), with ``nested_depth`` levels of
        nested stacks' events merged in time order."""
        events = []
        for stack in self._tree(stack_id, nested_depth, context):
            requests = db_requests.request_ids(self.db, stack.id)
            events.extend(views.Event.from_row(row, stack.name,
                                               requests.get(row.traversal_id))
                          for row in self.db.list_events(stack.id))
        events.sort(key=lambda e: (e.timestamp, e.id))
        return events

    def list_checks(self, stack_id, nested_depth=0, latest=False, context=None):
        """Results of the resources' pre- and post-checks, oldest first
        (:class:`nestedflow.engine.checks.CheckResult`)."""
        from nestedflow.engine import checks

        return checks.list_checks(self.db, self._tree(stack_id, nested_depth, context), latest)

    def _tree(self, stack_id, nested_depth, context=None):
        """The stack and its nested stacks down to ``nested_depth``, breadth first."""
        pending = [(tenancy.find(self.db, stack_id, context), 0)]
        while pending:
            stack, depth = pending.pop(0)
            yield stack
            if depth < nested_depth:
                pending.extend((child, depth + 1) for child in self.db.list_children(stack.id)
                               if child.deleted_at is None or stack.deleted_at is not None)

    def wait(self, stack_id, timeout=None, context=None):
        """Block until the stack is no longer IN_PROGRESS; returns it."""
        stack_id = self._visible(stack_id, context)
        slot = _WaitSlot(models.utcnow())
        with self._settled:
            self._waiting.setdefault(stack_id, []).append(slot)
        try:
            return self._wait(stack_id, timeout, slot)
        finally:
            with self._settled:
                slots = self._waiting[stack_id]
                slots.remove(slot)
                if not slots:
                    del self._waiting[stack_id]

    def _wait(self, stack_id, timeout, slot):
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            with self._settled:
                seen = self._settle_count
                written, slot.row = slot.row, None
            # The stack as this process's last write of its state returned
            # it, if any since the last look: a settled stack's waiter
            # wakes without reading it back.
            stack = views.Stack.from_row(written if written is not None
                                         else tenancy.find(self.db, stack_id, None))
            if stack.status != states.IN_PROGRESS:
                return stack
            remaining = None if deadline is None else deadline - time.monotonic()
            if remaining is not None and remaining <= 0:
                raise exceptions.WaitTimeout(
                    f"stack {stack.name} still {stack.action}_IN_PROGRESS after {timeout}s"
                )
            pause = 0.5 if remaining is None else min(0.5, remaining)
            if not self.runs_in_process:
                # Conductors announce settled stacks over oslo.messaging; the
                # short timeout covers a lost notification and fake://.
                self.events.wait(stack.id, functools.partial(self._settled_in_db, stack.id),
                                 timeout=pause)
                continue
            with self._settled:
                # Woken when an in-process traversal settles or ends; the
                # timeout also covers traversals finished by other processes.
                if self._settle_count == seen:
                    self._settled.wait(pause)

    def unclaimed(self, stack_id, context=None):
        """Why nothing runs the stack's traversal, or None (recovery.unclaimed)."""
        return recovery.unclaimed(self.db.get_stack(self._visible(stack_id, context)),
                                  self._dispatcher)

    def _settled_in_db(self, stack_id):
        return self.db.get_stack(stack_id).status != states.IN_PROGRESS

    def close(self):
        """Let in-process traversals finish, then release connections."""
        if self._closed:
            return
        self._closed = True
        with self._build_lock:
            built, self._parts = self._parts is None, None
        if built:
            self._dispatcher.close()
            heartbeat = self.__dict__.get("_heartbeat")
            if heartbeat is not None:
                heartbeat.stop()
            self.runtime.pools.close()
            self.events.close()
            self.notifications.close()
            self._backend.close()
        self.db.dispose()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class _WaitSlot:
    """Where one wait() finds the stack as its last in-process write left it
    (None: not written since, or by a write that did not return it)."""

    __slots__ = ("row", "since")

    def __init__(self, since):
        self.row = None
        #: When the wait began: rows written earlier are not delivered.
        self.since = since
