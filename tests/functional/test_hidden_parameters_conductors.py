"""Hidden parameters on conductors (issue 19): grep everything a stack's
life leaves behind for the values, on PostgreSQL, ZooKeeper and RabbitMQ.

A stack whose ``hidden: true`` parameter flows into resource properties,
an attribute, outputs and a nested stack (a job of its own) is created,
updated to a new value, updated to a third value that fails and rolls
back, and deleted, by two conductors logging at DEBUG (TaskFlow's loggers
included). Then each value is looked for in every column of every row of
every table -- TaskFlow's journal (logbooks, flowdetails, atomdetails)
included --, in every value every znode under the jobboard's root held
while the stack lived (jobs exist only until their traversal ends, so the
board is read over and over), in the conductors' log files and output, in
this process's log, and in every Heat notification either side sent.

Heat keeps hidden values, in plain text unless
``encrypt_parameters_and_properties`` is set, in:

* ``raw_template.environment``'s parameters
  (heat/objects/raw_template.py, ``RawTemplate.encrypt_hidden_parameters``):
  nestedflow's ``raw_templates.parameters``, a nested stack's included;
* resolved properties, ``resource.rsrc_prop_data_id`` ->
  ``resource_properties_data.data``
  (heat/objects/resource.py, ``encrypt_properties_data``): ``resources.properties_data``,
  and the properties an update's rollback puts back, which nestedflow keeps
  in ``resources.attr_data`` (Heat keeps the previous version's data row);
* resolved attributes, ``resource.attr_data_id`` ->
  ``resource_properties_data.data`` (heat/engine/resource.py,
  ``Resource.store_attributes``), cached for the outputs and dependents
  that read them (heat/engine/stack.py, ``_update_all_resource_data``):
  ``resources.attr_data``, and ``stacks.outputs``, where nestedflow keeps
  the outputs resolved from those attributes (what the template publishes).

``physical_objects.properties`` is the cloud the test resource types stand
in for: a property's value is what a resource sends to its API. Heat's
convergence also passes attribute values to dependents through
``sync_point.input_data`` (heat/engine/check_resource.py), deleted when the
traversal ends (heat/engine/stack.py, ``purge_db``); TaskFlow's journal,
which outlives traversals, must hold none of them. Nowhere else either.
"""

import collections
import contextlib
import json
import logging
import threading
import uuid

import pytest
import sqlalchemy as sa
from conductor_cluster import wait_for
from kazoo.exceptions import NoNodeError
from oslo_log import log as oslo_log
from test_notifications import listener  # noqa: F401 (a fixture: Heat notifications on RabbitMQ)

from nestedflow.cmd import conductor as conductor_cmd
from nestedflow.conf import CONF

pytestmark = pytest.mark.functional

#: "table.column" where Heat itself stores hidden values (module docstring).
ALLOWED = frozenset({
    "raw_templates.parameters",
    "resources.properties_data",
    "resources.attr_data",
    "stacks.outputs",
    "physical_objects.properties",
})

CHILD = {
    "heat_template_version": "2018-08-31",
    "parameters": {"secret": {"type": "string", "hidden": True}},
    "resources": {"inner": {"type": "OS::Heat::TestResource",
                            "properties": {"value": {"get_param": "secret"}}}},
    "outputs": {"inner": {"value": {"get_attr": ["inner", "output"]}}},
}
FILES = {"child.yaml": json.dumps(CHILD)}
TEMPLATE = {
    "heat_template_version": "2018-08-31",
    "parameters": {"secret": {"type": "string", "hidden": True},
                   "fail": {"type": "boolean", "default": False}},
    "resources": {
        # The waits keep each traversal's job on the board long enough to be read.
        "r": {"type": "OS::Heat::TestResource",
              "properties": {"value": {"get_param": "secret"}, "wait_secs": 0.3}},
        "nested": {"type": "child.yaml", "properties": {"secret": {"get_param": "secret"}}},
        "f": {"type": "OS::Heat::TestResource", "depends_on": ["nested"],
              "properties": {"value": {"get_attr": ["r", "output"]},
                             "fail": {"get_param": "fail"}}},
    },
    "outputs": {"out": {"value": {"get_attr": ["r", "output"]}},
                "nested_out": {"value": {"get_attr": ["nested", "inner"]}}},
}


@pytest.fixture
def cluster_db_url(pg_url):
    return pg_url


def conductor_config(tmp_path):
    """DEBUG for TaskFlow too (conductors quiet it), and Heat notifications
    on the topic the ``listener`` fixture hears."""
    levels = [level for level in oslo_log.get_default_log_levels() + conductor_cmd.QUIET_LOGGERS
              if not level.startswith("taskflow=")] + ["taskflow=DEBUG"]
    topic = CONF.oslo_messaging_notifications.topics[0]
    path = tmp_path / "conductor.conf"
    path.write_text(f"[DEFAULT]\ndefault_log_levels = {','.join(levels)}\n\n"
                    f"[oslo_messaging_notifications]\ndriver = messagingv2\ntopics = {topic}\n")
    return path


class ZnodeRecorder:
    """Every value of every znode under ``root``, read over and over until
    stopped: a job's node is gone once its traversal ends."""

    def __init__(self, zk, root, interval=0.02):
        self.zk, self.root, self.interval = zk, root, interval
        self.seen = collections.defaultdict(set)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True, name="znode-recorder")

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc_info):
        self._stop.set()
        self._thread.join(10)
        self.walk()

    def _run(self):
        while not self._stop.wait(self.interval):
            self.walk()

    def walk(self):
        todo = [self.root]
        while todo:
            path = todo.pop()
            try:
                data, _ = self.zk.get(path)
                children = self.zk.get_children(path)
            except NoNodeError:
                continue
            self.seen[path].add(data or b"")
            todo.extend(f"{path}/{child}" for child in children)

    def jobs(self):
        """(action, stack id) of every job read."""
        found = set()
        for path, values in self.seen.items():
            if "/jobs/" not in path or path.endswith(".lock"):
                continue
            for data in values:
                with contextlib.suppress(ValueError, KeyError, TypeError):
                    kwargs = json.loads(data)["details"]["kwargs"]
                    found.add((kwargs["action"], kwargs["stack_id"]))
        return found


def database_hits(engine, secrets):
    """{("table.column", label)} wherever a secret is in a row, every table read."""
    metadata = sa.MetaData()
    metadata.reflect(engine)
    hits = set()
    with engine.connect() as conn:
        for table in metadata.sorted_tables:
            columns = list(table.columns)
            # Binary columns as stored; anything else as PostgreSQL prints it.
            selected = [c if isinstance(c.type, sa.LargeBinary) else sa.cast(c, sa.Text)
                        for c in columns]
            for row in conn.execute(sa.select(*selected)):
                for column, value in zip(columns, row, strict=True):
                    if isinstance(value, (bytes, memoryview)):
                        value = bytes(value).decode("utf-8", "replace")
                    hits.update((f"{table.name}.{column.name}", label)
                                for label, secret in secrets.items()
                                if value and secret in value)
    return hits


def text_hits(where, text, secrets):
    return {(where, label) for label, secret in secrets.items() if secret in text}


def journal_atoms(engine, stack_id):
    """Atom details journaled in the stack's logbook (its uuid is the stack's id)."""
    with engine.connect() as conn:
        return conn.execute(sa.text(
            "SELECT count(*) FROM atomdetails a JOIN flowdetails f ON a.parent_uuid = f.uuid "
            "WHERE f.parent_uuid = :book"), {"book": stack_id}).scalar()


def test_hidden_values_stay_out_of_journal_jobs_logs_and_notifications(
        listener, cluster, probe, tmp_path, caplog):  # noqa: F811 (listener: the fixture)
    caplog.set_level(logging.DEBUG)
    secrets = {label: f"hid-{label}-{uuid.uuid4().hex}"
               for label in ("created", "updated", "rejected")}
    extra = ("--debug", "--config-file", str(conductor_config(tmp_path)))
    with ZnodeRecorder(cluster.zk, cluster.root) as board:
        conductors = cluster.start_many(["h1", "h2"], extra=extra)
        engine = cluster.engine()

        def settle(stack):
            return engine.wait(stack.id, timeout=180)

        stack = settle(engine.create_stack(f"hidden-{uuid.uuid4().hex[:6]}", TEMPLATE,
                                           parameters={"secret": secrets["created"]},
                                           files=FILES))
        assert stack.stack_status == "CREATE_COMPLETE", stack.status_reason
        # The value reached the resources, the nested stack and the outputs.
        assert stack.outputs == {"out": secrets["created"], "nested_out": secrets["created"]}
        child_id = {r.name: r for r in engine.list_resources(stack.id)}["nested"].physical_id

        stack = settle(engine.update_stack(stack.id, TEMPLATE,
                                           parameters={"secret": secrets["updated"]},
                                           files=FILES))
        assert stack.stack_status == "UPDATE_COMPLETE", stack.status_reason
        assert stack.outputs["nested_out"] == secrets["updated"]

        stack = settle(engine.update_stack(stack.id, TEMPLATE,
                                           parameters={"secret": secrets["rejected"],
                                                       "fail": True}, files=FILES))
        assert stack.stack_status == "ROLLBACK_COMPLETE", stack.status_reason
        assert "Test Resource failed" in stack.status_reason
        assert stack.outputs["out"] == secrets["updated"]

        stack = settle(engine.delete_stack(stack.id))
        assert stack.stack_status == "DELETE_COMPLETE", stack.status_reason
        listener.wait_for(stack.id, "orchestration.stack.delete.end")
        wait_for(lambda: cluster.jobs() == [], 30, what="the jobboard to empty")

    found = database_hits(probe.engine, secrets)
    # The grep reads what it must: Heat's own places hold the values...
    assert {("raw_templates.parameters", label) for label in secrets} <= found
    assert ("resources.properties_data", "updated") in found
    # ...and the journal, the board and the logs were there to be read.
    assert journal_atoms(probe.engine, stack.id) > 0
    assert journal_atoms(probe.engine, child_id) > 0
    jobs = board.jobs()
    assert {("CREATE", stack.id), ("UPDATE", stack.id), ("DELETE", stack.id)} <= jobs, jobs
    assert any(stack_id == child_id for _, stack_id in jobs), jobs
    outputs = {c.name: cluster.output(c) for c in conductors}
    assert all(" DEBUG " in text for text in outputs.values())
    with listener.lock:
        notified = [(t, p, c) for t, p, c, _ in listener.received
                    if p.get("stack_identity") in (stack.id, child_id)]
    assert {"orchestration.resource.update.error",
            "orchestration.resource.delete.end"} <= {t for t, _, _ in notified}

    for path, values in board.seen.items():
        for data in values:
            found |= text_hits(f"znode {path}", data.decode("utf-8", "replace"), secrets)
    for name, text in outputs.items():
        found |= text_hits(f"conductor {name}'s log", text, secrets)
    found |= text_hits("this process's log", caplog.text, secrets)
    for event_type, payload, context in notified:
        found |= text_hits(f"notification {event_type}",
                           json.dumps(payload) + json.dumps(context), secrets)

    leaks = sorted(hit for hit in found if hit[0] not in ALLOWED)
    assert leaks == [], leaks
