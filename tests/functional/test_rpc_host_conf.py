"""EngineClient and EngineService on a host's own ``ConfigOpts``: the host
registered oslo.messaging's options (as every oslo.messaging user does),
never nestedflow's. As oslo libraries do (oslo.messaging's
``get_rpc_transport`` registers its transport options on the conf it is
handed), each registers the options it reads on the conf it is given."""

import oslo_messaging as messaging
import pytest
from oslo_config import cfg

import nestedflow
from nestedflow.rpc import EngineClient
from nestedflow.rpc.service import EngineService
from tests.functional.engine_services import TRANSPORT_URL, EngineServices

TEMPLATE = {"heat_template_version": "2018-08-31",
            "resources": {"a": {"type": "OS::Heat::None"}}}


def _host_conf():
    conf = cfg.ConfigOpts()
    conf([], project="host-service")
    messaging.get_rpc_transport(conf, url=TRANSPORT_URL).cleanup()  # registers its options
    assert "rpc" not in conf
    return conf


@pytest.fixture
def services(pg_url, tmp_path):
    group = EngineServices(pg_url, tmp_path, count=1)
    yield group
    group.close()


def test_client_on_a_host_conf(services, stack_name):
    conf = _host_conf()
    with EngineClient(transport_url=TRANSPORT_URL, conf=conf, topic=services.topic) as client:
        client.create_stack(stack_name, TEMPLATE)
        assert client.wait(stack_name, timeout=60).stack_status == "CREATE_COMPLETE"
    # The defaults of what it registered, on the host's object.
    assert conf.rpc.topic == "nestedflow-engine"


def test_service_on_a_host_conf(sqlite_url, stack_name):
    conf = _host_conf()
    topic = f"nftest-{stack_name}"
    conf.set_override("transport_url", TRANSPORT_URL)
    with nestedflow.Engine(db_url=sqlite_url) as engine:
        service = EngineService(engine, conf, topic=topic)
        service.start()
        try:
            with EngineClient(transport_url=TRANSPORT_URL, conf=conf, topic=topic) as client:
                client.create_stack(stack_name, TEMPLATE)
                assert client.wait(stack_name, timeout=60).stack_status == "CREATE_COMPLETE"
        finally:
            service.stop()
            service.wait()
