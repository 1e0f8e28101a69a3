"""The files map, built from local paths as python-heatclient builds it.

Followed: heatclient/common/template_utils.py (``get_template_contents``,
``resolve_template_get_files``, ``process_multiple_environments_and_files``,
``resolve_environment_urls``, ``deep_update``):

* every ``get_file`` value and every resource ``type`` ending in ``.yaml``
  or ``.template`` is resolved relative to the file naming it, read, stored
  in the files map under its absolute ``file://`` URL, and the reference in
  the template is rewritten to that URL;
* a file that is itself a template is parsed and resolved the same way
  (recursively) and stored as JSON;
* each environment's ``resource_registry`` entries naming a file (no
  ``::``) are resolved relative to the environment (or its ``base_url``),
  including the per-resource ``resources:`` section;
* several environments are merged in order with heatclient's deep update.

Unlike heatclient nothing is fetched over the network: a URL other than
``file://`` is refused with one line naming the file that refers to it.
"""

import json
import os
from collections import abc
from urllib import parse

TEMPLATE_SUFFIXES = (".yaml", ".template")


class FilesError(Exception):
    """A file named by a template or environment cannot be used."""


def _to_url(path):
    if parse.urlparse(path).scheme:
        return path
    return "file://" + parse.quote(os.path.abspath(path))


def _local_path(url, named_by):
    parsed = parse.urlparse(url)
    if parsed.scheme != "file":
        raise FilesError(f"{named_by}: {url} refused: nestedflow reads local files only "
                         "and fetches nothing over the network")
    return parse.unquote(parsed.path)


def _base_url(url):
    return url.rsplit("/", 1)[0] + "/"


def _read(url, named_by):
    path = _local_path(url, named_by)
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except FileNotFoundError:
        raise FilesError(f"{named_by}: file {path} not found") from None
    except IsADirectoryError:
        raise FilesError(f"{named_by}: {path} is a directory, not a file") from None
    except UnicodeDecodeError:
        raise FilesError(f"{named_by}: {path} is not UTF-8 text") from None


def _parse(text, name=None):
    from nestedflow.template import loader

    # As bytes: a one-line str naming an existing file would be read as a path.
    # ``name``: the file, so a YAML error names it as well as its line.
    return loader.load(text.encode("utf-8"), name=name)


def _as_template(text):
    """The parsed template if ``text`` is one (heatclient's ``is_template``)."""
    from nestedflow import exceptions

    try:
        data = _parse(text)
    except exceptions.StackValidationFailed:
        return None
    if isinstance(data, dict) and ("heat_template_version" in data
                                   or "HeatTemplateFormatVersion" in data
                                   or "AWSTemplateFormatVersion" in data):
        return data
    return None


def _fetch(url, files, named_by):
    """Read ``url`` into ``files`` (templates resolved recursively)."""
    if url in files:
        return
    text = _read(url, named_by)
    template = _as_template(text)
    if template is not None:
        files[url] = None  # a template reaching itself again stops here
        _resolve_template(template, files, _base_url(url), _local_path(url, named_by))
        text = json.dumps(template)
    files[url] = text


def _resolve_template(data, files, base_url, named_by):
    """Collect what ``data`` (a template, in place) names; rewrite its references."""
    if isinstance(data, list):
        for item in data:
            _resolve_template(item, files, base_url, named_by)
        return
    if not isinstance(data, dict):
        return
    for value in data.values():
        _resolve_template(value, files, base_url, named_by)
    for key, value in data.items():
        if not isinstance(value, str):
            continue
        if key == "get_file" or (key == "type" and value.endswith(TEMPLATE_SUFFIXES)):
            url = parse.urljoin(base_url, value)
            _fetch(url, files, named_by)
            data[key] = url


def template_contents(path):
    """``(template, files)`` for the template file at ``path``."""
    url = _to_url(path)
    text = _read(url, "template")
    template = _parse(text, path)
    files = {}
    _resolve_template(template, files, _base_url(url), _local_path(url, "template"))
    return template, files


def _resolve_registry(registry, files, base_url, named_by):
    if not isinstance(registry, dict):
        return
    base_url = registry.get("base_url", base_url)

    def resolve(mapping, base):
        for key, value in list(mapping.items()):
            if (key in ("base_url", "hooks", "restricted_actions")
                    or not isinstance(value, str) or "::" in value):
                continue
            if not base.endswith("/"):
                base += "/"
            url = parse.urljoin(base, value)
            _fetch(url, files, named_by)
            mapping[key] = url

    resolve(registry, base_url)
    for res in (registry.get("resources") or {}).values():
        if isinstance(res, dict):
            resolve(res, res.get("base_url", base_url))


def deep_update(old, new):
    """Merge ``new`` into ``old`` as heatclient merges environments."""
    old = {} if old is None else old
    for key, value in new.items():
        if isinstance(value, abc.Mapping):
            old[key] = deep_update(old.get(key, {}), value)
        elif value is None and isinstance(old.get(key), abc.Mapping):
            pass  # "key:" with nothing under it keeps what earlier files gave
        else:
            old[key] = value
    return old


def environments_contents(paths):
    """``(environment, files)``: the environments at ``paths`` merged in order."""
    merged, files = {}, {}
    for path in paths:
        url = _to_url(path)
        named_by = _local_path(url, "environment")
        env = _parse(_read(url, "environment"), path)
        if not isinstance(env, dict):
            raise FilesError(f"{named_by}: an environment must be a mapping")
        _resolve_registry(env.get("resource_registry"), files, _base_url(url), named_by)
        merged = deep_update(merged, env)
    return merged, files
