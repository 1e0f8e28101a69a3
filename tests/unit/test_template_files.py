"""The files map built from local paths, as python-heatclient builds it
(heatclient/common/template_utils.py: get_template_contents,
process_multiple_environments_and_files, deep_update)."""

import json

import pytest

from nestedflow.cmd import template_files


def write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def url(path):
    return "file://" + str(path)


@pytest.fixture
def tree(tmp_path):
    write(tmp_path / "scripts" / "boot.sh", "#!/bin/sh\necho hi\n")
    write(tmp_path / "lib" / "leaf.yaml",
          "heat_template_version: 2018-08-31\n"
          "resources:\n  s: {type: OS::Heat::TestResource, properties: "
          "{value: {get_file: ../scripts/boot.sh}}}\n")
    write(tmp_path / "lib" / "child.yaml",
          "heat_template_version: 2018-08-31\nresources:\n  leaf: {type: leaf.yaml}\n")
    top = write(tmp_path / "top.yaml",
                "heat_template_version: 2018-08-31\nresources:\n"
                "  c: {type: lib/child.yaml}\n"
                "  d: {type: OS::Heat::TestResource, properties: "
                "{value: {get_file: scripts/boot.sh}}}\n"
                "  e: {type: My::Server}\n")
    return tmp_path, top


def test_template_files_collected_recursively_relative_to_each_file(tree):
    root, top = tree
    template, files = template_files.template_contents(str(top))
    child, leaf, boot = (url(root / "lib" / "child.yaml"), url(root / "lib" / "leaf.yaml"),
                         url(root / "scripts" / "boot.sh"))
    assert set(files) == {child, leaf, boot}
    assert template["resources"]["c"]["type"] == child
    assert template["resources"]["d"]["properties"]["value"] == {"get_file": boot}
    assert json.loads(files[child])["resources"]["leaf"]["type"] == leaf
    assert json.loads(files[leaf])["resources"]["s"]["properties"]["value"] == {
        "get_file": boot}
    assert files[boot] == "#!/bin/sh\necho hi\n"


def test_environments_merged_in_order_with_registry_files(tree, tmp_path):
    root, _ = tree
    env1 = write(tmp_path / "env" / "one.yaml",
                 "parameters: {a: 1, b: 1}\nresource_registry:\n"
                 "  My::Server: ../lib/child.yaml\n  My::Alias: OS::Heat::None\n")
    env2 = write(tmp_path / "env2.yaml",
                 "parameters: {b: 2}\nresource_registry:\n  resources:\n"
                 "    e: {My::Server: lib/leaf.yaml}\n")
    env, files = template_files.environments_contents([str(env1), str(env2)])
    assert env["parameters"] == {"a": 1, "b": 2}
    registry = env["resource_registry"]
    assert registry["My::Server"] == url(root / "lib" / "child.yaml")
    assert registry["My::Alias"] == "OS::Heat::None"
    assert registry["resources"]["e"]["My::Server"] == url(root / "lib" / "leaf.yaml")
    assert url(root / "scripts" / "boot.sh") in files


def test_urls_are_refused(tmp_path):
    top = write(tmp_path / "t.yaml", "heat_template_version: 2018-08-31\nresources:\n"
                "  a: {type: 'https://example.com/x.yaml'}\n")
    with pytest.raises(template_files.FilesError,
                       match=r"t.yaml: https://example.com/x.yaml refused: nestedflow reads "
                             r"local files only"):
        template_files.template_contents(str(top))


def test_missing_file_names_the_referrer(tmp_path):
    top = write(tmp_path / "t.yaml", "heat_template_version: 2018-08-31\nresources:\n"
                "  a: {type: OS::Heat::TestResource, properties: {value: {get_file: nope.txt}}}\n")
    with pytest.raises(template_files.FilesError) as info:
        template_files.template_contents(str(top))
    assert str(info.value) == f"{top}: file {tmp_path / 'nope.txt'} not found"


def test_template_including_itself_terminates(tmp_path):
    top = write(tmp_path / "self.yaml", "heat_template_version: 2018-08-31\nresources:\n"
                "  a: {type: self.yaml}\n")
    template, files = template_files.template_contents(str(top))
    assert list(files) == [url(top)]


def test_deep_update_keeps_mapping_given_none():
    assert template_files.deep_update({"a": {"x": 1}, "b": 1}, {"a": None, "b": 2}) == {
        "a": {"x": 1}, "b": 2}
