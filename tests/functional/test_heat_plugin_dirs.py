"""How plugin_dirs are loaded: as Heat's PluginManager loads them
(heat/engine/plugin_manager.py, heat/common/plugin_loader.py), with the
import shim standing in for Heat, and nestedflow's entry points winning a
clash."""

import ast
import logging
import subprocess
import sys
import textwrap

from nestedflow.conf import CONF
from nestedflow.resources import base
from nestedflow.resources.heat_compat import plugin_dirs, shim
from nestedflow.resources.registry import ResourceRegistry
from tests.functional import heat_plugin_files


def test_default_plugin_dirs_are_heats():
    """heat/common/config.py's ``plugin_dirs`` default, read from Heat's file."""
    config = (heat_plugin_files.heat_package() / "common" / "config.py").read_text()
    option = next(node for node in ast.walk(ast.parse(config))
                  if isinstance(node, ast.Call) and node.args
                  and isinstance(node.args[0], ast.Constant)
                  and node.args[0].value == "plugin_dirs")
    default = next(k.value for k in option.keywords if k.arg == "default")
    assert CONF.heat_compat.plugin_dirs == ast.literal_eval(default)


def test_heat_files_load_through_the_shim_not_heat(tmp_path):
    directory = heat_plugin_files.copy_plugins(tmp_path, heat_plugin_files.SERVICE_FREE)
    types = plugin_dirs.load_types([str(directory)])
    for relative, type_name in heat_plugin_files.SERVICE_FREE.items():
        module = "heat.engine.plugins." + relative.removesuffix(".py").replace("/", "_")
        assert types[type_name].__module__ == module
        assert sys.modules[module].__file__ == str(directory / relative.replace("/", "_"))
    # Every heat.* module in this process is the shim's or a plugin file:
    # nothing of the installed Heat was imported.
    for name, module in list(sys.modules.items()):
        if name == "heat" or name.startswith("heat."):
            assert name.startswith("heat.engine.plugins") or isinstance(
                module.__spec__.loader, shim._View), name
            assert str(heat_plugin_files.heat_package()) not in (
                getattr(module, "__file__", None) or ""), name


class NativeValue(base.Resource):
    """Stands for a type registered as a nestedflow.resources entry point."""

    def create(self):
        return "native"

    update = delete = check = suspend = resume = create


def test_an_entry_point_wins_a_clash_with_a_warning(tmp_path, caplog):
    directory = heat_plugin_files.copy_plugins(tmp_path, heat_plugin_files.SERVICE_FREE)
    CONF.set_override("plugin_dirs", [str(directory)], group="heat_compat")
    try:
        registry = ResourceRegistry.for_testing({"OS::Heat::Value": NativeValue})
        with caplog.at_level(logging.WARNING, logger="nestedflow.resources.registry"):
            assert registry.get("OS::Heat::Value") is NativeValue
    finally:
        CONF.clear_override("plugin_dirs", group="heat_compat")
    assert registry.get("OS::Heat::Delay").__module__ == "heat.engine.plugins.heat_delay"
    assert [r.getMessage() for r in caplog.records] == [
        "resource type OS::Heat::Value: the nestedflow.resources entry point is used, "
        "not heat.engine.plugins.heat_value from plugin_dirs"]


def test_heats_module_rules(tmp_path, caplog):
    """A module importing what the adapter lacks is skipped with a warning
    naming it (Heat logs and skips too); ``available_resource_mapping``
    wins over ``resource_mapping`` (Heat's PluginMapping order); packages
    are walked, ``tests`` packages are not."""
    (tmp_path / "needs_more.py").write_text(textwrap.dedent("""
        from heat.engine import rsrc_defn
        def resource_mapping():
            return {"Test::NeedsMore": rsrc_defn}
    """))
    (tmp_path / "unavailable.py").write_text(textwrap.dedent("""
        from heat.engine import resource
        class Hidden(resource.Resource):
            pass
        def available_resource_mapping():
            return {}
        def resource_mapping():
            return {"Test::Hidden": Hidden}
    """))
    for package in ("vendor", "vendor/tests"):
        (tmp_path / package).mkdir()
        (tmp_path / package / "__init__.py").write_text("")
        (tmp_path / package / "thing.py").write_text(textwrap.dedent(f"""
            from heat.engine import resource
            class Thing(resource.Resource):
                pass
            def resource_mapping():
                return {{"Test::{package.replace('/', '.')}": Thing}}
        """))
    with caplog.at_level(logging.WARNING):
        types = plugin_dirs.load_types([str(tmp_path), str(tmp_path / "missing")])
    assert sorted(types) == ["Test::vendor"]
    assert types["Test::vendor"].__module__ == "heat.engine.plugins.vendor.thing"
    assert [r.getMessage() for r in caplog.records] == [
        f"plugin_dirs: {tmp_path}/needs_more.py failed to load, its types are not "
        "available: No module named 'heat.engine.rsrc_defn': nestedflow's Heat adapter "
        "does not provide it (doc/source/plugins.rst lists the Heat plugin API it does)"]


def test_no_shim_when_heat_is_importable(tmp_path):
    """A process where a real ``heat`` is importable keeps it: the shim is
    not installed and plugin_dirs are not loaded (their classes would be
    Heat's, which nestedflow cannot run)."""
    (tmp_path / "heat").mkdir()
    (tmp_path / "heat" / "__init__.py").write_text("REAL = True\n")
    plugins = heat_plugin_files.copy_plugins(tmp_path / "plugins",
                                             {"heat/value.py": "OS::Heat::Value"})
    script = textwrap.dedent(f"""
        import heat
        from nestedflow.resources.heat_compat import plugin_dirs, shim
        print(shim.install(), plugin_dirs.load_types([{str(plugins)!r}]), heat.REAL)
    """)
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                            cwd=tmp_path, check=True)
    assert result.stdout.split() == ["False", "{}", "True"]
    assert "a real Heat is importable in this process" in result.stderr
