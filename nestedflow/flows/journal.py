"""TaskFlow's progress journal (flow and atom details), fenced and resumable.

Each run of a traversal -- each claim of its job -- journals into a flow
detail of its own in the stack's logbook. A run that resumes a traversal
copies the latest earlier run's detail: TaskFlow then skips what finished,
re-runs what was in flight (every task is idempotent) and, if that run was
rolling back, goes on rolling back.

TaskFlow has no fencing (doc/source/conductors.rst, "Crashes, pauses and
fencing"): a conductor paused past its
ZooKeeper session keeps running its engine and writing its journal. So
the journal (:mod:`nestedflow.taskflow.journal_backend`) checks that the run
still owns the traversal (``stacks.traversal_owner``, :func:`owner_fence`)
as the first statement of each of its write transactions, locking the
stack row until the commit (:mod:`nestedflow.db.fencing`): a fenced run's
writes never land, not even those of a transaction it opened before a
pause, and its engine fails at its next write. A run paused mid-write
holds that lock only until the server ends its idle transaction, sooner
than another conductor can claim the job.

The journal outlives its traversal and keeps no value a resource produced
(:func:`redacted`): hidden parameters reach attributes and properties,
which Heat keeps on the resource (and in its sync points only until the
traversal ends). A resumed run reads them back from the resource rows
(:func:`restore_results`).
"""

import contextlib
import uuid

from taskflow import flow as tf_flow
from taskflow import retry as tf_retry
from taskflow import states
from taskflow.persistence import models as tf_models
from taskflow.utils import misc

from nestedflow import exceptions
from nestedflow.db import fencing
from nestedflow.flows.tasks.base import ATTR_ERRORS, UNDO

#: What a resource task's result holds that the journal reads back from the row.
_FROM_ROW = ("ref", "attrs", ATTR_ERRORS)


def owner_fence(db, stack_id, traversal_id, owner):
    """A fence that passes while ``owner`` runs the stack's current traversal.

    Given the connection of the journal's write transaction, it is that
    transaction's first statement and holds until its commit
    (:func:`nestedflow.db.fencing.check_owner`).
    """

    def fence(conn=None):
        if conn is not None:
            current, current_owner = (fencing.locked_ownership(conn, stack_id)
                                      or (None, None))
        else:
            current, current_owner, _, _ = db.ownership(stack_id)
        if current != traversal_id or current_owner != owner:
            raise exceptions.Fenced(f"run {owner} of traversal {traversal_id} of stack "
                                    f"{stack_id} was fenced off (now {current}/{current_owner})")

    return fence


def latest_detail(backend, stack_id, traversal_id):
    """The flow detail of the latest run (or the posting) of the traversal."""
    with contextlib.closing(backend.get_connection()) as conn:
        runs = [fd for fd in conn.get_flows_for_book(stack_id, lazy=True)
                if (fd.meta or {}).get("traversal_id") == traversal_id]
        if not runs:
            return None
        latest = max(runs, key=lambda fd: (fd.meta or {}).get("run", 0))
        return conn.get_flow_details(latest.uuid)


def copy_forward(backend, stack_id, previous, name, meta, flow=None, behind=False):
    """Save a new flow detail holding ``previous``'s progress under ``meta``.

    With ``flow``, the detail also holds a PENDING atom detail for every
    atom of the flow that ``previous`` has none of -- what TaskFlow's
    engine would add before it runs, in a transaction of its own.
    ``behind``: written with the journal's next flush instead of now
    (:meth:`JournalBackend.add_flow_detail`).
    """
    detail = tf_models.FlowDetail(name, uuid=str(uuid.uuid4()))
    detail.meta = meta
    if previous is not None:
        detail.state = previous.state
        for atom in previous:
            data = atom.to_dict()
            data["uuid"] = str(uuid.uuid4())
            detail.add(type(atom).from_dict(data))
    if flow is not None:
        known = {atom.name for atom in detail}
        for atom in _atoms(flow):
            if atom.name not in known:
                detail.add(_pending_detail(atom))
    # One transaction: the copy is whole or absent.
    return backend.add_flow_detail(stack_id, book_name(stack_id), detail, behind=behind)


def book_name(stack_id):
    """The name of the stack's logbook (its uuid is the stack's id)."""
    return f"stack-{stack_id}"


def _atoms(flow):
    """Every task and retry of ``flow`` and of the flows nested in it."""
    if flow.retry is not None:
        yield flow.retry
    for node, _ in flow.iter_nodes():
        if isinstance(node, tf_flow.Flow):
            yield from _atoms(node)
        else:
            yield node


def _pending_detail(atom):
    # As TaskFlow's Storage.ensure_atoms makes them, so that it finds them.
    cls = tf_models.RetryDetail if isinstance(atom, tf_retry.Retry) else tf_models.TaskDetail
    detail = cls(atom.name, str(uuid.uuid4()))
    detail.state = states.PENDING
    version = misc.get_version_string(atom)
    if version is not None:
        detail.version = version
    return detail


def redacted(results):
    """A task's ``results`` as the journal keeps them.

    A resource task's result (:func:`nestedflow.flows.tasks.base.output_of`)
    carries the resource's reference and attribute values, and an in-place
    update's undo the properties it replaced: any of them may come from a
    hidden parameter, and the journal outlives the traversal. The row they
    were read from keeps them, so the journal keeps which row:
    :func:`restore_results` reads them back from it when a run resumes.
    Results journaled before this kept everything and are left so. A
    database-only wave's result is one such result per resource.
    """
    if isinstance(results, (list, tuple)):
        return [redacted(item) for item in results]
    if not isinstance(results, dict) or "row" not in results or "attrs" not in results:
        return results
    kept = {key: value for key, value in results.items() if key not in _FROM_ROW}
    undo = kept.get("undo")
    if isinstance(undo, dict) and "previous" in undo:
        kept["undo"] = {key: value for key, value in undo.items() if key != "previous"}
    return kept


def restore_results(detail, read_rows, traversal_id):
    """Put back into ``detail``'s atoms, as read from the journal, what
    :func:`redacted` left out; ``read_rows()``: the stack's resource rows."""
    redacted_atoms = [atom for atom in detail if _is_redacted(atom.results) or (
        isinstance(atom.results, list) and any(_is_redacted(r) for r in atom.results))]
    if not redacted_atoms:
        return
    rows = {row.id: row for row in read_rows()}
    for atom in redacted_atoms:
        if isinstance(atom.results, list):  # a database-only wave's
            atom.results = [_restored(r, rows, traversal_id) if _is_redacted(r) else r
                            for r in atom.results]
        else:
            atom.results = _restored(atom.results, rows, traversal_id)


def _is_redacted(results):
    return isinstance(results, dict) and "row" in results and "attrs" not in results


def _restored(results, rows, traversal_id):
    results = dict(results)
    row = rows.get(results["row"])
    data = (row.attr_data or {}) if row is not None else {}
    results.update(ref=data.get("ref"), attrs=data.get("attrs") or {})
    if data.get(ATTR_ERRORS):
        results[ATTR_ERRORS] = data[ATTR_ERRORS]
    undo = results.get("undo")
    if isinstance(undo, dict) and undo.get("updated") is not None:
        results["undo"] = dict(undo, previous=_previous(rows.get(undo["updated"]),
                                                       traversal_id))
    return results


def _previous(row, traversal_id):
    """The properties the traversal's in-place update of ``row`` replaced,
    as the update recorded them on the row (its ``undo``)."""
    if row is None:
        return {}
    undo = (row.attr_data or {}).get(UNDO) or {}
    if undo.get("traversal") == traversal_id and "previous" in undo:
        return undo["previous"]
    # Only a later traversal rewrites it, and that one fenced this run off.
    return row.properties_data or {}
