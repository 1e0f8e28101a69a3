"""Whole-template validation: types, properties, references and dependency order."""

import heapq

from nestedflow.exceptions import DependencyCycle, StackValidationFailed, UnknownResourceType
from nestedflow.properties.schema import UNRESOLVED, StackSummary, validate_properties
from nestedflow.template import functions
from nestedflow.template.functions import sizes


def _lookup_classes(template, type_lookup):
    classes = {}
    for name, definition in template.resources.items():
        try:
            classes[name] = type_lookup(definition.type)
        except UnknownResourceType:
            raise UnknownResourceType(definition.type, path=f"resources.{name}.type") from None
    return classes


def _check_reference(ref, classes, owner, disabled):
    """Raise if ``ref`` (found in resource ``owner``, or in an output if None) is invalid."""
    if ref.resource not in classes:
        if ref.kind == "Ref":
            return  # a parameter reference
        if ref.resource in disabled:
            # Heat: the resource does not exist, so the reference is invalid
            # (InvalidTemplateReference) unless an ``if`` leaves it out.
            raise StackValidationFailed(
                f"resource {ref.resource!r} does not exist: its condition "
                f"{disabled[ref.resource]!r} is false (guard the reference with if)",
                path=ref.path)
        raise StackValidationFailed(f"unknown resource {ref.resource!r}", path=ref.path)
    if ref.resource == owner:
        raise StackValidationFailed(f"resource {owner!r} refers to itself", path=ref.path)
    if ref.kind != "get_attr" or ref.attribute is None:
        return
    target = classes[ref.resource]
    # ``show``: Heat's base attribute of every resource type.
    if ref.attribute == "show" or getattr(target, "dynamic_attributes", False):
        return
    if ref.attribute not in (getattr(target, "attributes_schema", None) or {}):
        raise StackValidationFailed(
            f"resource {ref.resource} has no attribute {ref.attribute!r}", path=ref.path
        )


def _check_depends_on(name, definition, classes, disabled):
    path = f"resources.{name}.depends_on"
    for target in definition.depends_on:
        if target == name:
            raise StackValidationFailed(f"resource {name!r} depends on itself", path=path)
        if target not in classes and target not in disabled:
            raise StackValidationFailed(f"unknown resource {target!r}", path=path)


def _check_deletion_policy(definition, cls, path):
    # Heat (Resource.validate_deletion_policy) takes Snapshot only from types
    # with a snapshot delete (``handle_snapshot_delete``; no built-in has one,
    # as in Heat). A type without a property schema (OS::Heat::None) is not
    # validated at all, as Heat's NoneResource.validate, so it takes any
    # policy (and deletes).
    if definition.deletion_policy == "Snapshot" and cls.properties_schema is not None and (
            not callable(getattr(cls, "handle_snapshot_delete", None))):
        raise StackValidationFailed(
            f"deletion_policy Snapshot is not supported by {definition.type}",
            path=f"{path}.deletion_policy")


def _validation_context(template, parameters):
    # Other resources do not exist yet: their ids and attributes are run-time
    # values; so is a parent's resource_facade (facade None).
    return template.context(
        parameters,
        get_resource=lambda name: UNRESOLVED,
        get_attr=lambda name, attr, path_list: UNRESOLVED,
    )


def _checked_properties(cls, name, properties, path):
    checked = getattr(cls, "checked_properties", None)
    if checked is not None:
        return checked(name, properties, path)
    schema = getattr(cls, "properties_schema", None)
    return properties if schema is None else validate_properties(schema, properties, path)


def validate(template, parameters, type_lookup, stack=None):
    """Validate ``template`` with resolved ``parameters``; return resource names in
    dependency order (every resource after those it requires).

    ``type_lookup(type_name)`` returns the resource class or raises
    UnknownResourceType. A class whose ``properties_schema`` is None has its
    properties resolved but not checked against a schema. ``stack``, a
    :class:`~nestedflow.properties.schema.StackSummary`, is what a type's
    ``validate_resource`` learns of the stack (by default: its resource names).
    """
    template.apply_conditions(parameters)
    if stack is None:
        stack = StackSummary(resource_names=frozenset(template.resources))
    classes = _lookup_classes(template, type_lookup)
    ctx = _validation_context(template, parameters)
    for name, definition in template.resources.items():
        _check_depends_on(name, definition, classes, template.disabled)
        base = f"resources.{name}"
        for section in ("properties", "metadata"):
            snippet = getattr(definition, section)
            for ref in functions.find_references(snippet, f"{base}.{section}"):
                _check_reference(ref, classes, name, template.disabled)
        properties = functions.resolve(definition.properties, ctx, f"{base}.properties")
        functions.resolve(definition.metadata, ctx, f"{base}.metadata")
        functions.resolve(definition.update_policy, ctx, f"{base}.update_policy")
        _check_deletion_policy(definition, classes[name], base)
        properties = _checked_properties(classes[name], name, properties, f"{base}.properties")
        validate_resource = getattr(classes[name], "validate_resource", None)
        if validate_resource is not None:
            validate_resource(name, properties, stack, base)
        # Types that contain other resources (groups) check what they contain.
        validate_nested = getattr(classes[name], "validate_nested", None)
        if validate_nested is not None:
            validate_nested(properties, type_lookup, f"{base}.properties")
    for name, output in template.outputs.items():
        path = f"outputs.{name}.value"
        functions.check_functions(output.value, ctx, path)
        for ref in functions.find_references(output.value, path):
            _check_reference(ref, classes, None, template.disabled)
        try:
            functions.resolve(output.value, ctx, path)
        except StackValidationFailed as error:
            # As in Heat (output.validate checks functions, it does not
            # resolve them): an output whose value fails is None with an
            # error, it does not refuse the template -- unless it asks for
            # more than a function may build: that is hostile input.
            if sizes.is_too_large(error):
                raise
    return dependency_order(template.dependencies(), list(template.resources))


def dependency_order(requires, names=None):
    """Topologically sort ``requires`` ({name: names it requires}).

    Among resources that are ready at the same time, template order (``names``)
    wins, so the result is deterministic. Raises DependencyCycle.
    """
    names = list(names if names is not None else requires)
    position = {name: index for index, name in enumerate(names)}
    needed_by = {name: [] for name in names}
    waiting = {}
    for name in names:
        deps = {dep for dep in requires.get(name, ()) if dep in position}
        waiting[name] = len(deps)
        for dep in deps:
            needed_by[dep].append(name)
    ready = [position[name] for name in names if waiting[name] == 0]
    heapq.heapify(ready)
    order = []
    while ready:
        name = names[heapq.heappop(ready)]
        order.append(name)
        for dependent in needed_by[name]:
            waiting[dependent] -= 1
            if waiting[dependent] == 0:
                heapq.heappush(ready, position[dependent])
    if len(order) != len(names):
        remaining = [name for name in names if waiting[name] > 0]
        raise DependencyCycle(_find_cycle(requires, remaining, position))
    return order


def _find_cycle(requires, remaining, position):
    """Return one cycle among ``remaining`` as [a, b, ..., a] following 'requires' edges."""
    candidates = set(remaining)

    def successors(node):
        return sorted(
            (dep for dep in requires.get(node, ()) if dep in candidates), key=position.get
        )

    # Iterative DFS (a chain of thousands of resources must not hit the recursion limit).
    done = set()
    for start in remaining:
        if start in done:
            continue
        stack = [(start, iter(successors(start)))]
        on_path = {start: 0}
        while stack:
            node, children = stack[-1]
            child = next(children, None)
            if child is None:
                stack.pop()
                del on_path[node]
                done.add(node)
            elif child in on_path:
                cycle = [entry[0] for entry in stack[on_path[child] :]]
                # Start at the member that comes first in the template, for stable messages.
                first = min(range(len(cycle)), key=lambda i: position[cycle[i]])
                cycle = cycle[first:] + cycle[:first]
                return [*cycle, cycle[0]]
            elif child not in done:
                on_path[child] = len(stack)
                stack.append((child, iter(successors(child))))
    raise AssertionError("no cycle found among unsorted resources")  # pragma: no cover
