"""Cell values that print one way for people and another for programs.

cliff's ``table`` and ``value`` formatters show ``human_readable()``;
``json``, ``yaml``, ``csv`` and ``shell`` get ``machine_readable()``.
"""

import datetime

from cliff import columns


def _yaml(value):
    import yaml  # only when a structure is shown as a table

    return yaml.safe_dump(value, default_flow_style=False, sort_keys=True).rstrip("\n")


class Empty(columns.FormattableColumn):
    """No value: a blank cell for people, null for programs."""

    def human_readable(self):
        return ""


class Timestamp(columns.FormattableColumn):
    """A datetime: seconds for people; for programs, Heat's API format
    (``YYYY-MM-DDTHH:MM:SSZ``, heat/engine/api.py ``heat_timeutils``), what
    heatclient's JSON, YAML and CSV carry."""

    def human_readable(self):
        if self._value is None:
            return ""
        return self._value.isoformat(sep=" ", timespec="seconds")

    def machine_readable(self):
        if isinstance(self._value, datetime.datetime):
            return self._value.strftime("%Y-%m-%dT%H:%M:%SZ")
        return self._value


class Structure(columns.FormattableColumn):
    """A dict or list: YAML in a table, the structure itself for programs."""

    def human_readable(self):
        if self._value in (None, {}, []):
            return ""
        return _yaml(self._value)


class Json(columns.FormattableColumn):
    """A structure as heatclient's ``JsonColumn`` shows it in a table
    (heatclient/common/utils.py ``json_formatter``: two-space indent)."""

    def human_readable(self):
        import json

        return json.dumps(self._value, indent=2, ensure_ascii=False, separators=(", ", ": "))


class Outputs(columns.FormattableColumn):
    """A stack's outputs as heatclient prints them: one ``name: value`` per
    line, structured values as indented YAML."""

    def human_readable(self):
        lines = []
        for name in sorted(self._value or {}):
            value = self._value[name]
            if isinstance(value, (dict, list)) and value:
                body = _yaml(value).replace("\n", "\n  ")
                lines.append(f"{name}:\n  {body}")
            else:
                lines.append(f"{name}: {'' if value is None else value}")
        return "\n".join(lines)


class JobList(columns.FormattableColumn):
    """The jobs a conductor holds: one per line for people."""

    def human_readable(self):
        return "\n".join(f"{j['action']} {j['stack_id']} (attempt {j['attempts']})"
                         for j in self._value) or "-"


def cell(value):
    """Wrap ``value`` for cliff when people and programs should see it differently."""
    if value is None:
        return Empty(None)
    if isinstance(value, datetime.datetime):
        return Timestamp(value)
    if isinstance(value, (dict, list)):
        return Structure(value)
    return value


def row(obj, fields):
    """The values of ``fields`` of a view (attributes) as cliff cells."""
    return tuple(cell(getattr(obj, f, None)) for f in fields)
