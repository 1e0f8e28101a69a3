"""A parsed HOT template: version, parameters, resources, outputs, environment."""

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field

from nestedflow.checks import spec as check_spec
from nestedflow.exceptions import StackValidationFailed
from nestedflow.template import environment as env_module
from nestedflow.template import functions, limits, loader
from nestedflow.template.functions.base import OMIT
from nestedflow.template.functions.conditions import Conditions
from nestedflow.template.functions.versions import CONDITIONS_SINCE, HOT_VERSIONS, RELEASE_NAMES
from nestedflow.template.parameters import parse_parameters

# Names other modules import from here.
__all__ = ["HOT_VERSIONS", "RELEASE_NAMES", "Template", "is_template_file_type"]

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
        "description",
        "condition",
        "external_id",
    }
)
#: Keys that only heat_template_version 2016-10-14 and later accept.
CONDITION_KEYS = frozenset({"condition", "external_id"})
OUTPUT_KEYS = frozenset({"value", "description", "condition"})
#: Snapshot is checked against the resource type by the validator.
DELETION_POLICIES = ("Delete", "Retain", "Snapshot")
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
    #: A condition name, a boolean or a condition function; None: always.
    condition: object = None
    description: str = ""
    #: Heat's external_id (a string or a function of parameters): the
    #: resource adopts that existing object (resources/external.py).
    external_id: object = None


@dataclass(frozen=True)
class OutputDefinition:
    """One entry of the ``outputs`` section; ``value`` is an unresolved snippet."""

    name: str
    value: object
    description: str = ""
    condition: object = None


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
    # Not a string (a date from yaml.safe_load): refused as Heat's get_version
    # does; limits.check_structure names it with a hint first.
    if isinstance(version, str):
        if version in HOT_VERSIONS:
            return version
        if version in RELEASE_NAMES:
            return RELEASE_NAMES[version]
    accepted = ", ".join(HOT_VERSIONS + tuple(RELEASE_NAMES))
    raise StackValidationFailed(
        f"unknown version {version!r}; accepted: {accepted}", path="heat_template_version"
    )


def _parse_environment(environment, raw_parameters):
    # Environments (parsing, merging, the registry) live in environment.py.
    types = {}
    if isinstance(raw_parameters, Mapping):
        types = {name: spec.get("type") for name, spec in raw_parameters.items()
                 if isinstance(spec, Mapping)}
    parsed = env_module.normalise(environment, types)
    if "checks" in parsed:
        check_spec.parse(parsed["checks"])  # rejects a bad check before anything is stored
    return parsed


def map_type(type_name, registry, resource_name=None):
    """Follow the resource_registry from ``type_name`` to the final type name."""
    return env_module.resolve_type(registry, type_name, resource_name)


def _parse_depends_on(value, path):
    if value is None:
        return ()
    names = [value] if isinstance(value, str) else value
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise StackValidationFailed(
            "depends_on must be a resource name or a list of names", path=path
        )
    return tuple(dict.fromkeys(names))  # drop duplicates, keep order


def _parse_deletion_policy(value, version, path):
    if value is None:
        return "Delete"
    if isinstance(value, Mapping):
        return value  # a function (get_param ...): resolved with the parameters
    text = value
    # Heat accepts the lower-case spellings from 2016-10-14 on.
    if isinstance(value, str) and version >= CONDITIONS_SINCE and value.islower():
        text = value.capitalize()
    if text not in DELETION_POLICIES:
        raise StackValidationFailed(
            f"deletion_policy must be Delete, Retain or Snapshot, got {value!r}", path=path
        )
    return text


def _check_condition_keys(spec, version, path):
    for key in CONDITION_KEYS & set(spec):
        if version < CONDITIONS_SINCE:
            raise StackValidationFailed(
                f"{key} needs heat_template_version {CONDITIONS_SINCE} or later; "
                f"this template is {version}", path=f"{path}.{key}")


def _parse_condition(value, path):
    if value is not None and not isinstance(value, (str, bool, Mapping)):
        raise StackValidationFailed(
            f"condition must be a condition name, a boolean or a condition function, "
            f"got {value!r}", path=path)
    return value


def _parse_resource(name, spec, registry, version):
    path = f"resources.{name}"
    if not isinstance(spec, Mapping):
        raise StackValidationFailed("resource must be a mapping", path=path)
    for key in spec:
        if key not in RESOURCE_KEYS:
            raise StackValidationFailed(
                f"unknown key; expected one of {sorted(RESOURCE_KEYS)}",
                path=f"{path}.{key}",
            )
    _check_condition_keys(spec, version, path)
    type_name = spec.get("type")
    if not isinstance(type_name, str) or not type_name:
        raise StackValidationFailed("resource type must be a non-empty string", path=f"{path}.type")
    external_id = spec.get("external_id")
    if external_id is not None:
        if not isinstance(external_id, (str, Mapping)):
            raise StackValidationFailed("external_id must be a string",
                                        path=f"{path}.external_id")
        if spec.get("depends_on"):
            # Heat: InvalidExternalResourceDependency (rsrc_defn.dependencies).
            raise StackValidationFailed(
                f"Invalid dependency with external {type_name} resource: {external_id}",
                path=f"{path}.depends_on")
    description = spec.get("description")
    return ResourceDefinition(
        name=name,
        type=map_type(type_name, registry, name),
        properties=_mapping(spec.get("properties"), f"{path}.properties", "properties"),
        depends_on=_parse_depends_on(spec.get("depends_on"), f"{path}.depends_on"),
        deletion_policy=_parse_deletion_policy(
            spec.get("deletion_policy"), version, f"{path}.deletion_policy"
        ),
        metadata=_mapping(spec.get("metadata"), f"{path}.metadata", "metadata"),
        update_policy=_mapping(spec.get("update_policy"), f"{path}.update_policy", "update_policy"),
        condition=_parse_condition(spec.get("condition"), f"{path}.condition"),
        description="" if description is None else str(description),
        external_id=external_id,
    )


def _parse_output(name, spec, version):
    path = f"outputs.{name}"
    if not isinstance(spec, Mapping):
        raise StackValidationFailed("output must be a mapping", path=path)
    for key in spec:
        if key not in OUTPUT_KEYS:
            raise StackValidationFailed(
                f"unknown key; expected one of {sorted(OUTPUT_KEYS)}", path=f"{path}.{key}"
            )
    _check_condition_keys(spec, version, path)
    if "value" not in spec:
        raise StackValidationFailed("output needs a value", path=path)
    description = "" if spec.get("description") is None else spec["description"]
    if not isinstance(description, str):
        raise StackValidationFailed("description must be a string", path=f"{path}.description")
    return OutputDefinition(name=name, value=spec["value"], description=description,
                            condition=_parse_condition(spec.get("condition"),
                                                       f"{path}.condition"))


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

    ``resources`` and ``outputs`` are the whole template until
    :meth:`apply_conditions` has evaluated the conditions with the stack's
    parameters; then resources whose condition is false are gone (listed in
    ``disabled``) and every ``if`` is replaced by the branch it picks.
    """

    def __init__(self, tmpl, files=None, environment=None, checked=False):
        # ``checked``: ``tmpl`` is a mapping loader.load returned (limits checked).
        self.raw = loader.load(tmpl, checked=checked)
        self.files = loader.load_files(files)
        self.environment = _parse_environment(environment, self.raw.get("parameters"))
        self.version = _parse_version(self.raw)
        for key in self.raw:
            if key not in SECTIONS:
                raise StackValidationFailed(
                    f"unknown section {key!r}; expected one of {sorted(SECTIONS)}",
                    path=str(key)
                )
        if "conditions" in self.raw and self.version < CONDITIONS_SINCE:
            raise StackValidationFailed(
                f"conditions needs heat_template_version {CONDITIONS_SINCE} or later; "
                f"this template is {self.version}", path="conditions")
        self.conditions = _mapping(self.raw.get("conditions"), "conditions", "conditions")
        description = self.raw.get("description")
        description = "" if description is None else description
        if not isinstance(description, str):
            raise StackValidationFailed("description must be a string", path="description")
        self.description = description
        limits.check_counts(self.raw.get("parameters"), self.raw.get("outputs"))
        self.parameters = parse_parameters(self.raw.get("parameters"))
        self.parameter_groups = self.raw.get("parameter_groups") or []
        _check_parameter_groups(self.raw.get("parameter_groups"), self.parameters)
        registry = self.environment["resource_registry"]
        self.resources = {
            str(name): _parse_resource(str(name), spec, registry, self.version)
            for name, spec in _mapping(self.raw.get("resources"), "resources", "resources").items()
        }
        self.outputs = {
            str(name): _parse_output(str(name), spec, self.version)
            for name, spec in _mapping(self.raw.get("outputs"), "outputs", "outputs").items()
        }
        #: name -> its condition, for resources left out by apply_conditions.
        self.disabled = {}
        self._applied = False

    def context(self, parameters, get_resource=None, get_attr=None, facade=None):
        """A ResolveContext for this template's version, files and conditions."""
        fields = {"parameters": parameters, "files": self.files or {},
                  "get_resource": get_resource, "get_attr": get_attr,
                  "version": self.version, "facade": facade}
        return functions.ResolveContext(conditions=Conditions(self.conditions, fields), **fields)

    def apply_conditions(self, parameters, facade=None):
        """Drop resources whose condition is false and expand every ``if``.

        As in Heat: a resource whose condition is false does not exist; an
        output whose condition is false has the value None; ``if`` is a macro,
        so references in the branch not taken make no dependency. A
        condition that cannot be evaluated yet (UNRESOLVED parameters) keeps
        the resource. Idempotent.
        """
        if self._applied:
            return
        ctx = self.context(parameters, facade=facade)
        ctx.conditions.validate()
        # Most templates hold no ``if``: nothing to expand, and walking every
        # property of every resource was most of a small stack's set-up.
        choosers = {name for name, handler in ctx.table.items()
                    if getattr(handler, "choose", None) is not None}
        expand = bool(choosers) and _mentions_any(
            [self.raw.get(section) for section in ("resources", "outputs")], choosers)
        resources = {}
        for name, definition in self.resources.items():
            path = f"resources.{name}"
            enabled = ctx.conditions.evaluate(definition.condition, f"{path}.condition")
            if enabled is False:
                self.disabled[name] = definition.condition
                continue
            if not expand:
                policy = self._deletion_policy(definition, ctx, path)
                resources[name] = (definition if policy == definition.deletion_policy
                                   else dataclasses.replace(definition, deletion_policy=policy))
                continue
            resources[name] = dataclasses.replace(
                definition,
                properties=_expanded(definition.properties, ctx, f"{path}.properties"),
                metadata=_expanded(definition.metadata, ctx, f"{path}.metadata"),
                update_policy=_expanded(definition.update_policy, ctx, f"{path}.update_policy"),
                deletion_policy=self._deletion_policy(definition, ctx, path),
                depends_on=definition.depends_on,
            )
        self.resources = resources
        outputs = {}
        for name, output in self.outputs.items():
            path = f"outputs.{name}"
            enabled = ctx.conditions.evaluate(output.condition, f"{path}.condition")
            value = None if enabled is False else output.value if not expand else (
                functions.expand_conditions(output.value, ctx, f"{path}.value"))
            outputs[name] = dataclasses.replace(output, value=None if value is OMIT else value)
        self.outputs = outputs
        self._applied = True

    def _deletion_policy(self, definition, ctx, path):
        policy = definition.deletion_policy
        if not isinstance(policy, Mapping):
            return policy
        value = functions.resolve(policy, ctx, f"{path}.deletion_policy")
        if not isinstance(value, str):
            return "Delete"  # still unknown (validating a child template)
        return _parse_deletion_policy(value, self.version, f"{path}.deletion_policy")

    def dependencies(self):
        """Return ``{resource: set of resources it requires}``: its depends_on plus every
        get_resource / get_attr target in its properties and metadata.

        depends_on a resource whose condition is false is dropped (Heat allows
        it: rsrc_defn.ResourceDefinition.dependencies).
        """
        return {
            # An external resource depends on nothing: its properties are
            # not used (Heat's rsrc_defn.dependencies).
            name: set() if definition.external_id is not None else
            {dep for dep in definition.depends_on if dep not in self.disabled}
            | functions.references(definition.properties)
            | functions.references(definition.metadata)
            for name, definition in self.resources.items()
        }

    def __repr__(self):
        return f"<Template {self.version} with {len(self.resources)} resources>"


def _mentions_any(data, keys):
    """Whether a mapping anywhere in ``data`` has one of ``keys`` as a key."""
    stack = [data]
    while stack:
        value = stack.pop()
        if isinstance(value, dict):
            if not keys.isdisjoint(value):
                return True
            stack.extend(value.values())
        elif isinstance(value, list):
            stack.extend(value)
        elif isinstance(value, Mapping):
            if any(key in value for key in keys):
                return True
            stack.extend(value.values())
    return False


def _expanded(snippet, ctx, path):
    value = functions.expand_conditions(snippet, ctx, path)
    return {} if value is OMIT else value
