"""Heat's list filters, sorting, ``marker`` and ``limit`` over nestedflow's
lists (heat/db/api.py ``_paginate_query``, heat/engine/api.py ``translate_filters``)."""

from nestedflow.heat_rpc import faults

#: Heat's sort keys for stacks -> the view attribute they sort by.
STACK_SORT_KEYS = {
    "stack_name": "name", "name": "name",
    "stack_status": "status", "status": "status",
    "creation_time": "created_at", "created_at": "created_at",
    "updated_time": "updated_at", "updated_at": "updated_at",
}

#: Heat's sort keys for events (formatted event keys).
EVENT_SORT_KEYS = {
    "event_time": "event_time", "created_at": "event_time",
    "resource_type": "resource_type", "resource_action": "resource_action",
    "resource_status": "resource_status", "resource_name": "resource_name",
}


def _values(value):
    if isinstance(value, (list, tuple, set)):
        return [str(item) for item in value]
    return [str(value)]


def _status_filter(values):
    """Heat's ``_parse_object_status``: ``CREATE_COMPLETE`` means that action
    and status, ``COMPLETE`` any action in that status."""
    pairs = []
    for value in values:
        action, _, status = value.rpartition("_")
        pairs.append((action or None, status))
    return pairs


def filter_stacks(stacks, filters):
    """Heat's stack filters: id, name, status (``ACTION_STATUS`` or status),
    action, tenant, owner_id; values are a value or a list of them."""
    for key, raw in (filters or {}).items():
        values = _values(raw)
        if key == "id":
            stacks = [s for s in stacks if s.id in values]
        elif key in ("name", "stack_name"):
            stacks = [s for s in stacks if s.name in values]
        elif key in ("status", "stack_status"):
            pairs = _status_filter(values)
            stacks = [s for s in stacks if any(
                s.status == status and action in (None, s.action) for action, status in pairs)]
        elif key in ("action", "stack_action"):
            stacks = [s for s in stacks if s.action in values]
        elif key in ("tenant", "project"):
            stacks = [s for s in stacks if (s.project_id or "") in values]
        elif key in ("owner_id", "parent"):
            stacks = [s for s in stacks if (s.parent_id or "") in values]
        # username: stacks do not keep one; Heat ignores unknown keys too.
    return stacks


def _sort_value(value):
    # None sorts first ascending, as SQL NULLs do in Heat's PostgreSQL.
    return (value is not None, value if value is not None else "")


def page(items, keymap, sort_keys, sort_dir, marker, limit, default_key, getter=getattr,
         id_of=lambda item: str(item.id)):
    """Sorted by ``sort_keys`` (Heat's names, then the id), after the item
    ``marker`` names (none: from the start), at most ``limit`` items."""
    if sort_dir not in ("asc", "desc"):
        raise faults.fault("Invalid", "Data supplied was not valid: Unknown sort "
                           "direction, must be 'desc' or 'asc'", reason="Unknown sort "
                           "direction, must be 'desc' or 'asc'")
    if isinstance(sort_keys, str):
        sort_keys = [sort_keys]
    keys = [keymap[key] for key in (sort_keys or ()) if key in keymap]
    keys = keys or [keymap[default_key]]
    items = sorted(items, key=lambda item: ([_sort_value(getter(item, key)) for key in keys],
                                            id_of(item)),
                   reverse=sort_dir == "desc")
    if marker:
        ids = [str(id_of(item)) for item in items]
        if str(marker) in ids:
            items = items[ids.index(str(marker)) + 1:]
    if limit not in (None, ""):
        try:
            limit = int(limit)
        except (TypeError, ValueError):
            raise faults.fault("Invalid", f"Data supplied was not valid: limit {limit!r} "
                               "is not an integer", reason=f"limit {limit!r} is not an "
                               "integer") from None
        items = items[:max(limit, 0)]
    return items


def match(item, filters, keys):
    """Does the formatted ``item`` match every filter of ``filters`` whose key
    is in ``keys`` (values are a value or a list of them)?"""
    for key, raw in (filters or {}).items():
        if key in keys and str(item.get(keys[key])) not in _values(raw):
            return False
    return True
