"""The command line's light reader lists stacks exactly as the Engine does.

``nestedflow stack list`` on a current SQLite database reads through
:class:`nestedflow.engine.listing.StackReader` on a
:class:`nestedflow.db.core_reads.CoreReader` (SQLAlchemy Core, no ORM or
oslo.db) instead of building an Engine: nested stacks, tags and their
four filters, project scoping and every view field must come out the same.
"""

import pytest
import yaml
from oslo_context import context as oslo_context

from nestedflow import exceptions
from nestedflow.db.core_reads import CoreReader
from nestedflow.engine.listing import StackReader

pytestmark = pytest.mark.functional

TR = "OS::Heat::TestResource"
CHILD = {"heat_template_version": "2018-08-31",
         "resources": {"x": {"type": TR, "properties": {"value": "x"}}}}
TEMPLATE = {"heat_template_version": "2018-08-31",
            "resources": {"a": {"type": TR, "properties": {"value": "a"}},
                          "child": {"type": "OS::Heat::Stack",
                                    "properties": {"template": yaml.safe_dump(CHILD)}}},
            "outputs": {"o": {"value": {"get_attr": ["a", "output"]}}}}


def _context(project):
    return oslo_context.RequestContext(project_id=project, user_id="u", is_admin=False)


def test_reader_lists_as_the_engine(sqlite_engine, sqlite_url, stack_name):
    engine = sqlite_engine
    for suffix, tags, context in (("web", ["web", "prod"], None), ("db", ["db", "prod"], None),
                                  ("none", None, None), ("other", ["web"], _context("p2"))):
        stack = engine.create_stack(f"{stack_name}-{suffix}", TEMPLATE, tags=tags,
                                    context=context)
        engine.wait(stack.id, timeout=60, context=context)
    deleted = engine.create_stack(f"{stack_name}-gone", TEMPLATE)
    engine.wait(deleted.id, timeout=60)
    engine.wait(engine.delete_stack(deleted.id).id, timeout=60)

    db = CoreReader.open(sqlite_url)
    assert db is not None
    reader = StackReader(db)
    try:
        for kwargs in ({}, {"show_nested": True}, {"tags": ["prod", "web"]},
                       {"tags": "prod"}, {"tags_any": "web,db"},
                       {"not_tags": ["prod", "web"], "show_nested": True},
                       {"not_tags_any": ["prod"]}, {"context": _context("p2")},
                       {"context": _context("p3")}):
            expected = engine.list_stacks(**kwargs)
            assert reader.list_stacks(**kwargs) == expected, kwargs
        assert len(engine.list_stacks(show_nested=True)) == 8  # 4 parents, 4 children
        with pytest.raises(exceptions.StackValidationFailed, match=r"tags\[0\]"):
            reader.list_stacks(tags=["x" * 81])
    finally:
        reader.close()


def test_open_leaves_other_databases_to_the_engine(tmp_path):
    # A database without the schema: the Engine migrates it on first use.
    assert CoreReader.open(f"sqlite:///{tmp_path}/fresh.sqlite") is None
    # A server's: its connection options are oslo.db's (not connected here).
    assert CoreReader.open("postgresql+psycopg2://u:pw@127.0.0.1:1/x") is None
    with pytest.raises(exceptions.DatabaseUnavailable, match="malformed database URL"):
        CoreReader.open("notaurl")
    with pytest.raises(exceptions.DatabaseUnavailable, match="does not exist"):
        CoreReader.open(f"sqlite:///{tmp_path}/missing/x.sqlite")
