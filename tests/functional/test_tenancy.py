"""Request contexts and tenancy through the embedded Engine (the RPC side is
in test_rpc.py): a project sees only its own stacks, an admin sees all,
nested stacks inherit their parent's project, plugins get the context."""

import pytest
from oslo_context import context as oslo_context

from nestedflow import exceptions
from nestedflow.resources import nested, none
from nestedflow.resources.registry import ResourceRegistry

SEEN = []


class Recording(none.NoneResource):
    """Remembers the request context each create was given."""

    def create(self):
        SEEN.append(self.context.request_context)
        return super().create()


TYPES = {"OS::Heat::None": none.NoneResource, "Test::Recording": Recording,
         "OS::Heat::Stack": nested.StackResource}

CHILD = {"heat_template_version": "2018-08-31",
         "resources": {"r": {"type": "Test::Recording"}}}
TEMPLATE = {"heat_template_version": "2018-08-31",
            "resources": {"r": {"type": "Test::Recording"},
                          "child": {"type": "OS::Heat::Stack",
                                    "properties": {"template": CHILD}}}}


def ctx(project, admin=False, user="u1"):
    return oslo_context.RequestContext(project_id=project, user_id=user, is_admin=admin,
                                       roles=["admin"] if admin else ["member"],
                                       auth_token="secret-token", overwrite=False)


@pytest.fixture
def engine(make_engine, db_url):
    return make_engine(db_url, registry=ResourceRegistry.for_testing(TYPES))


def test_projects_see_only_their_own_stacks(engine, stack_name):
    a, b, admin = ctx("project-a"), ctx("project-b"), ctx("admin-project", admin=True)
    del SEEN[:]
    mine = engine.create_stack(stack_name, TEMPLATE, context=a)
    assert engine.wait(mine.id, context=a).stack_status == "CREATE_COMPLETE"
    assert mine.project_id == "project-a"

    # B: as if it did not exist, by id and by name, for every method.
    for call in (lambda s: engine.get_stack(s, context=b),
                 lambda s: engine.list_resources(s, context=b),
                 lambda s: engine.list_events(s, context=b),
                 lambda s: engine.update_stack(s, TEMPLATE, context=b),
                 lambda s: engine.delete_stack(s, context=b),
                 lambda s: engine.check_stack(s, context=b),
                 lambda s: engine.wait(s, context=b)):
        for ref in (mine.id, stack_name):
            with pytest.raises(exceptions.StackNotFound, match=f"Stack {ref} not found"):
                call(ref)
    assert engine.list_stacks(context=b) == []
    assert engine.get_stack(mine.id).stack_status == "CREATE_COMPLETE"

    # Names are unique per project: B may use A's.
    theirs = engine.create_stack(stack_name, TEMPLATE, context=b)
    engine.wait(theirs.id)
    assert [s.id for s in engine.list_stacks(context=a)] == [mine.id]
    assert engine.get_stack(stack_name, context=b).id == theirs.id
    with pytest.raises(exceptions.StackExists):
        engine.create_stack(stack_name, TEMPLATE, context=a)

    # The nested stack is A's too; every plugin got A's context, without its token.
    nested_stacks = [s for s in engine.list_stacks(show_nested=True, context=admin)
                     if s.parent_id == mine.id]
    assert [s.project_id for s in nested_stacks] == ["project-a"]
    mine_seen = SEEN[:2]
    assert [c.project_id for c in mine_seen] == ["project-a", "project-a"]
    assert {c.request_id for c in mine_seen} == {a.request_id}
    assert all(c.auth_token is None for c in mine_seen)

    # Admin sees, updates and deletes both.
    assert {mine.id, theirs.id} <= {s.id for s in engine.list_stacks(context=admin)}
    engine.update_stack(theirs.id, TEMPLATE, context=admin)
    assert engine.wait(theirs.id, context=admin).stack_status == "UPDATE_COMPLETE"
    engine.delete_stack(mine.id, context=admin)
    assert engine.wait(mine.id, context=admin).stack_status == "DELETE_COMPLETE"

    # Every event carries the request id of the action it belongs to; the
    # nested stack's events the request that created their parent.
    events = engine.list_events(theirs.id, nested_depth=1)
    assert {e.request_id for e in events if e.action == "CREATE"} == {b.request_id}
    assert {e.request_id for e in events if e.action == "UPDATE"} == {admin.request_id}

    # A deletes its own; no context is the embedded default: sees everything.
    engine.delete_stack(theirs.id, context=b)
    assert engine.wait(theirs.id).stack_status == "DELETE_COMPLETE"


def test_rerun_and_continue_record_the_request_id(make_engine, db_url, stack_name):
    """Every action records the request id it runs under -- re-runs and
    continues too, which start through the same route as the others
    (StackLifecycle.start_traversal)."""
    from nestedflow.db import requests as db_requests

    engine = make_engine(db_url)
    template = {"heat_template_version": "2018-08-31",
                "resources": {"ok": {"type": "OS::Heat::None"},
                              "bad": {"type": "OS::Heat::TestResource",
                                      "properties": {"fail": True}}}}
    creator, continuer, rerunner = ctx("p"), ctx("p"), ctx("p")
    stack = engine.create_stack(stack_name, template, disable_rollback=True, context=creator)
    assert engine.wait(stack.id, context=creator).stack_status == "CREATE_FAILED"

    def current_request(stack_id):
        traversal = engine.db.get_stack(stack_id).current_traversal
        return db_requests.request_ids(engine.db, stack_id).get(traversal)

    assert current_request(stack.id) == creator.request_id
    engine.continue_stack(stack.id, context=continuer)
    assert engine.wait(stack.id, context=continuer).stack_status == "CREATE_FAILED"
    assert current_request(stack.id) == continuer.request_id

    engine.update_stack(stack.id, {"heat_template_version": "2018-08-31",
                                   "resources": {"ok": {"type": "OS::Heat::None"}}},
                        context=creator)
    assert engine.wait(stack.id, context=creator).stack_status == "UPDATE_COMPLETE"
    engine.rerun(stack.id, ["ok"], context=rerunner)
    assert engine.wait(stack.id, context=rerunner).stack_status == "UPDATE_COMPLETE"
    assert current_request(stack.id) == rerunner.request_id
    # Their events are listed with it, as a create's are.
    assert {continuer.request_id, rerunner.request_id} <= {
        event.request_id for event in engine.list_events(stack.id, context=rerunner)}


def test_snapshot_restore_and_abandon_record_the_request_id(engine, stack_name):
    """A snapshot, its restore and an abandon take the stack over through the
    same route as every other action, and record their request id alike --
    the abandon for the nested stacks it removes too."""
    from nestedflow.db import requests as db_requests

    creator, snapshotter, restorer, abandoner = ctx("p"), ctx("p"), ctx("p"), ctx("p")
    stack = engine.create_stack(stack_name, TEMPLATE, context=creator)
    assert engine.wait(stack.id, context=creator).stack_status == "CREATE_COMPLETE"

    def current_request(stack_id):
        traversal = engine.db.get_stack(stack_id).current_traversal
        return db_requests.request_ids(engine.db, stack_id).get(traversal)

    snapshot = engine.stack_snapshot(stack.id, "s1", context=snapshotter)
    assert snapshot["status"] == "COMPLETE"
    assert engine.get_stack(stack.id, context=snapshotter).stack_status == "SNAPSHOT_COMPLETE"
    assert current_request(stack.id) == snapshotter.request_id

    engine.restore_snapshot(stack.id, snapshot["id"], context=restorer)
    assert engine.wait(stack.id, context=restorer).stack_status == "RESTORE_COMPLETE"
    assert current_request(stack.id) == restorer.request_id
    assert {snapshotter.request_id, restorer.request_id} <= {
        event.request_id for event in engine.list_events(stack.id, context=restorer)}

    child = next(s for s in engine.list_stacks(show_nested=True, context=abandoner)
                 if s.parent_id == stack.id)
    engine.abandon_stack(stack.id, context=abandoner)
    assert engine.db.get_stack(stack.id).action == "DELETE"
    assert current_request(stack.id) == abandoner.request_id
    assert current_request(child.id) == abandoner.request_id
