"""The engine's RPC API: its versions, methods and wire format.

Every public :class:`nestedflow.Engine` method is an RPC method of the same
name taking the same keyword arguments; ``context`` travels as the message
context (oslo.context's ``to_dict()``), not as an argument. Results are
:mod:`nestedflow.engine.views` objects, sent as their ``to_dict()``.

Version history (a client pinned with ``version_cap`` sends each call at
the version that introduced the method and refuses newer methods; the
server accepts every call of its major version up to its minor)::

    1.0  create_stack(name, template, parameters, files, environment,
                      disable_rollback, timeout) -> Stack
         update_stack(stack_id, template, parameters, files, environment,
                      existing, disable_rollback) -> Stack
         delete_stack, suspend_stack, resume_stack, check_stack(stack_id) -> Stack
         cancel_update(stack_id, rollback) -> Stack
         get_stack(stack_id) -> Stack
         list_stacks(show_nested) -> [Stack]
         list_resources(stack_id, nested_depth) -> [Resource]
         list_events(stack_id, nested_depth) -> [Event]
         wait(stack_id, timeout) -> Stack   (the client calls it in slices of
                                             [rpc] wait_interval seconds)
    1.1  count_stacks(show_nested) -> int
    1.2  validate_template(template, files, environment, parameters) -> dict
         (Heat's validate answer)
    1.3  list_checks(stack_id, nested_depth, latest) -> [CheckResult]
         stop_stack(stack_id) -> Stack
         continue_stack(stack_id) -> Stack
         rerun(stack_id, resources, with_dependents, with_dependencies,
               checks_only) -> Stack
    1.4  create_stack(..., adopt_stack_data, tags), update_stack(..., timeout,
         tags), list_stacks(..., tags, tags_any, not_tags, not_tags_any): the
         new arguments are sent (at 1.4) only when given
         preview_stack(name, template, parameters, files, environment, timeout,
                       disable_rollback) -> dict
         preview_update_stack(stack_id, template, parameters, files, environment,
                              existing, show_nested) -> dict
         get_template, get_environment, get_files(stack_id) -> dict
         abandon_stack(stack_id, abandon) -> dict
         stack_snapshot(stack_id, name) -> dict; list_snapshots(stack_id) -> [dict]
         show_snapshot, delete_snapshot(stack_id, snapshot_id)
         restore_snapshot(stack_id, snapshot_id) -> Stack
         mark_resource_unhealthy(stack_id, resource_name, mark_unhealthy,
                                 resource_status_reason)
    1.5  the software-config store, Heat's methods and arguments (less cnxt),
         answering Heat's dicts: create_software_config(group, name, config,
         inputs, outputs, options), show_software_config(config_id),
         list_software_configs(limit, marker), delete_software_config(config_id),
         create_software_deployment(server_id, config_id, input_values, action,
         status, status_reason, stack_user_project_id, deployment_id),
         update_software_deployment(deployment_id, config_id, input_values,
         output_values, action, status, status_reason, updated_at),
         show_software_deployment, delete_software_deployment(deployment_id),
         list_software_deployments(server_id),
         metadata_software_deployments(server_id),
         signal_software_deployment(deployment_id, details, updated_at);
         signal_resource(stack_id, resource_name, details);
         update_stack(..., clear_parameters), list_stacks(..., show_deleted,
         show_hidden): sent (at 1.5) only when given;
         resource_attributes(stack_id, resource_name, names) -> dict
    1.6  validate_template(..., show_nested, ignorable_errors): sent (at 1.6)
         only when given; list_services() -> [dict] (Heat's, from the
         engine heartbeats)

Actions (create, update, delete, suspend, resume, check, cancel) return
once the traversal is stored, with the stack IN_PROGRESS -- as Heat's
``create_stack`` returns the stack identity before the stack is built.
"""

from nestedflow.conf import rpc as rpc_opts
from nestedflow.messaging import transport
from nestedflow.messaging.serializer import ContextSerializer
from nestedflow.rpc import wire
from nestedflow.rpc.methods import (  # noqa: F401 (the RPC API's names)
    LATER_ARGUMENTS,
    METHODS,
    VERSION,
    version_key,
)


def register_opts(conf):
    """Register on ``conf`` (nestedflow's CONF or a host's own ConfigOpts)
    what the client and service read: ``[rpc]`` and the oslo.messaging
    options oslo.messaging itself registers on the global CONF only.
    Registering an identical option again is a no-op in oslo.config."""
    rpc_opts.register_opts(conf)
    transport.register_global_only_opts(conf)


#: Where clients rebuild nestedflow's errors from (oslo.messaging's
#: ``allowed_remote_exmods``): only RemoteFailure crosses the wire.
ALLOWED_REMOTE_EXMODS = ["nestedflow.exceptions"]

#: Views cross the wire by class name (:mod:`nestedflow.rpc.wire`).
register_view = wire.register_view


class EngineSerializer(ContextSerializer):
    """Views as tagged dicts; the context as oslo.context's dict.

    An empty context stands for "no context": the server then acts as the
    embedded default does (see :mod:`nestedflow.tenancy`).
    """

    def serialize_entity(self, ctxt, entity):
        return wire.views_out(entity)

    def deserialize_entity(self, ctxt, entity):
        return wire.views_in(entity)
