"""Fixtures shared by the unit tests."""

import importlib.util
import pathlib

import pytest

from nestedflow.conf import CONF

ROOT = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture
def override():
    """``override(name, value)``: an ``[engine]`` option for this test only."""
    names = []

    def set_(name, value):
        names.append(name)
        CONF.set_override(name, value, group="engine")

    yield set_
    for name in names:
        CONF.clear_override(name, group="engine")


@pytest.fixture
def doc_tool():
    """``doc_tool(name)``: the module of ``tools/<name>.py``, a docs generator."""

    def load(name):
        spec = importlib.util.spec_from_file_location(name, ROOT / "tools" / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module

    return load
