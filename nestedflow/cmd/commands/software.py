"""``software config create|show|list|delete`` and ``software deployment
create|show|list|delete|output show|metadata show`` on the software-config
store, as heatclient's OSC plugin has them.

Followed: heatclient/osc/v1/software_config.py and software_deployment.py,
common/deployment_utils.py ``build_derived_config_params`` (python-heatclient
5.3.0): the same arguments, columns and output shapes. A deployment made
here is made ``IN_PROGRESS`` for the server's agent, as heatclient makes it,
with ``NO_SIGNAL`` as its transport by default: heatclient's default,
``TEMP_URL_SIGNAL``, needs a Swift TempURL, which nestedflow has no Swift to
make -- asking for it is refused with one line saying so.
"""

import json

from nestedflow.cmd.commands import bases, columns, failures, tables


def _read(path, what):
    from nestedflow.cmd.commands import templates

    with open(templates.existing_file(path, what), encoding="utf-8") as f:
        return f.read()

# -- configs -------------------------------------------------------------------


class CreateConfig(bases.ShowOne):
    """Create software config."""

    @property
    def formatter_default(self):
        return "json"  # heatclient's JsonFormat

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument("name", metavar="<config-name>",
                            help="name of the software config to create")
        parser.add_argument("--config-file", metavar="<config-file>",
                            help="path to the software config script/data")
        parser.add_argument("--definition-file", metavar="<destination-file>",
                            help="path to JSON/YAML containing a map defining <inputs>, "
                                 "<outputs> and <options>")
        parser.add_argument("--group", metavar="<group>", default="Heat::Ungrouped",
                            help="group name of the tool expected by the software config")
        return parser

    def take_action(self, parsed_args):
        from nestedflow.cmd.errors import CommandError

        definition = {}
        if parsed_args.definition_file:
            import yaml

            text = _read(parsed_args.definition_file, "definition")
            try:
                definition = yaml.safe_load(text) or {}
            except yaml.YAMLError as error:
                raise CommandError(f"{parsed_args.definition_file}: {error}") from None
            if not isinstance(definition, dict):
                raise CommandError(f"{parsed_args.definition_file}: a definition must be a "
                                   "mapping of inputs, outputs and options")
        config = ""
        if parsed_args.config_file:
            config = _read(parsed_args.config_file, "config")
        properties = {"group": parsed_args.group, "config": config,
                      "inputs": definition.get("inputs", []),
                      "outputs": definition.get("outputs", []),
                      "options": definition.get("options", {})}
        # heatclient validates a one-resource template first: the schema of
        # OS::Heat::SoftwareConfig refuses bad inputs/outputs with its message.
        self.app.engine.validate_template({
            "heat_template_version": "2013-05-23",
            "resources": {parsed_args.name: {"type": "OS::Heat::SoftwareConfig",
                                             "properties": properties}}})
        made = self.app.engine.create_software_config(
            properties["group"], parsed_args.name, properties["config"], properties["inputs"],
            properties["outputs"], properties["options"])
        names = tuple(made)
        return names, tuple(columns.cell(made[n]) for n in names)


class ShowConfig(bases.ShowOne):
    """Show software config details."""

    FIELDS = ("id", "name", "group", "config", "inputs", "outputs", "options",
              "creation_time")

    @property
    def formatter_default(self):
        return "yaml"  # heatclient's YamlFormat

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument("config", metavar="<config>", help="ID of the config")
        parser.add_argument("--config-only", action="store_true",
                            help="only display the value of the <config> property")
        return parser

    def take_action(self, parsed_args):
        found = self.app.engine.show_software_config(parsed_args.config)
        if parsed_args.config_only:
            self.app.stdout.write(f"{found.get('config') or ''}\n")
            return (), ()
        return self.FIELDS, tuple(columns.cell(found.get(f)) for f in self.FIELDS)

    def produce_output(self, parsed_args, column_names, data):
        if parsed_args.config_only:
            return 0
        return super().produce_output(parsed_args, column_names, data)


class ListConfig(tables.Lister):
    """List software configs."""

    COLUMNS = ("id", "name", "group", "creation_time")

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument("--limit", metavar="<limit>", type=int,
                            help="limit the number of configs returned")
        parser.add_argument("--marker", metavar="<id>",
                            help="return configs that appear after the given config ID")
        return parser

    def take_action(self, parsed_args):
        found = self.app.engine.list_software_configs(limit=parsed_args.limit,
                                                       marker=parsed_args.marker)
        return self.COLUMNS, [tuple(columns.cell(c.get(n)) for n in self.COLUMNS)
                              for c in found]


def _delete_each(app, ids, delete, not_found, what):
    """heatclient's loop: delete each, say which were not found, fail at the end."""
    from nestedflow.cmd.errors import CommandError

    failed = 0
    for one in ids:
        try:
            delete(one)
        except not_found:
            app.stdout.write(f"{what} with ID {one} not found\n")
            failed += 1
    if failed:
        plural = "software configs" if what == "Software config" else "deployments"
        raise CommandError(f"Unable to delete {failed} of the {len(ids)} {plural}.")


class DeleteConfig(bases.Command):
    """Delete software configs."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument("config", metavar="<config>", nargs="+",
                            help="IDs of the software configs to delete")
        return parser

    def take_action(self, parsed_args):
        from nestedflow import exceptions

        _delete_each(self.app, parsed_args.config, self.app.engine.delete_software_config,
                     exceptions.SoftwareConfigNotFound, "Software config")
        return 0


# -- deployments ---------------------------------------------------------------

#: heatclient's ``software deployment show`` fields; --long adds output_values.
DEPLOYMENT_FIELDS = ("id", "server_id", "config_id", "creation_time", "updated_time",
                     "status", "status_reason", "input_values", "action")


def derived_config(action, source, name, input_values, server_id, signal_transport):
    """heatclient's deployment_utils.build_derived_config_params, for the
    transports nestedflow serves (NO_SIGNAL, HEAT_SIGNAL)."""
    import copy

    input_values = dict(input_values or {})
    inputs = copy.deepcopy(source.get("inputs")) or []
    for declared in inputs:
        declared["value"] = input_values.pop(declared["name"], declared.get("default"))
    for key, value in input_values.items():
        inputs.append({"name": key, "type": "String", "value": value})
    inputs += [
        {"name": "deploy_server_id", "description": "ID of the server being deployed to",
         "type": "String", "value": server_id},
        {"name": "deploy_action", "description": "Name of the current action being deployed",
         "type": "String", "value": action},
        {"name": "deploy_signal_transport",
         "description": "How the server should signal to heat with the deployment output "
                        "values.", "type": "String", "value": signal_transport}]
    return {"group": source.get("group") or "Heat::Ungrouped",
            "config": source.get("config") or "", "options": source.get("options") or {},
            "inputs": inputs, "outputs": source.get("outputs") or [], "name": name}


class CreateDeployment(bases.ShowOne):
    """Create a software deployment."""

    TRANSPORTS = ("NO_SIGNAL", "HEAT_SIGNAL")

    @property
    def formatter_default(self):
        return "yaml"  # heatclient's YamlFormat

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument("name", metavar="<deployment-name>",
                            help="name of the derived config associated with this deployment")
        parser.add_argument("--input-value", metavar="<key=value>", action="append",
                            default=[], help="input value to set on the deployment; "
                                             "may be repeated")
        parser.add_argument("--action", metavar="<action>", default="UPDATE",
                            help="name of an action for this deployment (default: UPDATE)")
        parser.add_argument("--config", metavar="<config>",
                            help="ID of the configuration to deploy")
        parser.add_argument("--signal-transport", metavar="<signal-transport>",
                            default="NO_SIGNAL",
                            help="NO_SIGNAL (the default here) or HEAT_SIGNAL")
        parser.add_argument("--container", metavar="<container>",
                            help="accepted for heatclient's scripts; unused (no Swift)")
        parser.add_argument("--timeout", metavar="<timeout>", type=int, default=60,
                            help="deployment timeout in minutes")
        parser.add_argument("--server", metavar="<server>", required=True,
                            help="ID of the server being deployed to")
        return parser

    def take_action(self, parsed_args):
        from nestedflow.cmd.commands import templates
        from nestedflow.cmd.errors import CommandError

        transport = parsed_args.signal_transport
        if transport not in self.TRANSPORTS:
            raise CommandError(f"signal transport {transport} refused: it needs "
                               f"{'Swift' if transport == 'TEMP_URL_SIGNAL' else 'a service'} "
                               "nestedflow does not have; use NO_SIGNAL or HEAT_SIGNAL")
        engine = self.app.engine
        source = engine.show_software_config(parsed_args.config) if parsed_args.config else {}
        derived = derived_config(parsed_args.action, source, parsed_args.name,
                                 templates.parse_parameters(parsed_args.input_value),
                                 parsed_args.server, transport)
        config = engine.create_software_config(
            derived["group"], derived["name"], derived["config"], derived["inputs"],
            derived["outputs"], derived["options"])
        # heatclient creates it IN_PROGRESS whatever the transport: the
        # server's agent reads it from the metadata and reports back.
        made = engine.create_software_deployment(
            parsed_args.server, config["id"], {}, parsed_args.action, "IN_PROGRESS", "", None)
        names = tuple(sorted(made))
        return names, tuple(columns.cell(made[n]) for n in names)


class ListDeployment(tables.Lister):
    """List software deployments."""

    COLUMNS = ("id", "config_id", "server_id", "action", "status")

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument("--server", metavar="<server>",
                            help="ID of the server to fetch deployments for")
        parser.add_argument("--long", action="store_true", help="list more fields in output")
        return parser

    def take_action(self, parsed_args):
        names = self.COLUMNS + (("creation_time", "status_reason") if parsed_args.long else ())
        found = self.app.engine.list_software_deployments(server_id=parsed_args.server)
        return names, [tuple(columns.cell(d.get(n)) for n in names) for d in found]


class ShowDeployment(bases.ShowOne):
    """Show SoftwareDeployment Details."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument("deployment", metavar="<deployment>", help="ID of the deployment")
        parser.add_argument("--long", action="store_true", help="show more fields in output")
        return parser

    def take_action(self, parsed_args):
        found = self.app.engine.show_software_deployment(parsed_args.deployment)
        names = DEPLOYMENT_FIELDS + (("output_values",) if parsed_args.long else ())
        return names, tuple(columns.cell(found.get(n)) for n in names)


class DeleteDeployment(bases.Command):
    """Delete software deployment(s) and correlative config(s)."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument("deployment", metavar="<deployment>", nargs="+",
                            help="ID of the deployment(s) to delete")
        return parser

    def take_action(self, parsed_args):
        from nestedflow import exceptions

        engine = self.app.engine

        def delete(deployment_id):
            found = engine.show_software_deployment(deployment_id)
            engine.delete_software_deployment(deployment_id)
            try:  # heatclient: the derived config too, on a best-effort basis
                engine.delete_software_config(found["config_id"])
            except exceptions.NestedflowError:
                self.app.stdout.write(f"Failed to delete the correlative config "
                                      f"{found['config_id']} of deployment {deployment_id}\n")

        _delete_each(self.app, parsed_args.deployment, delete,
                     exceptions.SoftwareDeploymentNotFound, "Deployment")
        return 0


class ShowMetadataDeployment(bases.Command):
    """Get deployment configuration metadata for the specified server."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument("server", metavar="<server>",
                            help="ID of the server to fetch deployments for")
        return parser

    def take_action(self, parsed_args):
        found = self.app.engine.metadata_software_deployments(parsed_args.server)
        self.app.stdout.write(json.dumps(found, indent=2) + "\n")
        return 0


class ShowOutputDeployment(bases.Command):
    """Show a specific deployment output."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument("deployment", metavar="<deployment>",
                            help="ID of deployment to show the output for")
        parser.add_argument("output", metavar="<output-name>", nargs="?",
                            help="name of an output to display")
        parser.add_argument("--all", action="store_true", help="display all deployment outputs")
        parser.add_argument("--long", action="store_true",
                            help="show full deployment logs in output")
        return parser

    def _print(self, outputs, name, long):
        # heatclient/common/format_utils.py print_software_deployment_output
        if name in ("deploy_stdout", "deploy_stderr"):
            text = failures.indent_and_truncate(outputs.get(name), truncate=not long)
            self.app.stdout.write(f"  {name}: |\n{text}\n")
        else:
            self.app.stdout.write(f"  {name}: {outputs.get(name)}\n")

    def take_action(self, parsed_args):
        from nestedflow.cmd.errors import CommandError

        if (parsed_args.output is None) != bool(parsed_args.all):
            raise CommandError("Error: either <output-name> or --all argument is needed.")
        outputs = self.app.engine.show_software_deployment(
            parsed_args.deployment).get("output_values") or {}
        if not outputs:
            return 0
        if parsed_args.all:
            self.app.stdout.write("output_values:\n\n")
            for name in outputs:
                self._print(outputs, name, parsed_args.long)
            return 0
        if parsed_args.output not in outputs:
            raise CommandError(f"Output {parsed_args.output} does not exist in deployment "
                               f"{parsed_args.deployment}")
        self.app.stdout.write("output_value:\n\n")
        self._print(outputs, parsed_args.output, parsed_args.long)
        return 0
