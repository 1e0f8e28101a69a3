"""What the dashboard's pages show, read from the state database as JSON-ready dicts.

Every read goes through the engine's tenancy (:mod:`nestedflow.tenancy`):
a viewer whose context is scoped to a project finds only that project's
stacks, and another project's stack is "not found". Nothing here writes.
"""

import datetime

from nestedflow import states, tenancy
from nestedflow.db import feeds
from nestedflow.db.schema import utcnow
from nestedflow.db.snapshots import TagStore
from nestedflow.engine import listing, stack_data
from nestedflow.template.parameters import REDACTED

#: Events one page of the event list shows at most (the newest).
EVENT_PAGE = 2000


def iso_time(value):
    if value is None:
        return None
    return value.replace(tzinfo=datetime.UTC).isoformat().replace("+00:00", "Z")


def event_dict(row):
    return {"id": row.id, "stack_id": row.stack_id, "resource_name": row.resource_name,
            "resource_id": row.resource_id,
            "action": row.action, "status": row.status, "reason": row.status_reason or "",
            "physical_id": row.physical_id, "conductor": row.engine_id,
            "timestamp": iso_time(row.timestamp)}


def check_dict(row):
    return {"id": row.id, "stack_id": row.stack_id, "resource_name": row.resource_name,
            "action": row.action, "phase": row.phase, "check": row.check_name,
            "type": row.type, "status": row.status, "message": row.message,
            "duration": round(row.duration, 3), "attempts": row.attempts,
            "timestamp": iso_time(row.timestamp)}


class _LiveStacks:
    """What :class:`nestedflow.engine.stack_data.StackData` reads stacks through."""

    def __init__(self, db):
        self.db = db

    def live_stack(self, stack_id):
        return self.db.get_stack(stack_id)


class Reader:
    """The dashboard's reads on one :class:`nestedflow.db.api.Database`."""

    def __init__(self, db):
        self.db = db
        self._tags = TagStore(db)
        self._data = stack_data.StackData(db, _LiveStacks(db), self._tags)

    def find(self, name_or_id, context):
        """The stack row, if ``context`` may see it (else StackNotFound)."""
        return tenancy.find(self.db, name_or_id, context)

    def find_root(self, name_or_id, context):
        """The root of the tree of the stack ``name_or_id`` names: a nested
        stack's page shows its whole tree."""
        row = self.find(name_or_id, context)
        if row.root_id and row.root_id != row.id:
            return self.db.get_stack(row.root_id)
        return row

    # -- the stack list -------------------------------------------------------

    def list_stacks(self, show_nested=False, project_id=None, scoped=False, show_deleted=False):
        """What :func:`nestedflow.engine.listing.list_stacks` reads stacks
        through: one statement, no transaction (see :mod:`nestedflow.db.feeds`)."""
        return feeds.live_stacks(self.db, show_nested, project_id, scoped, show_deleted)

    def stacks(self, context, status=None, project=None, name=None):
        """Root stacks, each with its nested stacks under ``children``
        (recursively), oldest first. A root is listed when it or one of its
        nested stacks matches every filter given (``status``: part of
        ``ACTION_STATUS``; ``name``: part of the name; ``project``: the
        project id); ``match`` says which ones did."""
        views = listing.list_stacks(self, self._tags.of, True, context)
        by_id = {}
        for view in views:
            by_id[view.id] = {
                "id": view.id, "name": view.name, "state": view.stack_status,
                "action": view.action, "status": view.status,
                "reason": view.status_reason or "", "project": view.project_id,
                "parent_id": view.parent_id, "tags": list(view.tags),
                "created_at": iso_time(view.created_at), "updated_at": iso_time(view.updated_at),
                "children": []}
        roots = []
        for entry in by_id.values():
            parent = by_id.get(entry["parent_id"])
            (parent["children"] if parent is not None else roots).append(entry)

        def matches(entry):
            return ((not status or status.upper() in entry["state"])
                    and (not name or name.lower() in entry["name"].lower())
                    and (not project or project == (entry["project"] or "")))

        def mark(entry):
            entry["match"] = matches(entry)
            below = [mark(child) for child in entry["children"]]
            return entry["match"] or any(below)

        return [root for root in roots if mark(root)]

    # -- one stack ------------------------------------------------------------

    def stack(self, name_or_id, context):
        """The tree of the stack ``name_or_id`` names, as the stack page draws it."""
        root = self.find_root(name_or_id, context)
        # The marks first: whatever is written after them reaches the page
        # as a live update, even if the rows below already show it.
        last_event, last_check = feeds.last_ids(self.db, root.id)
        rows = feeds.tree_stacks(self.db, root.id)
        latest = {}
        for result in feeds.checks_after(self.db, root.id, 0):
            latest[(result.stack_id, result.resource_name, result.action, result.phase,
                    result.check_name)] = result
        ran_by = feeds.conductors(self.db, root.id)
        stacks, resources = {}, []
        for row in rows:
            stacks[row.id] = {"id": row.id, "name": row.name, "parent_id": row.parent_id,
                              "owner": row.owner_resource, "action": row.action,
                              "status": row.status, "reason": row.status_reason or ""}
            resource_rows = self.db.list_resources(row.id)
            names = {r.id: r.name for r in resource_rows}
            for resource in resource_rows:
                resources.append({
                    "id": resource.id, "stack_id": row.id, "name": resource.name,
                    "type": resource.type,
                    "action": resource.action, "status": resource.status,
                    "reason": resource.status_reason or "",
                    "physical_id": resource.physical_id,
                    "requires": sorted(names[i] for i in resource.requires if i in names),
                    "conductors": {action: engine for (stack_id, name, action), engine
                                   in ran_by.items()
                                   if stack_id == row.id and name == resource.name},
                    "checks": []})
        by_key = {(r["stack_id"], r["name"]): r for r in resources}
        for (stack_id, name, *_), result in sorted(latest.items(), key=lambda i: i[1].id):
            if (stack_id, name) in by_key:
                by_key[(stack_id, name)]["checks"].append(check_dict(result))
        started, changed = feeds.traversal_times(self.db, root)
        return {
            "root": {"id": root.id, "name": root.name, "action": root.action,
                     "status": root.status, "state": f"{root.action}_{root.status}",
                     "reason": root.status_reason or "", "project": root.project_id,
                     "disable_rollback": root.disable_rollback,
                     "created_at": iso_time(root.created_at),
                     "started_at": iso_time(started),
                     "ended_at": None if root.status == states.IN_PROGRESS else iso_time(changed)},
            "now": iso_time(utcnow()),
            "last_event": last_event, "last_check": last_check,
            "stacks": stacks, "resources": resources,
        }

    def events(self, name_or_id, context, resource=None, action=None, status=None,
               conductor=None, text=None, limit=EVENT_PAGE):
        """The newest ``limit`` events of the stack's tree matching every
        filter given (each a part of the field, ``text`` of the reason)."""
        root = self.find_root(name_or_id, context)
        names = {row.id: row.name for row in feeds.tree_stacks(self.db, root.id)}
        wanted = {"resource_name": resource, "action": action, "status": status,
                  "conductor": conductor, "reason": text}
        found = []
        for row in reversed(feeds.events_after(self.db, root.id, 0)):
            event = event_dict(row)
            event["stack_name"] = names.get(row.stack_id, row.stack_id)
            if event["resource_name"] is None:
                event["resource_name"] = event["stack_name"]  # Heat names stack events so
            if all(not want or want.lower() in (event[field] or "").lower()
                   for field, want in wanted.items()):
                found.append(event)
                if len(found) >= limit:
                    break
        return {"stack": {"id": root.id, "name": root.name},
                "events": found[::-1], "limit": limit}

    def data(self, name_or_id, context):
        """Template, environment and outputs of the stack, hidden parameters
        shown as ``******`` wherever their values or defaults would appear."""
        root = self.find(name_or_id, context)
        stored = self.db.get_template(root.raw_template_id)
        hidden = stack_data.hidden_parameters(stored.template, stored.files)
        template = stack_data.copy_stored(stored.template)
        for name, spec in ((template or {}).get("parameters") or {}).items():
            if name in hidden and isinstance(spec, dict) and "default" in spec:
                spec["default"] = REDACTED
        secrets = {str(value) for name, value in (stored.parameters or {}).items()
                   if name in hidden and value not in (None, "")}
        environment = self._data.get_environment(root.id)
        secrets.update(str(value) for name, value in
                       ((stored.environment or {}).get("parameter_defaults") or {}).items()
                       if name in hidden and value not in (None, ""))
        return {"stack": {"id": root.id, "name": root.name},
                "template": template, "environment": environment,
                "outputs": _masked(dict(root.outputs or {}), secrets),
                "output_errors": dict(root.output_errors or {}),
                "files": sorted((stored.files or {}).keys())}


def _masked(value, secrets):
    """``value`` with every hidden parameter's value in it replaced."""
    if isinstance(value, dict):
        return {key: _masked(item, secrets) for key, item in value.items()}
    if isinstance(value, list):
        return [_masked(item, secrets) for item in value]
    if isinstance(value, str):
        for secret in secrets:
            value = value.replace(secret, REDACTED)
        return value
    if value is not None and str(value) in secrets:
        return REDACTED
    return value
