"""Heat's deployments: a config applied to a server, through the software-config store.

``OS::Heat::SoftwareDeployment`` and ``OS::Heat::StructuredDeployment``, as
heat/engine/resources/openstack/heat/software_deployment.py and
structured_config.py. Each action listed in ``actions`` (default CREATE and
UPDATE; a ``component`` config's own actions instead) stores a *derived
config* -- the config with the deployment's input values and Heat's
``deploy_*`` inputs -- and points the deployment (id: the physical id) at
it. With ``signal_transport: NO_SIGNAL`` the action completes at once
("Not waiting for outputs signal"); with any other transport the
deployment is IN_PROGRESS ("Deploy data available") until a signal
carrying ``deploy_stdout``, ``deploy_stderr``, ``deploy_status_code`` and
the config's outputs arrives (:func:`nestedflow.engine.software_config.record_signal`,
reached through ``Engine.signal_software_deployment``, heat-api's
deployment update, or this resource's :meth:`SoftwareDeployment.handle_signal`);
a non-zero status code fails the action with Heat's reason. Outputs and
``deploy_*`` values are the resource's attributes.

``server`` takes any server id (a ``DeployedServer``, a mapped type...):
the server is not asked anything. What Heat gives a server agent to
authenticate its signal (keystone credentials, signed URLs) does not
exist here: those ``deploy_*`` inputs are present with null values.
"""

import copy
import hashlib
import json
import uuid

from nestedflow import exceptions
from nestedflow.conf import CONF
from nestedflow.db.software_config import ALL_PROJECTS
from nestedflow.properties import constraints
from nestedflow.properties.schema import Attribute, Property, Types
from nestedflow.resources import base, polling
from nestedflow.resources import software_config_io as swc_io
from nestedflow.resources import software_records as swc
from nestedflow.resources.software_config import config_id_for

ACTIONS = ("CREATE", "UPDATE", "DELETE", "SUSPEND", "RESUME")
TRANSPORTS = ("CFN_SIGNAL", "TEMP_URL_SIGNAL", "HEAT_SIGNAL", "NO_SIGNAL", "ZAQAR_SIGNAL")
#: Heat's [DEFAULT] default_deployment_signal_transport.
DEFAULT_TRANSPORT = "CFN_SIGNAL"

#: Heat's ``SoftwareDeployment.properties_schema``.
DEPLOYMENT_SCHEMA = {
    "config": Property(Types.STRING, "ID of software configuration resource to execute "
                       "when applying to the server.", update_allowed=True),
    "server": Property(Types.STRING, "ID of resource to apply configuration to.",
                       required=True),
    "input_values": Property(Types.MAP, "Input values to apply to the software "
                             "configuration on this server.", update_allowed=True),
    "actions": Property(Types.LIST, "Which lifecycle actions of the deployment resource "
                        "will result in this deployment being triggered.",
                        default=["CREATE", "UPDATE"], update_allowed=True,
                        constraints=[constraints.AllowedValues(list(ACTIONS))]),
    "name": Property(Types.STRING, "Name of the derived config associated with this "
                     "deployment.", update_allowed=True),
    "signal_transport": Property(Types.STRING, "How the server should signal with the "
                                 "deployment output values; NO_SIGNAL completes without "
                                 "waiting.", default=DEFAULT_TRANSPORT,
                                 constraints=[constraints.AllowedValues(list(TRANSPORTS))]),
}

DEPLOY_ATTRIBUTES = ("deploy_stdout", "deploy_stderr", "deploy_status_code")

_DESCRIPTIONS = {
    "deploy_server_id": "ID of the server being deployed to",
    "deploy_action": "Name of the current action being deployed",
    "deploy_stack_id": "ID of the stack this deployment belongs to",
    "deploy_resource_name": "Name of this deployment resource in the stack",
    "deploy_signal_transport": "How the server should signal to heat with the deployment "
                               "output values.",
    "deploy_signal_id": "ID of signal to use for signaling output values",
    "deploy_signal_verb": "HTTP verb to use for signaling output values",
    "deploy_auth_url": "URL for API authentication",
    "deploy_username": "Username for API authentication",
    "deploy_user_id": "User ID for API authentication",
    "deploy_password": "Password for API authentication",
    "deploy_project_id": "ID of project for API authentication",
}


class SoftwareDeployment(base.Resource):
    """Applies a config to ``server`` (any server id) for the listed
    ``actions``: a derived config with the input values and Heat's
    ``deploy_*`` inputs is stored and the deployment points at it;
    ``NO_SIGNAL`` completes at once, any other transport waits for a signal
    whose ``deploy_status_code`` (non-zero fails), ``deploy_stdout``,
    ``deploy_stderr`` and outputs become the attributes."""

    properties_schema = DEPLOYMENT_SCHEMA
    attributes_schema = {
        "deploy_stdout": Attribute("Captured stdout from the configuration execution.",
                                   Types.STRING),
        "deploy_stderr": Attribute("Captured stderr from the configuration execution.",
                                   Types.STRING),
        "deploy_status_code": Attribute("Returned status code from the configuration "
                                        "execution.", Types.STRING),
    }
    #: Any output the config declares is an attribute too.
    dynamic_attributes = True
    #: Heat's: a deployment takes signals in every action (its DELETE,
    #: SUSPEND and RESUME may deploy and wait too).
    no_signal_actions = ()

    # -- the store ----------------------------------------------------------

    def _store(self):
        return self.context.software_configs

    def _project(self):
        project = self.context.project_id
        return ALL_PROJECTS if project is None else project

    def deployment_id(self):
        return self.physical_id or str(uuid.uuid5(uuid.NAMESPACE_URL,
                                                  f"nestedflow-deployment:"
                                                  f"{self.context.create_key}"))

    def _no_signal(self, properties=None):
        return (properties or self.properties).get("signal_transport") == "NO_SIGNAL"

    def load_config(self, config_id=None):
        """The source config as Heat's ``_load_config`` reads it (empty when
        the deployment names none)."""
        if config_id is None:
            config_id = self.properties.get("config")
        if not config_id:
            return {"inputs": [], "outputs": []}
        row = self._store().get_config(config_id, self._project())
        document = dict(row.config or {})
        return {"name": row.name, "group": row.group, "config": document.get("config"),
                "options": document.get("options"), "inputs": document.get("inputs") or [],
                "outputs": document.get("outputs") or []}

    # -- the derived config (Heat's _build_derived_*) -------------------------

    def empty_config(self):
        return ""

    def derived_inputs(self, action, source):
        """Heat's ``_build_derived_inputs``: each input with its value, then
        the undeclared input values, then Heat's ``deploy_*`` inputs."""
        values = dict(self.properties.get("input_values") or {})
        derived = []
        for index, declared in enumerate(source["inputs"]):
            value = values.pop(declared["name"], declared.get("default"))
            derived.append(swc_io.input_config(declared, f"inputs[{index}]", value, True))
        for name, value in values.items():
            derived.append(swc_io.input_config({"name": name}, name, value, True))
        ctx = self.context
        transport = self.properties.get("signal_transport")
        extra = {"deploy_server_id": self.properties.get("server"), "deploy_action": action,
                 "deploy_stack_id": f"{ctx.stack_name}/{ctx.stack_id}",
                 "deploy_resource_name": self.name, "deploy_signal_transport": transport}
        if transport in ("CFN_SIGNAL", "TEMP_URL_SIGNAL"):
            extra["deploy_signal_id"] = None
            extra["deploy_signal_verb"] = "POST" if transport == "CFN_SIGNAL" else "PUT"
        elif transport in ("HEAT_SIGNAL", "ZAQAR_SIGNAL"):
            extra.update(deploy_auth_url=None, deploy_username=None, deploy_user_id=None,
                         deploy_password=None, deploy_project_id=ctx.project_id)
        for name, value in extra.items():
            derived.append(swc_io.input_config(
                {"name": name, "description": _DESCRIPTIONS[name]}, name, value, True))
        return derived

    def derived_config(self, action, source, inputs):
        return source.get("config")

    def derived_config_fields(self, action, source):
        inputs = self.derived_inputs(action, source)
        config = self.derived_config(action, source, inputs)
        name = (self.properties.get("name") or source.get("name")
                or self.context.physical_resource_name())
        return (name, source.get("group") or "Heat::Ungrouped",
                {"config": config or self.empty_config(), "options": source.get("options"),
                 "inputs": inputs, "outputs": source["outputs"]})

    # -- one action (Heat's _handle_action) ----------------------------------

    def triggers(self, action, source):
        if source.get("group") == "component":
            return any(action in (c.get("actions") or [])
                       for c in (source.get("config") or {}).get("configs") or [])
        return action in (self.properties.get("actions") or [])

    def handle_action(self, action, source=None, previous_config=None):
        """Deploy for ``action`` if it triggers the deployment; waits for the
        signal unless NO_SIGNAL. Returns whether it deployed."""
        source = self.load_config() if source is None else source
        if not self.triggers(action, source):
            return False
        store = self._store()
        name, group, document = self.derived_config_fields(action, source)
        self.context.still_owner()
        # One derived config per action and document: a re-run finds its
        # own; a rollback in the same traversal, putting other values back,
        # makes another (as Heat's rollback updates the deployment again).
        digest = hashlib.sha256(json.dumps([action, name, group, document], sort_keys=True,
                                           default=str).encode()).hexdigest()[:16]
        derived = store.create_config(
            name, group, document, self.context.project_id,
            config_id=config_id_for(self.context.create_key,
                                    f":{self.context.traversal_id}:{digest}"))
        if self._no_signal():
            status, reason = swc.COMPLETE, "Not waiting for outputs signal"
        else:
            status, reason = swc.IN_PROGRESS, "Deploy data available"
        deployment_id = self.deployment_id()
        try:
            row, _ = store.get_deployment(deployment_id)
        except exceptions.SoftwareDeploymentNotFound:
            row = None
        if row is None:
            store.create_deployment(
                {"id": deployment_id, "config_id": derived.id,
                 "server_id": self.properties["server"],
                 "input_values": self.properties.get("input_values"), "action": action,
                 "status": status, "status_reason": reason,
                 "tenant": self.context.project_id, "stack_user_project_id": None})
        elif row.config_id != derived.id:
            previous_config = previous_config or row.config_id
            swc.update_deployment(store, deployment_id, config_id=derived.id, action=action,
                                  input_values=self.properties.get("input_values"),
                                  status=status, status_reason=reason)
            self._delete_config(previous_config)
        self.context.physical_id = deployment_id
        if status == swc.IN_PROGRESS:
            self._wait(deployment_id)
        return True

    def _wait(self, deployment_id):
        """Heat's ``_check_complete``, until the deployment settles: woken
        by a signal to this resource (``Engine.signal_resource``), and read
        again every ``[heat_compat] max_poll_interval`` seconds for a signal
        that reached the store another way (``signal_software_deployment``,
        heat-api's deployment update)."""
        store = self._store()
        signals = self.context.signals

        def settled():
            return self._settled(store, deployment_id)

        try:
            if signals is None:
                polling.poll_until(self.context, settled, self.name)
            else:
                while not signals.wait(self.name, settled,
                                       timeout=CONF.heat_compat.max_poll_interval):
                    pass
        except exceptions.OwnershipLost:
            # Heat's _handle_cancel: a deployment left waiting is failed.
            row, _ = store.get_deployment(deployment_id)
            if row.status == swc.IN_PROGRESS:
                swc.update_deployment(store, deployment_id, status=swc.FAILED,
                                      status_reason="Deployment cancelled.")
            raise

    @staticmethod
    def _settled(store, deployment_id):
        row, _ = store.get_deployment(deployment_id)
        if row.status == swc.FAILED:
            raise exceptions.SoftwareDeploymentFailed(row.status_reason)
        return row.status == swc.COMPLETE

    def _delete_config(self, config_id):
        if config_id:
            try:
                self._store().delete_config(config_id)
            except (exceptions.SoftwareConfigNotFound, exceptions.ActionNotAllowed):
                pass  # gone, or still deployed elsewhere

    # -- the plugin interface ------------------------------------------------

    def create(self):
        self.handle_action("CREATE")
        # Heat sets no resource id when CREATE does not trigger the deployment.
        return self.context.physical_id

    def update(self, new_properties, old_properties):
        store = self._store()
        old_inputs = {}
        previous_config = None
        if self.physical_id:
            row, _ = store.get_deployment(self.physical_id)
            previous_config = row.config_id
            old = self.load_config(previous_config)
            old_inputs = {i["name"]: i.get("value") for i in old["inputs"]}
        self.properties = new_properties
        source = self.load_config()
        for item in self.derived_inputs("UPDATE", source):
            name = item["name"]
            if item.get("replace_on_change") and name in old_inputs and (
                    item.get("value") != old_inputs[name]):
                raise exceptions.UpdateReplace(self.name)
        self.handle_action("UPDATE", source, previous_config)

    def delete(self):
        try:
            self.handle_action("DELETE")
        except exceptions.SoftwareConfigNotFound:
            pass  # Heat ignores NotFound here
        store = self._store()
        try:
            row, _ = store.get_deployment(self.deployment_id())
        except exceptions.SoftwareDeploymentNotFound:
            return
        store.delete_deployment(row.id)
        self._delete_config(row.config_id)

    def check(self):
        try:
            self._store().get_deployment(self.deployment_id())
        except exceptions.SoftwareDeploymentNotFound:
            raise exceptions.PhysicalObjectMissing(self.name, self.physical_id) from None

    def suspend(self):
        self.handle_action("SUSPEND")

    def resume(self):
        self.handle_action("RESUME")

    def handle_signal(self, details):
        """Heat's ``handle_signal`` (``Engine.signal_resource``): the signal's
        outputs and ``deploy_*`` values recorded on the deployment, which
        the waiting action then finds settled; returns the event reason
        (None when the deployment was not waiting). A signal delivered
        twice finds it settled and changes nothing."""
        if details is not None and not isinstance(details, dict):
            raise ValueError("a deployment's signal is a map of its outputs and "
                             "deploy_stdout, deploy_stderr, deploy_status_code")
        return swc.record_signal(self._store(), self.deployment_id(), details,
                                 project=self._project())

    def get_attribute(self, name):
        """The deployment's output values (Heat's ``get_attribute``)."""
        if not self.physical_id or self._store() is None:
            return None
        try:
            row, _ = self._store().get_deployment(self.physical_id)
        except exceptions.SoftwareDeploymentNotFound:
            return None
        return (row.output_values or {}).get(name)


class StructuredDeployment(SoftwareDeployment):
    """``OS::Heat::StructuredDeployment``: ``{get_input: NAME}`` (or the
    ``input_key`` given) in a structured config is replaced by the input's
    value; ``input_values_validate: STRICT`` fails on an input with none."""

    properties_schema = {
        **DEPLOYMENT_SCHEMA,
        "input_key": Property(Types.STRING, "Name of key to use for substituting inputs "
                              "during deployment.", default="get_input"),
        "input_values_validate": Property(
            Types.STRING, "Perform a check on the input values passed to verify that each "
            "required input has a corresponding value.", default="LAX",
            constraints=[constraints.AllowedValues(["LAX", "STRICT"])]),
    }

    def empty_config(self):
        return {}

    def derived_config(self, action, source, inputs):
        values = {item["name"]: item.get("value") for item in inputs}
        return substitute(source.get("config"), values, self.properties.get("input_key"),
                          self.properties.get("input_values_validate"))


def substitute(snippet, values, input_key, check="LAX"):
    """Heat's ``StructuredDeployment.parse``."""
    if isinstance(snippet, dict):
        if len(snippet) == 1:
            key, arg = next(iter(snippet.items()))
            if key == input_key and isinstance(arg, str):
                if check == "STRICT" and arg not in values:
                    raise exceptions.StackValidationFailed(
                        f"The Parameter ({arg}) was not provided.", path=f"inputs.{arg}")
                return values.get(arg)
        return {key: substitute(value, values, input_key, check)
                for key, value in snippet.items()}
    if isinstance(snippet, (list, tuple)):
        return [substitute(item, values, input_key, check) for item in snippet]
    return copy.deepcopy(snippet)
