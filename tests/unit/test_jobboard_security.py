"""The jobboard URL's credentials, ACL and TLS options (what kazoo is given),
and the job schema's refusals, without a server (issue 32)."""

import pytest
from kazoo import security as k_security

from nestedflow import exceptions
from nestedflow.dispatch import job_schema
from nestedflow.dispatch import zookeeper as zk
from nestedflow.flows import factories


def test_digest_credentials_make_creator_acls_and_stay_out_of_str():
    url = zk.JobboardURL("zookeeper://nf%40ops:s%3Acret@zk1:2181,zk2:2181/deploy")
    assert url.hosts == "zk1:2181,zk2:2181" and url.root == "/deploy"
    assert url.options.client_kwargs() == {
        "auth_data": [("digest", "nf@ops:s:cret")],
        "default_acl": list(k_security.CREATOR_ALL_ACL)}
    assert str(url) == "zookeeper://zk1:2181,zk2:2181/deploy"


def test_sasl_and_tls_options_are_kazoos(tmp_path):
    ca = tmp_path / "ca.pem"
    ca.write_text("x")
    url = zk.JobboardURL(f"zookeeper://nf:pw@zk1:2281/d?sasl_mechanism=DIGEST-MD5"
                         f"&use_ssl=true&ca={ca}&verify_certs=yes")
    kwargs = url.options.client_kwargs()
    assert kwargs["sasl_options"] == {"mechanism": "DIGEST-MD5", "username": "nf",
                                      "password": "pw"}
    assert "auth_data" not in kwargs
    assert (kwargs["use_ssl"], kwargs["ca"], kwargs["verify_certs"]) == (True, str(ca), True)


def test_explicit_acl_list():
    url = zk.JobboardURL("zookeeper://nf:pw@zk1/d?acl=sasl:nf:rwcda,sasl:ops:r")
    acls = url.options.client_kwargs()["default_acl"]
    assert [(a.id.scheme, a.id.id, a.perms) for a in acls] == [
        ("sasl", "nf", k_security.Permissions.ALL), ("sasl", "ops", k_security.Permissions.READ)]


def test_no_credentials_no_options():
    assert zk.JobboardURL("zookeeper://zk1:2181/d").options.client_kwargs() == {}


@pytest.mark.parametrize("url, message", [
    ("zookeeper://zk1/d?colour=red", "unknown option 'colour'"),
    ("zookeeper://zk1/d?use_ssl=perhaps", "use_ssl='perhaps' is not a boolean"),
    ("zookeeper://zk1/d?use_ssl=1&ca=/no/such.pem", "ca file '/no/such.pem' does not exist"),
    ("zookeeper://zk1/d?acl=creator", "acl=creator needs USER:PASSWORD@"),
    ("zookeeper://zk1/d?sasl_mechanism=DIGEST-MD5", "sasl_mechanism needs USER:PASSWORD@"),
    ("zookeeper://u:p@zk1/d?sasl_mechanism=PLAIN", "sasl_mechanism 'PLAIN' is not supported"),
    ("zookeeper://u:p@zk1/d?acl=sasl:u:rwx", "bad acl entry 'sasl:u:rwx'"),
    ("zookeeper://u:hunter2@/d", "expected zookeeper://"),
])
def test_bad_options_are_refused_in_one_line(url, message):
    with pytest.raises(exceptions.NestedflowError) as raised:
        zk.JobboardURL(url)
    text = str(raised.value)
    assert message in text and "\n" not in text and "hunter2" not in text


def _details(**changes):
    details = {"factory": factories.TRAVERSAL, "posted_by": "engine-1", "posted_at": 1.5,
               "flow_uuid": "0f1e", "attempts": 0,
               "kwargs": {"stack_id": "s-1", "traversal_id": "t-1", "action": "CREATE"}}
    details.update(changes)
    return details


@pytest.mark.parametrize("details, reason", [
    (_details(attempts="3"), "details.attempts: '3' is not of type 'integer'"),
    (_details(attempts=-1), "details.attempts: -1 is less than the minimum of 0"),
    (_details(posted_at="yesterday"), "details.posted_at: 'yesterday' is not of type 'number'"),
    (_details(kwargs={"stack_id": 7, "traversal_id": "t", "action": "CREATE"}),
     "details.kwargs.stack_id: 7 is not of type 'string'"),
    (_details(kwargs={"stack_id": "../x", "traversal_id": "t", "action": "CREATE"}),
     "details.kwargs.stack_id: '../x' does not match"),
    (_details(kwargs={"stack_id": "s", "traversal_id": "t", "action": "EXPLODE"}),
     "details.kwargs.action: 'EXPLODE' is not one of"),
    (_details(command="rm -rf /"), "Additional properties are not allowed ('command'"),
    (_details(factory="os.system"), "flow factory 'os.system' is not in nestedflow's allow-list"),
    ([1, 2], "job details are not a JSON object"),
])
def test_schema_refusals(details, reason):
    assert reason in job_schema.schema_refusal(details)


def test_what_the_poster_and_conductors_write_passes():
    assert job_schema.schema_refusal(_details(
        last_conductor="c1", last_error="x" * 2000, refused="r", refused_by="c2",
        refused_at=2.0)) is None


def test_the_posters_own_job_passes():
    import uuid

    from nestedflow.dispatch import impl_zookeeper as jobboard

    details = jobboard.job_details(str(uuid.uuid4()), str(uuid.uuid4()), "UPDATE",
                                   str(uuid.uuid4()), "engine-host.example-4242")
    assert jobboard.refusal(details) is None


def test_unknown_scheme_error_hides_the_password():
    from nestedflow.dispatch import base

    with pytest.raises(exceptions.NestedflowError) as raised:
        base.dispatcher_class("zk://nf:hunter2@zk1:2181/d")
    assert "hunter2" not in str(raised.value) and "zk://***@zk1:2181/d" in str(raised.value)
