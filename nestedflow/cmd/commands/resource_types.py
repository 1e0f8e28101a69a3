"""``orchestration resource type list|show`` (heatclient's names, arguments
and columns: heatclient/osc/v1/resource_type.py, python-heatclient 5.3.0).

The answers are those the Heat engine API gives heat-api for the same
calls (:class:`nestedflow.heat_rpc.catalog.CatalogCalls`): one source for
a type's schema and generated template, whichever way it is asked.
"""

from nestedflow.cmd.commands import bases, columns, tables


def _catalog(app):
    from nestedflow.heat_rpc.catalog import CatalogCalls

    return CatalogCalls(app.engine, conf=None)


class ResourceTypeList(tables.Lister):
    """List resource types."""

    embedded_only = True  # the plugin registry

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument("--filter", dest="filter", metavar="<key=value>", action="append",
                            default=[],
                            help="filter the types: name (a regular expression matched at "
                                 "the start), version or support_status; may be repeated")
        parser.add_argument("--long", action="store_true",
                            help="show each resource type's description")
        return parser

    def take_action(self, parsed_args):
        from nestedflow.cmd.commands import templates

        filters = templates.parse_parameters(parsed_args.filter)
        found = _catalog(self.app).list_resource_types(
            None, support_status=filters.get("support_status"), type_name=filters.get("name"),
            heat_version=filters.get("version"), with_description=parsed_args.long)
        if parsed_args.long:
            return ("Resource Type", "Description"), sorted(
                (t["resource_type"], t["description"]) for t in found)
        return ("Resource Type",), sorted((name,) for name in found)


class ResourceTypeShow(bases.ShowOne):
    """Show details and optionally generate a template for a resource type."""

    embedded_only = True  # the plugin registry

    @property
    def formatter_default(self):
        return "yaml"  # heatclient's YamlFormat

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument("resource_type", metavar="<resource-type>",
                            help="resource type to show details for")
        parser.add_argument("--template-type", metavar="<template-type>",
                            help="optional template type to generate, hot or cfn")
        parser.add_argument("--long", action="store_true",
                            help="show the resource type with its description")
        return parser

    def take_action(self, parsed_args):
        from nestedflow import exceptions
        from nestedflow.cmd.errors import CommandError

        if parsed_args.template_type is not None and parsed_args.long:
            raise CommandError("Cannot use --template-type and --long in one time.")
        try:
            self.app.engine.registry.get(parsed_args.resource_type)
        except exceptions.StackValidationFailed:
            raise CommandError(
                f"Resource type not found: {parsed_args.resource_type}") from None
        catalog = _catalog(self.app)
        if parsed_args.template_type is not None:
            kind = parsed_args.template_type.lower()
            if kind not in ("hot", "cfn"):
                raise CommandError(f"Template type invalid: {parsed_args.template_type}")
            data = catalog.generate_template(None, type_name=parsed_args.resource_type,
                                             template_type=kind)
        else:
            data = catalog.resource_schema(None, type_name=parsed_args.resource_type,
                                           with_description=parsed_args.long)
        names = tuple(data)
        return names, tuple(columns.cell(data[n]) for n in names)
