"""nestedflow-engine with conductors behind it: the engine services post
each traversal to the jobboard and a conductor runs it (the embedding
issue: several services on one topic, conductors or in-process execution
behind them)."""

import pytest

from tests.functional.engine_services import EngineServices


@pytest.fixture
def cluster_db_url(pg_url):
    return pg_url


def test_engine_services_post_to_conductors(cluster, tmp_path, stack_name):
    cluster.start("c1")
    services = EngineServices(cluster.db_url, tmp_path, count=2,
                              extra=("--jobboard-url", cluster.jobboard_url))
    try:
        client = services.client()
        template = {"heat_template_version": "2018-08-31",
                    "resources": {f"r{i}": {"type": "OS::Heat::TestResource",
                                            "properties": {"value": str(i)}}
                                  for i in range(3)}}
        stack = client.create_stack(stack_name, template)
        assert client.wait(stack.id, timeout=120).stack_status == "CREATE_COMPLETE"
        ran = {e.engine_id for e in client.list_events(stack.id) if e.resource_name != stack_name}
        assert ran == {"c1"}, ran
        client.delete_stack(stack.id)
        assert client.wait(stack.id, timeout=120).stack_status == "DELETE_COMPLETE"
    finally:
        services.close()
