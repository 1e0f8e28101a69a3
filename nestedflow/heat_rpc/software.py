"""Heat's software-config and software-deployment methods, forwarded to the
Engine's methods of the same names and arguments (shaped after
heat/engine/service_software_config.py; the Engine answers Heat's formats)."""

from nestedflow.heat_rpc import faults
from nestedflow.heat_rpc.calls import Calls, rpc

#: Heat RPC method -> the arguments heat-api sends (heat/rpc/client.py).
METHODS = {
    "create_software_config": ("group", "name", "config", "inputs", "outputs", "options"),
    "show_software_config": ("config_id",),
    "list_software_configs": ("limit", "marker"),
    "delete_software_config": ("config_id",),
    "create_software_deployment": ("server_id", "config_id", "input_values", "action",
                                   "status", "status_reason", "stack_user_project_id",
                                   "deployment_id"),
    "show_software_deployment": ("deployment_id",),
    "list_software_deployments": ("server_id",),
    "update_software_deployment": ("deployment_id", "config_id", "input_values",
                                   "output_values", "action", "status", "status_reason",
                                   "updated_at"),
    "delete_software_deployment": ("deployment_id",),
    "metadata_software_deployments": ("server_id",),
    "signal_software_deployment": ("deployment_id", "details", "updated_at"),
}


def _forward(name, arguments):
    def method(self, ctxt, **kwargs):
        target = getattr(self.engine, name, None)
        if target is None:
            raise faults.not_supported(f"{name} (no software-config store in this engine)")
        return target(**{key: kwargs[key] for key in arguments if key in kwargs},
                      context=ctxt)

    method.__name__ = name
    method.__doc__ = f"Heat's ``{name}``: the Engine's, with the request context."
    return rpc(method)


SoftwareCalls = type("SoftwareCalls", (Calls,), {
    "__module__": __name__,
    "__doc__": "Software configs and deployments.",
    **{name: _forward(name, arguments) for name, arguments in METHODS.items()},
})
