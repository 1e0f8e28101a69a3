"""The owner tokens of ``stacks.traversal_owner``: every format built by
:class:`nestedflow.db.owners.OwnerToken`, read back from the plain string a
database returns, and spelled exactly as databases written by earlier
versions hold them."""

import json
import re

import pytest

from nestedflow.db.owners import OwnerToken

HEX32, HEX16 = r"[0-9a-f]{32}", r"[0-9a-f]{16}"


def read_back(token):
    """The token as a database hands it back: a plain str, wrapped to be read."""
    stored = str.__str__(token)
    assert type(stored) is str and stored == token
    return OwnerToken(stored)


@pytest.mark.parametrize("token, pattern", [
    (OwnerToken.run("host-1a2b3c4d"), rf"host-1a2b3c4d@{HEX32}"),
    (OwnerToken.queued("host-1a2b3c4d"), r"host-1a2b3c4d@queued"),
    (OwnerToken.unposted("host-1a2b3c4d"), r"host-1a2b3c4d@unposted"),
    (OwnerToken.conductor("c1"), rf"c1:{HEX16}"),
    (OwnerToken.holder("mark-unhealthy"), rf"mark-unhealthy/{HEX32}"),
    (OwnerToken.anonymous(), HEX32),
], ids=["run", "queued", "unposted", "conductor", "holder", "anonymous"])
def test_every_format_is_spelled_as_stored_databases_hold_it(token, pattern):
    assert isinstance(token, str)
    assert re.fullmatch(pattern, token), token
    assert json.loads(json.dumps(token)) == token  # in a flow detail's meta too


def test_the_lapsed_token_of_a_conductor_run():
    run = OwnerToken.conductor("c1")
    lapsed = OwnerToken.lapsed(run)
    assert lapsed == f"{run}~lapsed" and lapsed != run
    assert len(OwnerToken.lapsed(OwnerToken.conductor("c" * 32))) <= 64  # the column
    back = read_back(lapsed)
    assert back.is_lapsed and not read_back(run).is_lapsed
    # Still a conductor's token, whose run node is gone: known dead.
    assert back.is_conductor_run and back.engine_id is None


def test_new_runs_get_new_tokens():
    assert OwnerToken.run("e") != OwnerToken.run("e")
    assert OwnerToken.conductor("c") != OwnerToken.conductor("c")
    assert OwnerToken.holder("scaling") != OwnerToken.holder("scaling")
    assert OwnerToken.anonymous() != OwnerToken.anonymous()


@pytest.mark.parametrize("engine_id", ["host-1a2b3c4d", "my.host:8004-00ff00ff", "a@b-1"])
def test_an_engine_run_or_mark_names_its_engine(engine_id):
    run, queued, unposted = (read_back(OwnerToken.run(engine_id)),
                             read_back(OwnerToken.queued(engine_id)),
                             read_back(OwnerToken.unposted(engine_id)))
    assert run.engine_id == queued.engine_id == unposted.engine_id == engine_id
    assert (run.is_queued, run.is_unposted) == (False, False)
    assert (queued.is_queued, queued.is_unposted) == (True, False)
    assert (unposted.is_queued, unposted.is_unposted) == (False, True)
    assert not (run.is_lapsed or queued.is_lapsed or unposted.is_lapsed)


@pytest.mark.parametrize("token", [
    "", "c1:0123456789abcdef", "c1:0123456789abcdef~lapsed", "scaling/" + "0" * 32,
    "0" * 32, "another-conductor/run",
])
def test_other_tokens_name_no_engine(token):
    owner = OwnerToken(token)
    assert owner.engine_id is None
    assert not (owner.is_queued or owner.is_unposted)


@pytest.mark.parametrize("token, conductor_run", [
    (OwnerToken.conductor("c1"), True),
    (OwnerToken.lapsed(OwnerToken.conductor("c1")), True),
    (OwnerToken.holder("mark-unhealthy"), False),
    ("another-conductor/run", False),
    (OwnerToken.run("host-1a2b3c4d"), False),
    (OwnerToken.queued("host-1a2b3c4d"), False),
    (OwnerToken.anonymous(), False),
], ids=["conductor", "lapsed", "holder", "traversal-holder", "run", "queued", "anonymous"])
def test_which_tokens_a_conductor_asks_zookeeper_about(token, conductor_run):
    assert read_back(token).is_conductor_run is conductor_run


def test_sql_patterns_match_the_tokens_they_name():
    def like(pattern, value):
        regex = "".join(".*" if c == "%" else re.escape(c) for c in pattern)
        return re.fullmatch(regex, value) is not None

    engine_runs, unposted = OwnerToken.like_engine_runs(), OwnerToken.like_unposted()
    assert like(engine_runs, OwnerToken.run("e-1"))
    assert like(engine_runs, OwnerToken.queued("e-1"))
    assert like(unposted, OwnerToken.unposted("e-1"))
    assert not like(unposted, OwnerToken.queued("e-1"))
    assert not like(engine_runs, OwnerToken.conductor("c1"))
    assert not like(engine_runs, OwnerToken.lapsed(OwnerToken.conductor("c1")))


def test_a_resource_lock_holder_names_its_traversal_and_run():
    run = OwnerToken.conductor("c1")
    holder = OwnerToken.lock_holder("3f2a-traversal", run)
    assert holder == f"3f2a-traversal/{run}"
    traversal, back = read_back(holder).holder_parts
    assert (traversal, back) == ("3f2a-traversal", run)
    assert back.is_conductor_run and not read_back(holder).is_any_run
    # An engine's run and a lapsed run's token survive the round trip too.
    for run in (OwnerToken.run("e-1"), OwnerToken.lapsed(OwnerToken.conductor("c2"))):
        assert read_back(OwnerToken.lock_holder("t", run)).holder_parts == ("t", run)


def test_a_one_off_holder_and_the_any_run_fence():
    holder = read_back(OwnerToken.holder("scaling"))
    purpose, run = holder.holder_parts
    assert purpose == "scaling" and re.fullmatch(HEX32, run)
    assert run.engine_id is None and not run.is_conductor_run  # no run claims it alive
    fence = OwnerToken.any_run_of("3f2a-traversal")
    assert fence == "3f2a-traversal/" and read_back(fence).is_any_run
    assert fence.holder_parts == ("3f2a-traversal", "")
    assert OwnerToken("").holder_parts == ("", "")


def test_an_outbox_mark_handed_over_names_an_engine_that_never_beats():
    mark = OwnerToken.unposted("host-1a2b3c4d")
    orphan = read_back(OwnerToken.orphaned(read_back(mark).engine_id))
    assert orphan == "host-1a2b3c4d.lost@unposted"
    assert orphan.is_unposted and orphan.engine_id == "host-1a2b3c4d.lost"
