"""Heat's ``heat.engine.translation``: rules a plugin's
``translation_rules(properties)`` returns to rewrite its properties before
they are validated -- a deprecated property moved to its successor (ADD,
REPLACE), dropped (DELETE), or a name looked up through a client plugin
(RESOLVE).

Heat applies the rules lazily, as each property is read; here they are
applied to the values at once, in Heat's order (ADD, REPLACE, RESOLVE,
DELETE), which gives the same values. A path goes into every item of a
list on its way (``[networks, port]`` is each network's ``port``).
"""

import logging

from nestedflow import exceptions

LOG = logging.getLogger(__name__)


class TranslationRule:
    RULE_KEYS = (ADD, REPLACE, DELETE, RESOLVE) = ("Add", "Replace", "Delete", "Resolve")
    _ORDER = (ADD, REPLACE, RESOLVE, DELETE)

    def __init__(self, properties, rule, translation_path, value=None, value_name=None,
                 value_path=None, client_plugin=None, finder=None, entity=None,
                 custom_value_path=None):
        self.properties = properties
        self.rule = rule
        self.translation_path = translation_path
        self.value = value or None
        self.value_name = value_name
        self.value_path = value_path
        self.client_plugin = client_plugin
        self.finder = finder
        self.entity = entity
        self.custom_value_path = custom_value_path
        self.validate()

    def validate(self):
        """Heat's checks of a rule's arguments (ValueError)."""
        if self.rule not in self.RULE_KEYS:
            raise ValueError(f"There is no rule {self.rule}. List of allowed rules is: "
                             + ", ".join(self.RULE_KEYS) + ".")
        if not isinstance(self.translation_path, list) or not self.translation_path:
            raise ValueError('"translation_path" should be non-empty list with path to '
                             "translate.")
        given = [self.value_path, self.value, self.value_name]
        if sum(item is not None for item in given) > 1:
            raise ValueError('"value_path", "value" and "value_name" are mutually exclusive '
                             "and cannot be specified at the same time.")
        if self.rule == self.ADD and self.value is not None and not isinstance(self.value,
                                                                              list):
            raise ValueError('"value" must be list type when rule is Add.')
        if self.rule == self.RESOLVE and not (self.client_plugin or self.finder):
            raise ValueError(f'"client_plugin" and "finder" should be specified for '
                             f"{self.RESOLVE} rule")

    def __lt__(self, other):
        return self._ORDER.index(self.rule) < self._ORDER.index(other.rule)

    def get_value_absolute_path(self, full_value_name=False):
        path = []
        if self.value_name:
            if full_value_name:
                path.extend(self.translation_path[:-1])
            path.append(self.value_name)
        elif self.value_path:
            path.extend(self.value_path)
        if self.custom_value_path:
            path.extend(self.custom_value_path)
        return path


def _containers(data, path):
    """The maps holding the last key of ``path``, entering lists item by item."""
    found = [data]
    for key in path:
        step = []
        for container in found:
            value = container.get(key) if isinstance(container, dict) else None
            if isinstance(value, list):
                step.extend(item for item in value if isinstance(item, dict))
            elif isinstance(value, dict):
                step.append(value)
        found = step
    return found


def _read(data, path):
    value = data
    for position, key in enumerate(path):
        if isinstance(value, list):
            return [_read(item, path[position:]) for item in value]
        if not isinstance(value, dict):
            return None
        value = value.get(key)
    return value


class Translation:
    """The rules of one resource and their application to its values."""

    def __init__(self, properties=None):
        self.properties = properties
        self._rules = []
        self._client_resolve = True
        self._ignore_resolve_error = False

    def set_rules(self, rules, client_resolve=True, ignore_resolve_error=False):
        # A RESOLVE needs the cloud: skipped while validating, as in Heat.
        self._rules = sorted(rule for rule in rules or ()
                             if client_resolve or rule.rule != TranslationRule.RESOLVE)
        self._client_resolve = client_resolve
        self._ignore_resolve_error = ignore_resolve_error

    def has_translation(self, key):
        return any(".".join(rule.translation_path) == key for rule in self._rules)

    def apply(self, data):
        """A copy of ``data`` with every rule applied."""
        data = {key: value for key, value in (data or {}).items()}
        for rule in self._rules:
            *parents, key = rule.translation_path
            for container in _containers(data, parents):
                self._apply(rule, data, container, key)
        return data

    def _apply(self, rule, data, container, key):
        if rule.rule == TranslationRule.DELETE:
            container.pop(key, None)
        elif rule.rule == TranslationRule.ADD:
            current = container.get(key)
            if current is None:
                current = []
            if not isinstance(current, list):
                raise ValueError("Incorrect translation rule using - cannot resolve Add "
                                 f'rule for non-list translation value "{key}".')
            added = rule.value
            if added is None and rule.value_name:
                added = container.get(rule.value_name)
            elif added is None and rule.value_path:
                added = _read(data, rule.get_value_absolute_path())
            if added is not None:
                current = current + (added if isinstance(added, list) else [added])
            container[key] = current
        elif rule.rule == TranslationRule.REPLACE:
            self._replace(rule, data, container, key)
        elif container.get(key):
            container[key] = self._resolve(rule, container[key])

    @staticmethod
    def _replace(rule, data, container, key):
        if rule.value_name is not None:
            source, holder, source_key = container.get(rule.value_name), container, \
                rule.value_name
        elif rule.value_path:
            path = rule.get_value_absolute_path()
            holder = _containers(data, path[:-1])
            holder = holder[0] if len(holder) == 1 else None
            source_key = path[-1]
            source = holder.get(source_key) if holder is not None else None
        else:
            source, holder, source_key = rule.value, None, None
        if source is not None and holder is not None and container.get(key) is not None:
            raise exceptions.ResourcePropertyConflict(
                ".".join(rule.translation_path),
                ".".join(rule.get_value_absolute_path(full_value_name=True)))
        if source is not None:
            container[key] = source
        if holder is not None:
            # The replaced property reads as unset from now on (Heat's
            # resolved_translations[value_path] = None).
            holder.pop(source_key, None)

    def _resolve(self, rule, value):
        if isinstance(value, list):
            return [self._resolve(rule, item) for item in value]
        finder = getattr(rule.client_plugin, rule.finder)
        try:
            return finder(rule.entity, value) if rule.entity else finder(value)
        except Exception as error:
            if not self._ignore_resolve_error:
                raise
            LOG.info("Ignoring error in RESOLVE translation: %s", error)
            return value
