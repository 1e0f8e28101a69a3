"""A parsed HOT template: version, parameters, resources, outputs, environment."""

import datetime
from collections.abc import Mapping
from dataclasses import dataclass, field

from nestedflow.exceptions import StackValidationFailed
from nestedflow.template import functions, loader
from nestedflow.template.parameters import parse_parameters

HOT_VERSIONS = (
    "2013-05-23",
    "2014-10-16",
    "2015-04-30",
    "2015-10-15",
    "2016-04-08",
    "2016-10-14",
    "2017-02-24",
    "2017-09-01",
    "2018-03-02",
    "2018-08-31",
    "2021-04-16",
)
# Release names are aliases of the date version of that release.
RELEASE_NAMES = {
    "newton": "2016-10-14",
    "ocata": "2017-02-24",
    "pike": "2017-09-01",
    "queens": "2018-03-02",
    "rocky": "2018-08-31",
    "wallaby": "2021-04-16",
}

SECTIONS = frozenset(
    {
        "heat_template_version",
        "description",
        "parameter_groups",
        "parameters",
        "resources",
        "outputs",
        "conditions",
    }
)
RESOURCE_KEYS = frozenset(
    {
        "type",
        "properties",
        "depends_on",
        "deletion_policy",
        "metadata",
        "update_policy",
        "condition",
        "external_id",
    }
)
OUTPUT_KEYS = frozenset({"value", "description", "condition"})
ENVIRONMENT_KEYS = frozenset({"parameters", "parameter_defaults", "resource_registry"})
DELETION_POLICIES = ("Delete", "Retain")
TEMPLATE_FILE_SUFFIXES = (".yaml", ".yml", ".template")


@dataclass(frozen=True)
class ResourceDefinition:
    """One entry of the ``resources`` section, with its type already mapped
    through the environment's resource_registry."""

    name: str
    type: str
    properties: dict = field(default_factory=dict)
    depends_on: tuple = ()
    deletion_policy: str = "Delete"
    metadata: dict = field(default_factory=dict)
    update_policy: dict = field(default_factory=dict)


@dataclass(frozen=True)
class OutputDefinition:
    """One entry of the ``outputs`` section; ``value`` is an unresolved snippet."""

    name: str
    value: object
    description: str = ""


def is_template_file_type(type_name):
    """True if ``type_name`` names a template file (a template resource)."""
    return type_name.endswith(TEMPLATE_FILE_SUFFIXES)


def _mapping(value, path, what):
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise StackValidationFailed(f"{what} must be a mapping", path=path)
    return dict(value)


def _parse_version(tmpl):
    if "heat_template_version" not in tmpl:
        raise StackValidationFailed("missing heat_template_version", path="heat_template_version")
    version = tmpl["heat_template_version"]
    # A dict built by yaml.safe_load elsewhere holds a date, not a string.
    if isinstance(version, datetime.date):
        version = version.isoformat()
    if isinstance(version, str):
        if version in HOT_VERSIONS:
            return version
        if version in RELEASE_NAMES:
            return RELEASE_NAMES[version]
    accepted = ", ".join(HOT_VERSIONS + tuple(RELEASE_NAMES))
    raise StackValidationFailed(
        f"unknown version {version!r}; accepted: {accepted}", path="heat_template_version"
    )


def _parse_environment(environment):
    if environment is None:
        environment = {}
    elif not isinstance(environment, Mapping):
        environment = loader.load(environment)
    for key in environment:
        if key not in ENVIRONMENT_KEYS:
            raise StackValidationFailed(
                f"unknown environment section; expected one of {sorted(ENVIRONMENT_KEYS)}",
                path=f"environment.{key}",
            )
    parsed = {
        key: _mapping(environment.get(key), f"environment.{key}", key) for key in ENVIRONMENT_KEYS
    }
    for alias, target in parsed["resource_registry"].items():
        if not isinstance(target, str) or not target:
            raise StackValidationFailed(
                "only 'Type: OtherType' and 'Type: file.yaml' entries are supported",
                path=f"environment.resource_registry.{alias}",
            )
    return parsed


def map_type(type_name, registry):
    """Follow resource_registry aliases from ``type_name`` to the final type name."""
    seen = [type_name]
    while type_name in registry and not is_template_file_type(type_name):
        type_name = registry[type_name]
        if type_name in seen:
            loop = " -> ".join([*seen, type_name])
            raise StackValidationFailed(
                f"resource_registry aliases loop: {loop}", path="environment.resource_registry"
            )
        seen.append(type_name)
    return type_name


def _parse_depends_on(value, path):
    if value is None:
        return ()
    names = [value] if isinstance(value, str) else value
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise StackValidationFailed(
            "depends_on must be a resource name or a list of names", path=path
        )
    return tuple(dict.fromkeys(names))  # drop duplicates, keep order


def _parse_deletion_policy(value, path):
    if value is None:
        return "Delete"
    text = value.capitalize() if isinstance(value, str) else value
    if text == "Snapshot":
        raise StackValidationFailed("deletion_policy Snapshot is not supported", path=path)
    if text not in DELETION_POLICIES:
        raise StackValidationFailed(
            f"deletion_policy must be Delete or Retain, got {value!r}", path=path
        )
    return text


def _parse_resource(name, spec, registry):
    path = f"resources.{name}"
    if not isinstance(spec, Mapping):
        raise StackValidationFailed("resource must be a mapping", path=path)
    for key in spec:
        if key not in RESOURCE_KEYS:
            raise StackValidationFailed(
                f"unknown key; expected one of {sorted(RESOURCE_KEYS - {'external_id'})}",
                path=f"{path}.{key}",
            )
    for key in ("condition", "external_id"):
        if key in spec:
            raise StackValidationFailed(f"{key} is not supported", path=f"{path}.{key}")
    type_name = spec.get("type")
    if not isinstance(type_name, str) or not type_name:
        raise StackValidationFailed("resource type must be a non-empty string", path=f"{path}.type")
    return ResourceDefinition(
        name=name,
        type=map_type(type_name, registry),
        properties=_mapping(spec.get("properties"), f"{path}.properties", "properties"),
        depends_on=_parse_depends_on(spec.get("depends_on"), f"{path}.depends_on"),
        deletion_policy=_parse_deletion_policy(
            spec.get("deletion_policy"), f"{path}.deletion_policy"
        ),
        metadata=_mapping(spec.get("metadata"), f"{path}.metadata", "metadata"),
        update_policy=_mapping(spec.get("update_policy"), f"{path}.update_policy", "update_policy"),
    )


def _parse_output(name, spec):
    path = f"outputs.{name}"
    if not isinstance(spec, Mapping):
        raise StackValidationFailed("output must be a mapping", path=path)
    for key in spec:
        if key not in OUTPUT_KEYS:
            raise StackValidationFailed(
                "unknown key; expected value or description", path=f"{path}.{key}"
            )
    if "condition" in spec:
        raise StackValidationFailed("condition is not supported", path=f"{path}.condition")
    if "value" not in spec:
        raise StackValidationFailed("output needs a value", path=path)
    description = "" if spec.get("description") is None else spec["description"]
    if not isinstance(description, str):
        raise StackValidationFailed("description must be a string", path=f"{path}.description")
    return OutputDefinition(name=name, value=spec["value"], description=description)


def _check_parameter_groups(groups, parameters):
    if groups is None:
        return
    if not isinstance(groups, list):
        raise StackValidationFailed("parameter_groups must be a list", path="parameter_groups")
    grouped = set()
    for index, group in enumerate(groups):
        path = f"parameter_groups[{index}]"
        if not isinstance(group, Mapping) or not isinstance(group.get("parameters"), list):
            raise StackValidationFailed("group must be a mapping with a parameters list", path=path)
        for name in group["parameters"]:
            if name not in parameters:
                raise StackValidationFailed(
                    f"parameter {name!r} is not declared", path=f"{path}.parameters"
                )
            if name in grouped:
                raise StackValidationFailed(
                    f"parameter {name!r} is in more than one group", path=f"{path}.parameters"
                )
            grouped.add(name)


class Template:
    """A checked HOT template.

    ``tmpl`` is usually a dict; anything :func:`loader.load` accepts works too.
    ``environment`` is a dict or YAML text with ``parameters``,
    ``parameter_defaults`` and ``resource_registry``.
    """

    def __init__(self, tmpl, files=None, environment=None):
        self.raw = loader.load(tmpl)
        self.files = loader.load_files(files)
        self.environment = _parse_environment(environment)
        for key in self.raw:
            if key not in SECTIONS:
                raise StackValidationFailed(
                    f"unknown section; expected one of {sorted(SECTIONS)}", path=str(key)
                )
        if "conditions" in self.raw:
            raise StackValidationFailed("conditions are not supported", path="conditions")
        self.version = _parse_version(self.raw)
        description = self.raw.get("description")
        description = "" if description is None else description
        if not isinstance(description, str):
            raise StackValidationFailed("description must be a string", path="description")
        self.description = description
        self.parameters = parse_parameters(self.raw.get("parameters"))
        _check_parameter_groups(self.raw.get("parameter_groups"), self.parameters)
        registry = self.environment["resource_registry"]
        self.resources = {
            str(name): _parse_resource(str(name), spec, registry)
            for name, spec in _mapping(self.raw.get("resources"), "resources", "resources").items()
        }
        self.outputs = {
            str(name): _parse_output(str(name), spec)
            for name, spec in _mapping(self.raw.get("outputs"), "outputs", "outputs").items()
        }

    def dependencies(self):
        """Return ``{resource: set of resources it requires}``: its depends_on plus every
        get_resource / get_attr target in its properties and metadata."""
        return {
            name: set(definition.depends_on)
            | functions.references(definition.properties)
            | functions.references(definition.metadata)
            for name, definition in self.resources.items()
        }

    def __repr__(self):
        return f"<Template {self.version} with {len(self.resources)} resources>"
