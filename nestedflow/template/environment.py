"""Stack environments as Heat's: parsing, merging, the resource registry and
what a child stack inherits.

Follows heat/common/environment_format.py (sections, empty sections refused),
heat/common/environment_util.py (several environments merged in order, with
``parameter_merge_strategies``) and heat/engine/environment.py (registry
lookup: per-resource entries, exact aliases, ``*`` wildcards; the child
environment of a nested stack).
"""

import copy
import fnmatch
from collections.abc import Mapping

from nestedflow.exceptions import StackValidationFailed
from nestedflow.template import loader

SECTIONS = (
    PARAMETERS,
    RESOURCE_REGISTRY,
    PARAMETER_DEFAULTS,
    ENCRYPTED_PARAM_NAMES,
    EVENT_SINKS,
    PARAMETER_MERGE_STRATEGIES,
) = (
    "parameters",
    "resource_registry",
    "parameter_defaults",
    "encrypted_param_names",
    "event_sinks",
    "parameter_merge_strategies",
)
#: nestedflow's own sections, kept only when given: ``checks``
#: (nestedflow.checks.spec) adds checks to a template without editing it.
EXTRA_SECTIONS = (CHECKS,) = ("checks",)
MERGE_STRATEGIES = (OVERWRITE, MERGE, DEEP_MERGE) = ("overwrite", "merge", "deep_merge")
#: Registry key Heat uses for update restrictions; nestedflow has none, and
#: ignoring it would change what the user asked to keep.
_UNSUPPORTED_REGISTRY_KEYS = ("restricted_actions",)
#: Heat's breakpoints (heat/engine/environment.py HOOK_TYPES), set per
#: resource under ``resource_registry: resources: <name>: hooks:``.
HOOKS = "hooks"
HOOK_TYPES = ("pre-create", "pre-update", "pre-delete",
              "post-create", "post-update", "post-delete")
_TEMPLATE_SUFFIXES = (".yaml", ".yml", ".template")


def _is_template_file(name):
    return name.endswith(_TEMPLATE_SUFFIXES)


def parse(environment, name=None):
    """One environment (a mapping, YAML/JSON text or a path) as a checked dict.

    As Heat's environment_format.parse: unknown sections and empty (null)
    sections are refused. ``event_sinks`` is refused unless empty: nestedflow
    has no event sink plugins, and dropping the sink would lose events.
    """
    where = "environment" if name is None else f"environment {name}"
    if environment is None:
        return {}
    env = loader.load(environment, name=name or "environment")
    for section, value in env.items():
        if section not in SECTIONS + EXTRA_SECTIONS:
            raise StackValidationFailed(
                f"{where} has wrong section {section!r}; "
                f"expected one of {list(SECTIONS + EXTRA_SECTIONS)}",
                path=f"environment.{section}")
        if value is None:
            raise StackValidationFailed(f"{where} has empty section {section!r}",
                                        path=f"environment.{section}")
    for section in (PARAMETERS, PARAMETER_DEFAULTS, RESOURCE_REGISTRY,
                    PARAMETER_MERGE_STRATEGIES, CHECKS):
        if section in env and not isinstance(env[section], Mapping):
            raise StackValidationFailed(f"{section} must be a mapping",
                                        path=f"environment.{section}")
    if env.get(EVENT_SINKS):
        raise StackValidationFailed(
            "event sinks are not supported (no event sink plugin is installed)",
            path=f"environment.{EVENT_SINKS}")
    for key, strategy in (env.get(PARAMETER_MERGE_STRATEGIES) or {}).items():
        if strategy not in MERGE_STRATEGIES:
            raise StackValidationFailed(
                f"unknown merge strategy {strategy!r}; expected one of {list(MERGE_STRATEGIES)}",
                path=f"environment.{PARAMETER_MERGE_STRATEGIES}.{key}")
    _check_registry(env.get(RESOURCE_REGISTRY) or {}, f"environment.{RESOURCE_REGISTRY}")
    return env


def _check_registry(registry, path):
    for key, value in registry.items():
        here = f"{path}.{key}"
        if not isinstance(key, str):
            raise StackValidationFailed(
                f"must be a resource type or name, not {type(key).__name__}", path=here)
        if key in _UNSUPPORTED_REGISTRY_KEYS:
            raise StackValidationFailed(f"{key} are not supported", path=here)
        if key == HOOKS and path.count(".resources"):
            _check_hooks(value, here)
            continue
        if value is None or (isinstance(value, str) and value):
            continue
        if isinstance(value, Mapping) and (key == "resources" or path.count(".resources")):
            _check_registry(value, here)
            continue
        raise StackValidationFailed(
            "must be a resource type, a template file name or null", path=here)


def _check_hooks(value, path):
    # Heat's is_hook_definition: one hook type or a list of them.
    hooks = [value] if isinstance(value, str) else value
    if not isinstance(hooks, list) or not hooks or not all(h in HOOK_TYPES for h in hooks):
        raise StackValidationFailed(
            f'Invalid hook type "{value}" for resource breakpoint, acceptable hook types '
            f"are: {HOOK_TYPES}", path=path)


def matches_hook(registry, resource_name, hook):
    """Does the registry set ``hook`` on ``resource_name`` (Heat's
    ResourceRegistry.matches_hook: any ``resources`` entry whose name
    pattern matches, ``*`` wildcards included)? A nested stack's registry
    holds the entries narrowed to it (:func:`child_environment`)."""
    for pattern, entry in ((registry or {}).get("resources") or {}).items():
        if isinstance(entry, Mapping) and HOOKS in entry and fnmatch.fnmatchcase(
                resource_name, pattern):
            hooks = entry[HOOKS]
            if hook == hooks or (isinstance(hooks, list) and hook in hooks):
                return True
    return False


def normalise(environment, param_types=None):
    """The environment a stack stores: one or several environments (a list is
    merged in order, as Heat merges ``environment_files``) with every section
    present. ``param_types`` ({name: HOT type}) drives merge strategies."""
    if isinstance(environment, (list, tuple)):
        env = merge([parse(e) for e in environment], param_types)
    else:
        env = parse(environment)
        env.pop(PARAMETER_MERGE_STRATEGIES, None)  # meaningful only while merging
    result = {
        PARAMETERS: dict(env.get(PARAMETERS) or {}),
        PARAMETER_DEFAULTS: dict(env.get(PARAMETER_DEFAULTS) or {}),
        RESOURCE_REGISTRY: _drop_nulls(env.get(RESOURCE_REGISTRY) or {}),
    }
    for section in (ENCRYPTED_PARAM_NAMES, EVENT_SINKS):
        if env.get(section):
            result[section] = env[section]
    if CHECKS in env:
        result[CHECKS] = dict(env[CHECKS])
    return result


def _drop_nulls(registry):
    """Apply ``Type: null`` (and ``Prefix*: null``) removals, as Heat's registry
    does on load: the entry, or every entry with the prefix, goes."""
    result = {}
    for key, value in registry.items():
        if value is None:
            if key.endswith("*"):
                for other in [k for k in result if k.startswith(key[:-1])]:
                    del result[other]
            else:
                result.pop(key, None)
        elif isinstance(value, Mapping):
            result[key] = _drop_nulls(value)
        else:
            result[key] = value
    return result


def merge(environments, param_types=None):
    """Merge parsed environments in order, as heat.common.environment_util.
    merge_environments: parameters and parameter_defaults per each file's
    ``parameter_merge_strategies`` (overwrite by default), other sections
    key by key, later files winning."""
    param_types = param_types or {}
    merged = {PARAMETERS: {}, PARAMETER_DEFAULTS: {}, RESOURCE_REGISTRY: {}}
    chosen = {}  # parameter -> strategy, fixed by the first file naming it
    for index, env in enumerate(environments):
        env = dict(env)
        strategies = env.pop(PARAMETER_MERGE_STRATEGIES, None) or {}
        for section, value in env.items():
            if not value:
                continue
            if section in (PARAMETERS, PARAMETER_DEFAULTS):
                _merge_parameters(merged[section], value, param_types, strategies, chosen,
                                  f"environment[{index}].{section}")
            elif isinstance(value, Mapping):
                target = merged.setdefault(section, {})
                target.update({k: v for k, v in value.items() if v is not None})
            else:
                merged.setdefault(section, [])
                merged[section] = list(merged[section]) + list(value)
    return merged


def _merge_parameters(old, new, param_types, strategies, chosen, path):
    for key, value in new.items():
        if value is None:
            continue
        strategy = strategies.get(key, chosen.get(key, strategies.get("default", OVERWRITE)))
        if key in param_types:
            if chosen.setdefault(key, strategy) != strategy:
                raise StackValidationFailed(
                    f"conflicting merge strategy {strategy!r} for parameter {key!r} "
                    f"(an earlier environment chose {chosen[key]!r})", path=f"{path}.{key}")
        if strategy == OVERWRITE or key not in old or key not in param_types:
            old[key] = copy.deepcopy(value)
            continue
        old[key] = _merge_value(old[key], value, param_types[key], strategy == DEEP_MERGE,
                                f"{path}.{key}")


def _merge_value(old, new, param_type, deep, path):
    if param_type == "json":
        if not isinstance(new, Mapping) or not isinstance(old, Mapping):
            raise StackValidationFailed("a merged json parameter must be a map", path=path)
        return _merge_map(dict(old), new, deep)
    if param_type == "comma_delimited_list":
        if isinstance(new, list):
            return (old.split(",") if isinstance(old, str) else list(old)) + new
        return ",".join([old if isinstance(old, str) else ",".join(old), str(new)])
    if param_type == "string":
        return f"{old}{new}"
    if param_type == "number":
        return old + new
    raise StackValidationFailed(f"parameters of type {param_type} cannot be merged", path=path)


def _merge_map(old, new, deep):
    # heat.common.environment_util.merge_map: strings concatenate and lists
    # extend under deep_merge; otherwise the new value replaces the old.
    for key, value in new.items():
        if value is None:
            continue
        current = old.get(key)
        if not deep or not current:
            old[key] = value
        elif isinstance(value, Mapping):
            old[key] = _merge_map(dict(current), value, deep)
        elif isinstance(value, list):
            old[key] = list(current) + value
        elif isinstance(value, str):
            old[key] = f"{current}{value}"
        else:
            old[key] = value
    return old


def update(stored, new):
    """A PATCH update's environment: ``new`` loaded over the stored one, as
    Heat's Environment.load (registry entries merged, parameters updated)."""
    if not new:
        return stored
    new = parse(new)
    result = copy.deepcopy(dict(stored or {}))
    for section in (PARAMETERS, PARAMETER_DEFAULTS, CHECKS):
        if section in new or section != CHECKS:
            result.setdefault(section, {}).update(new.get(section) or {})
    result[RESOURCE_REGISTRY] = _drop_nulls(
        _deep_update(result.get(RESOURCE_REGISTRY) or {}, new.get(RESOURCE_REGISTRY) or {}))
    return result


def _deep_update(old, new):
    result = dict(old)
    for key, value in new.items():
        if isinstance(value, Mapping) and isinstance(result.get(key), Mapping):
            result[key] = _deep_update(result[key], value)
        else:
            result[key] = value
    return result


def child_environment(parent, resource_name=None):
    """What a nested stack made by ``resource_name`` inherits (Heat's
    get_child_environment): the registry and parameter_defaults, not the
    parameters (the child's come from the resource's properties); the
    registry's ``resources`` section narrowed to the entries for
    ``resource_name`` (wildcard patterns first, then the exact name)."""
    parent = parent or {}
    registry = copy.deepcopy(dict(parent.get(RESOURCE_REGISTRY) or {}))
    per_resource = registry.pop("resources", None) or {}
    if resource_name is not None:
        narrowed = {}
        for pattern, entries in per_resource.items():
            if pattern != resource_name and fnmatch.fnmatchcase(resource_name, pattern):
                narrowed.update(entries)
        narrowed.update(per_resource.get(resource_name) or {})
        if narrowed:
            registry["resources"] = narrowed
    child = {
        PARAMETERS: {},
        PARAMETER_DEFAULTS: copy.deepcopy(dict(parent.get(PARAMETER_DEFAULTS) or {})),
        RESOURCE_REGISTRY: registry,
    }
    if parent.get(CHECKS):
        # Checks added to a template without editing it reach its nested
        # templates too: their resources match the same names and patterns.
        child[CHECKS] = copy.deepcopy(dict(parent[CHECKS]))
    return child


def resolve_type(registry, type_name, resource_name=None):
    """Follow ``registry`` from ``type_name`` to the type a resource is made of.

    Candidates, as heat.engine.environment.ResourceRegistry: the entry for this
    resource under ``resources``, the exact alias, and every ``Prefix*``
    wildcard matching (a many-to-one wildcard does not match its own target);
    the most specific (longest path) wins, then the lowest key. Aliases are
    followed until no entry matches; a template file name ends the chain.
    """
    seen = [type_name]
    while True:
        target = _lookup(registry, type_name, resource_name)
        if target is None:
            return type_name
        if target in seen:
            loop = " -> ".join([*seen, target])
            raise StackValidationFailed(f"resource_registry aliases loop: {loop}",
                                        path=f"environment.{RESOURCE_REGISTRY}")
        seen.append(target)
        if _is_template_file(target):
            return target
        type_name = target


def _lookup(registry, type_name, resource_name):
    if not registry:
        return None
    candidates = []
    specific = (registry.get("resources") or {}).get(resource_name) if resource_name else None
    if isinstance(specific, Mapping) and isinstance(specific.get(type_name), str):
        candidates.append(((-3, type_name), specific[type_name]))
    exact = registry.get(type_name)
    if isinstance(exact, str):
        candidates.append(((-1, type_name), exact))
    for key, value in registry.items():
        if (key.endswith("*") and isinstance(value, str) and type_name != value
                and type_name.startswith(key[:-1]) and key != type_name):
            target = value[:-1] + type_name[len(key) - 1:] if value.endswith("*") else value
            candidates.append(((-1, key), target))
    if not candidates:
        return None
    return min(candidates, key=lambda item: item[0])[1]
