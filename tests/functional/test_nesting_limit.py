"""The nesting depth limit is checked before anything is stored, for
template resources and for OS::Heat::Stack's inline templates alike (Heat:
StackResource.validate_nested_stack raises RecursionDepthExceeded while the
parent is validated)."""

import pytest

from nestedflow import exceptions


def inline_chain(levels):
    tmpl = {"heat_template_version": "2018-08-31",
            "resources": {"a": {"type": "OS::Heat::None"}}}
    for _ in range(levels):
        tmpl = {"heat_template_version": "2018-08-31",
                "resources": {"s": {"type": "OS::Heat::Stack",
                                    "properties": {"template": tmpl}}}}
    return tmpl


def file_chain(levels):
    files = {}
    for level in range(levels):
        child = f"level{level + 1}.yaml" if level + 1 < levels else "OS::Heat::None"
        files[f"level{level}.yaml"] = (
            f"heat_template_version: 2018-08-31\nresources:\n  a:\n    type: {child}\n")
    return files["level0.yaml"], files


@pytest.mark.parametrize("kind", ["inline", "files"])
def test_too_deep_refused_before_storing(sqlite_engine, stack_name, kind):
    template, files = (inline_chain(6), None) if kind == "inline" else file_chain(7)
    with pytest.raises(exceptions.StackValidationFailed,
                       match="nesting deeper than the maximum of 5 levels"):
        sqlite_engine.create_stack(stack_name, template, files=files)
    assert sqlite_engine.list_stacks(show_nested=True) == []


def test_inline_chain_at_the_limit_completes(sqlite_engine, stack_name):
    stack = sqlite_engine.create_stack(stack_name, inline_chain(5))
    assert sqlite_engine.wait(stack.id, timeout=120).status == "COMPLETE"
