"""Flow factories: the only callables a job may name.

A job stores the factory's dotted name and JSON arguments; a conductor
rebuilds the flow by calling it. :data:`ALLOWED` is the allow-list: a
conductor must refuse any other name without importing it.

Every flow is built from persisted state -- resource rows with the edges of
the template version each was created under -- never from a graph held in
memory, so a run resumed elsewhere builds the same flow.
"""

from taskflow.patterns import graph_flow

from nestedflow import exceptions, states
from nestedflow.db import plans
from nestedflow.flows import runtime, tasks
from nestedflow.flows.scope import TraversalScope
from nestedflow.flows.tasks import rerun, waves
from nestedflow.stacks.definition import load_definition
from nestedflow.taskflow import collector

#: The dotted name a job stores for :func:`stack_traversal`.
TRAVERSAL = __name__ + ".stack_traversal"

ALLOWED = frozenset({TRAVERSAL})

#: ROLLBACK is the convergence pass of a rollback whose revert could not
#: restore the previous template by itself: an update to it.
ACTIONS = (states.CREATE, states.UPDATE, states.DELETE, states.SUSPEND, states.RESUME,
           states.CHECK, states.ROLLBACK, states.ADOPT, states.RESTORE, states.RERUN,
           states.CONTINUE)
#: Job actions whose traversal follows a stored plan (nestedflow.db.plans):
#: the stack action they run as.
PLANNED = {states.RERUN: states.UPDATE, states.CONTINUE: states.CREATE}


def check_allowed(factory_name):
    if factory_name not in ALLOWED:
        raise exceptions.FlowFactoryNotAllowed(factory_name)


def stack_traversal(stack_id, traversal_id, action, stack=None):
    """The graph flow of one traversal of one stack.

    ``stack`` is the stack's row if the caller has just read it (a run's
    claim returns it); jobs never carry it.
    """
    with collector.paused():
        return _stack_traversal(stack_id, traversal_id, action, stack)


def _stack_traversal(stack_id, traversal_id, action, stack):
    if action not in ACTIONS:
        raise exceptions.NestedflowError(f"unsupported traversal action {action!r}")
    rt = runtime.current()
    if stack is None or stack.id != stack_id:
        stack = rt.db.get_stack(stack_id)
    plan = None
    shown = action
    action = states.RUNS_AS.get(action, action)
    if action in PLANNED:
        plan = plans.get_plan(rt.db, traversal_id)
        action = states.CHECK if plan.checks_only else PLANNED[action]
    definition = None
    if action in (states.CREATE, states.UPDATE, states.ROLLBACK):
        definition = load_definition(rt.db, rt.registry, stack, stack.raw_template_id)
    scope = TraversalScope(rt, stack, traversal_id, action, definition,
                           owner=runtime.current_owner(), shown_action=shown)
    if plan is not None:
        return _planned_flow(scope, plan, rt.db.list_all_resources(stack_id))
    build = {
        states.CREATE: _create_tasks,
        states.UPDATE: _update_tasks,
        states.ROLLBACK: _update_tasks,
        states.DELETE: _delete_tasks,
    }.get(action, _action_tasks)
    resource_tasks, final_requires = build(scope, rt.db.list_all_resources(stack_id))
    flow = graph_flow.Flow(f"{action.lower()} {stack.name}")
    # Adding every node in one call lets TaskFlow derive the edges from the
    # requires/provides symbols in a single pass.
    flow.add(
        tasks.BeginTraversal(scope),
        *resource_tasks,
        tasks.CompleteTraversal(scope, final_requires),
    )
    return flow


def _planned_flow(scope, plan, rows):
    """A re-run's or a continue's flow (nestedflow.flows.tasks.rerun)."""
    scope.plan = plan
    current = {row.name: row for row in rows if row.current}
    if plan.kind == "continue":
        names_by_id = {row.id: row.name for row in current.values()}
        acting = [rerun.ContinueCreate(scope, row, [names_by_id[i] for i in row.requires
                                                    if i in names_by_id])
                  for row in current.values()]
        final = _symbols(names_by_id.values())
        last = tasks.CompleteTraversal(scope, final)
    elif plan.checks_only:
        acting = [rerun.RecheckResource(scope, current[name]) for name in plan.resources
                  if name in current]
        final = [task.provides_symbol for task in acting]
        last = rerun.CompleteRerun(scope, final)
    else:
        dependencies = scope.definition.dependencies()
        selected = set(plan.resources)
        acting = [
            (rerun.RerunResource if name in selected else rerun.KeepResource)(
                scope, current[name], sorted(dependencies.get(name, ())))
            for name in scope.definition.resources
        ]
        updated = _symbols(scope.definition.resources)
        # Only what this re-run may have replaced is cleaned up.
        cleanup = _cleanup_tasks(scope, [], [current[name] for name in sorted(selected)],
                                 after=updated)
        acting += cleanup
        final = updated + [task.provides_symbol for task in cleanup]
        last = rerun.CompleteRerun(scope, final)
    flow = graph_flow.Flow(f"{plan.kind} {scope.stack.name}")
    flow.add(tasks.BeginTraversal(scope), *acting, last)
    return flow


def _symbols(names):
    return [tasks.SYMBOL.format(name) for name in names]


def _create_tasks(scope, rows):
    rows = [row for row in rows if row.current]
    names_by_id = {row.id: row.name for row in rows}
    # By name, as an update's: the waves and the tasks take one map.
    dependencies = {row.name: [names_by_id[i] for i in row.requires if i in names_by_id]
                    for row in rows}
    batched, rows = _waves(scope, rows, {row.id: row.requires for row in rows})
    created = [tasks.CreateWave(scope, wave, dependencies) for wave in batched]
    created += [tasks.CreateResource(scope, row, dependencies[row.name]) for row in rows]
    return created, _symbols(names_by_id.values())


def _waves(scope, rows, before, eligible=None):
    """(database-only waves, the rows left to tasks of their own): see
    nestedflow.flows.tasks.waves."""
    if not scope.runtime.database_only_waves:
        return [], rows
    return waves.cut(rows, before, eligible or scope.in_database_only)


def _database_only(scope, type_name):
    try:
        return not scope.runtime.registry.get(type_name).side_effects
    except exceptions.NestedflowError:
        return False


def _update_tasks(scope, rows):
    definition = scope.definition
    dependencies = definition.dependencies()
    current = {row.name: row for row in rows if row.current}
    names = {name: sorted(dependencies.get(name, ())) for name in definition.resources}
    converging = [current[name] for name in definition.resources]
    batched, converging = _waves(
        scope, converging, {current[name].id: [current[n].id for n in names[name]]
                            for name in definition.resources},
        # Its new type too: a type change is a replacement made by the new type.
        eligible=lambda row: scope.in_database_only(row) and _database_only(
            scope, definition.resources[row.name].type))
    converge = [tasks.ConvergeWave(scope, wave, names) for wave in batched]
    converge += [tasks.ConvergeResource(scope, row, names[row.name]) for row in converging]
    # Cleanup starts once every resource has converged (dependents then use
    # the replacements), and follows each old row's own graph.
    updated = _symbols(definition.resources)
    cleanup_rows = [row for row in rows if not row.current or row.name not in definition.resources]
    maybe_replaced = [current[name] for name in definition.resources]
    # One barrier after every converge task: each cleanup task waits for it
    # alone (n edges, not n x n).
    barrier = tasks.Converged(scope, updated)
    cleanup = _cleanup_tasks(scope, cleanup_rows, maybe_replaced, after=[tasks.CONVERGED])
    final = [*updated, tasks.CONVERGED, *(task.provides_symbol for task in cleanup)]
    return [*converge, barrier, *cleanup], final


def _cleanup_tasks(scope, doomed, maybe_replaced, after=(), batch=False):
    # Old versions already deleted need no task; a current row does even if
    # it has no object yet (an older traversal may be creating it right now,
    # and an update must drop it from the stack), and so does a locked one.
    candidates = [row for row in doomed
                  if row.current or row.engine_id or not tasks.is_gone(row)]
    candidates += list(maybe_replaced)
    present = {row.id for row in candidates}
    edges = _acyclic_edges(candidates, present)
    built = []
    if batch:
        # A stack delete: database-only rows deleted together, wave by wave.
        batched, candidates = _waves(scope, candidates, edges)
        built += [tasks.DeleteWave(scope, wave, edges) for wave in batched]
    for row in candidates:
        cls = tasks.CleanupReplaced if row in maybe_replaced else tasks.DeleteResource
        built.append(cls(scope, row, edges[row.id], after=after))
    return built


def _acyclic_edges(rows, present):
    """Cleanup edges among ``rows`` (``{id: [ids deleted before it]}``).

    Each row brings the graph of the template it was created (or last
    converged) under; versions may disagree about order. Edges between rows
    of one version are kept first, then the others that do not close a
    cycle, so the graph flow can always be built.
    """
    by_id = {row.id: row for row in rows}
    # needed_by is the graph recorded when the row's template settled; a
    # replacement made by a traversal that never settled only has requires.
    wanted = set()
    for row in rows:
        wanted.update((row.id, i) for i in row.needed_by if i in present and i != row.id)
        wanted.update((i, row.id) for i in row.requires if i in present and i != row.id)
    edges = {row.id: set() for row in rows}
    same_version_first = sorted(
        wanted, key=lambda e: (by_id[e[0]].template_id != by_id[e[1]].template_id, e))
    for source, target in same_version_first:
        if not _reaches(edges, target, source):
            edges[source].add(target)
    return {i: sorted(targets) for i, targets in edges.items()}


def _reaches(edges, start, goal):
    seen, todo = set(), [start]
    while todo:
        node = todo.pop()
        if node == goal:
            return True
        if node not in seen:
            seen.add(node)
            todo.extend(edges[node])
    return False


def _delete_tasks(scope, rows):
    deletes = _cleanup_tasks(scope, rows, (), batch=True)
    return deletes, [symbol for task in deletes for symbol in _provided(task)]


def _provided(task):
    return task.provides_symbol if isinstance(task.provides_symbol, tuple) else (
        task.provides_symbol,)


def _action_tasks(scope, rows):
    rows = [row for row in rows if row.current and not tasks.is_gone(row)]
    present = {row.id for row in rows}
    # Suspend dependents before what they depend on; resume and check the
    # other way round.
    reverse = scope.action == states.SUSPEND
    acting = [
        tasks.ResourceAction(
            scope, row, scope.action,
            [i for i in (row.needed_by if reverse else row.requires) if i in present],
        )
        for row in rows
    ]
    return acting, [task.provides_symbol for task in acting]
