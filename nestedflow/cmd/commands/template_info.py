"""``template validate``, ``template version list``, ``template function list``
(as heatclient's ``openstack orchestration template ...``)."""


from nestedflow.cmd.commands import bases, tables

_HOT = "heat_template_version."


class ValidateTemplate(bases.ShowOne):
    """Validate a template: print Heat's validate answer (YAML by default)."""

    @property
    def formatter_default(self):
        return "yaml"

    def get_parser(self, prog_name):
        from nestedflow.cmd.commands import templates

        parser = super().get_parser(prog_name)
        templates.add_template_arguments(parser, required=True)
        # heatclient/osc/v1/template.py Validate's two options, as Heat's
        # validate API takes them: show_nested, and ignore_errors split on ","
        # (heat/api/openstack/v1/stacks.py validate_template).
        parser.add_argument("--show-nested", action="store_true",
                            help="resolve parameters from nested templates as well "
                                 "(adds NestedParameters)")
        parser.add_argument("--ignore-errors", metavar="<error1,error2,...>",
                            help="list of heat errors to ignore (Heat's error codes)")
        return parser

    def take_action(self, parsed_args):
        from nestedflow.cmd.commands import templates

        kwargs = templates.template_kwargs(parsed_args)
        if parsed_args.show_nested:
            kwargs["show_nested"] = True
        if parsed_args.ignore_errors:
            kwargs["ignorable_errors"] = parsed_args.ignore_errors.split(",")
        answer = self.app.engine.validate_template(**kwargs)
        names = tuple(answer)
        return names, tuple(answer[name] for name in names)


class ListTemplateVersion(tables.Lister):
    """List the template versions this engine accepts."""

    def take_action(self, parsed_args):
        from nestedflow.template.functions import versions

        aliases = {}
        for name, version in versions.RELEASE_NAMES.items():
            aliases.setdefault(version, []).append(_HOT + name)
        from nestedflow.cmd.commands import columns

        # Aliases as a list (Heat's list_template_versions; heatclient's JSON).
        return ("Version", "Type", "Aliases"), [
            (_HOT + version, "hot", columns.cell(aliases.get(version, [])))
            for version in versions.HOT_VERSIONS]


class ListTemplateFunction(tables.Lister):
    """List the intrinsic functions of a template version."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument(
            "template_version", metavar="<template-version>", nargs="?",
            help="template version, e.g. heat_template_version.2018-08-31 (or a date "
                 "or release name)")
        parser.add_argument("--template-version", dest="template_version_option",
                            metavar="<template-version>", help="the same, as an option")
        parser.add_argument("--with_conditions", "--with-conditions", action="store_true",
                            help="also list the functions allowed in conditions")
        return parser

    def take_action(self, parsed_args):
        from nestedflow.cmd.errors import CommandError
        from nestedflow.template.functions import versions

        requested = parsed_args.template_version or parsed_args.template_version_option
        if not requested:
            raise CommandError("a template version is required, e.g. "
                               "heat_template_version.2018-08-31")
        version = requested.removeprefix(_HOT)
        version = versions.RELEASE_NAMES.get(version, version)
        if version not in versions.HOT_VERSIONS:
            raise CommandError(f"template version {requested!r} not found; see "
                               "'nestedflow template version list'")
        names = versions.available(version, with_conditions=parsed_args.with_conditions)
        return ("Functions", "Description"), [
            (name, versions.DESCRIPTIONS.get(name, "")) for name in names]


class BuildInfo(bases.ShowOne):
    """Show build information (heatclient's ``orchestration build info``).

    Heat answers ``{"api": {"revision": ...}, "engine": {"revision": ...}}``
    (heat/api/openstack/v1/build_info.py, ``[revision] heat_revision``);
    here the command line reaches the engine in-process, so both are this
    installation's nestedflow version.
    """

    def take_action(self, parsed_args):
        from nestedflow.cmd.commands import columns
        from nestedflow.cmd.shell import _version

        revision = {"revision": _version()}
        return ("api", "engine"), (columns.Json(revision), columns.Json(revision))
