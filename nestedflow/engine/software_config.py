"""The software-config store: Heat's software configs and deployments.

The Engine methods of the same names follow Heat's
heat/engine/service_software_config.py (``SoftwareConfigService``) with
``context=`` in place of Heat's leading ``cnxt``, and answer in Heat's
dicts (heat/engine/api.py ``format_software_config``,
``format_software_deployment``). Configs are immutable: a change is a new
config. A config or deployment belongs to the project of the context that
made it; a scoped context sees only its project's (a deployment also by
its ``stack_user_project_id``), as heat/db/api.py filters them.

Not done as Heat does: pushing a server's deployments into the server
resource's metadata (Heat's ``_push_metadata_software_deployments``, for
os-collect-config's polling); :meth:`SoftwareConfigs.metadata_software_deployments`
answers the same list on request.
"""

import functools
import uuid

from nestedflow import exceptions, tenancy
from nestedflow.db.software_config import ALL_PROJECTS, SoftwareConfigStore
from nestedflow.resources.software_records import config_document, record_signal, update_deployment


def isotime(value):
    """Heat's heat/common/timeutils.py ``isotime``."""
    return value.strftime("%Y-%m-%dT%H:%M:%SZ") if value is not None else None


def format_software_config(row, detail=True, include_project=False):
    """Heat's ``format_software_config``."""
    if row is None:
        return None
    result = {"id": row.id, "name": row.name, "group": row.group,
              "creation_time": isotime(row.created_at)}
    if detail:
        config = row.config or {}
        for key in ("config", "inputs", "outputs", "options"):
            result[key] = config.get(key)
    if include_project:
        result["project"] = row.tenant
    return result


def format_software_deployment(row, config):
    """Heat's ``format_software_deployment``."""
    result = {"id": row.id, "server_id": row.server_id, "input_values": row.input_values,
              "output_values": row.output_values, "action": row.action,
              "status": row.status, "status_reason": row.status_reason,
              "config_id": config.id, "creation_time": isotime(row.created_at)}
    if row.updated_at:
        result["updated_time"] = isotime(row.updated_at)
    return result


def _project(context):
    """Whose rows ``context`` sees: its project's, or all (no context, admin)."""
    return context.project_id if tenancy.is_scoped(context) else ALL_PROJECTS


class SoftwareConfigMethods:
    """The Engine's software-config methods (see the module docstring): a
    base of :class:`nestedflow.Engine`, which gives them ``self.db``. They
    need the database only, not the engine's traversal machinery."""

    @functools.cached_property
    def _software_configs(self):
        return SoftwareConfigStore(self.db)

    # -- configs ------------------------------------------------------------

    def create_software_config(self, group, name, config, inputs, outputs, options,
                               context=None):
        stored = config_document(config, inputs, outputs, options)
        row = self._software_configs.create_config(
            name, group, stored, context.project_id if context is not None else None,
            str(uuid.uuid4()))
        return format_software_config(row)

    def show_software_config(self, config_id, context=None):
        return format_software_config(
            self._software_configs.get_config(config_id, _project(context)))

    def list_software_configs(self, limit=None, marker=None, context=None):
        include_project = context is not None and context.is_admin
        return [format_software_config(row, detail=False, include_project=include_project)
                for row in self._software_configs.list_configs(_project(context), limit, marker)]

    def delete_software_config(self, config_id, context=None):
        self._software_configs.delete_config(config_id, _project(context))

    # -- deployments --------------------------------------------------------

    def list_software_deployments(self, server_id=None, context=None):
        return [format_software_deployment(row, config) for row, config
                in self._software_configs.list_deployments(_project(context), server_id)]

    def metadata_software_deployments(self, server_id, context=None):
        """The configs deployed to the server, sorted by config name (Heat's)."""
        if not server_id:
            raise exceptions.StackValidationFailed("server_id must be specified",
                                                   path="server_id")
        pairs = self._software_configs.list_deployments(_project(context), server_id)
        configs = sorted((config for _, config in pairs), key=lambda c: c.name or "")
        return [format_software_config(config) for config in configs]

    def show_software_deployment(self, deployment_id, context=None):
        return format_software_deployment(
            *self._software_configs.get_deployment(deployment_id, _project(context)))

    def create_software_deployment(self, server_id, config_id, input_values, action, status,
                                   status_reason, stack_user_project_id, deployment_id=None,
                                   context=None):
        if stack_user_project_id is not None and len(stack_user_project_id) > 64:
            raise exceptions.StackValidationFailed(
                "should be no more than 64 characters", path="stack_user_project_id")
        values = {"config_id": config_id, "server_id": server_id,
                  "input_values": input_values,
                  "tenant": context.project_id if context is not None else None,
                  "stack_user_project_id": stack_user_project_id, "action": action,
                  "status": status, "status_reason": str(status_reason)}
        values["id"] = deployment_id if deployment_id is not None else str(uuid.uuid4())
        return format_software_deployment(
            *self._software_configs.create_deployment(values, _project(context)))

    def update_software_deployment(self, deployment_id, config_id, input_values,
                                   output_values, action, status, status_reason, updated_at,
                                   context=None):
        """Only the values given (truthy, as Heat's) change; ``updated_at``
        (ISO 8601) defaults to now."""
        return format_software_deployment(*update_deployment(
            self._software_configs, deployment_id, _project(context), config_id=config_id,
            input_values=input_values, output_values=output_values, action=action,
            status=status, status_reason=status_reason, updated_at=updated_at))

    def delete_software_deployment(self, deployment_id, context=None):
        self._software_configs.delete_deployment(deployment_id, _project(context))

    def signal_software_deployment(self, deployment_id, details, updated_at=None,
                                   context=None):
        """Record a deployment's signal: see :func:`record_signal`."""
        return record_signal(self._software_configs, deployment_id, details, updated_at,
                             _project(context))
