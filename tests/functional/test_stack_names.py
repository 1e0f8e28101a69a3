"""Stack names follow Heat's rule (heat/engine/stack.py: a letter, then
letters, digits and "_-.", at most 255 characters), and a UUID-shaped name
that is another stack's id is refused; nothing is stored for a refused name."""

import pytest

from nestedflow import exceptions

TEMPLATE = "heat_template_version: 2018-08-31\nresources:\n  a: {type: OS::Heat::None}\n"


@pytest.mark.parametrize("name", [
    "", "1abc", "_abc", "a/b", "a b", "tab\there", "nl\nx", "bell\x07", "del\x7f",
    "caf\u00e9", "a" * 256, "..", "-x", None, 7,
])
def test_bad_names_refused(sqlite_engine, name):
    with pytest.raises(exceptions.StackValidationFailed, match="invalid stack name") as error:
        sqlite_engine.create_stack(name, TEMPLATE)
    assert "\n" not in str(error.value) and "\t" not in str(error.value)
    assert sqlite_engine.list_stacks(show_nested=True) == []


@pytest.mark.parametrize("name", ["a", "A.b_c-1", "a" * 255, "s3.example-stack_2"])
def test_good_names_accepted(sqlite_engine, name):
    stack = sqlite_engine.create_stack(name, TEMPLATE)
    assert sqlite_engine.wait(stack.id, timeout=60).name == name


def test_name_that_is_another_stacks_id_refused(sqlite_engine):
    # Only ids that start with a letter can be names at all.
    first = None
    for index in range(40):
        stack = sqlite_engine.create_stack(f"s{index}", TEMPLATE)
        if stack.id[0].isalpha():
            first = stack
            break
    assert first is not None
    for spelling in (first.id, first.id.upper(), first.id.replace("-", "")):
        with pytest.raises(exceptions.StackValidationFailed, match="is the id of another stack"):
            sqlite_engine.create_stack(spelling, TEMPLATE)
    # A UUID-shaped name that is nobody's id is a name like any other.
    free = "f" + first.id[1:] if first.id[0] != "f" else "e" + first.id[1:]
    assert sqlite_engine.create_stack(free, TEMPLATE).name == free
