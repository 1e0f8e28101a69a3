"""``stack create|update|delete|list|show`` (as ``openstack stack ...``)."""

import dataclasses

from nestedflow import states
from nestedflow.cmd.commands import bases, columns, previews, signals, tables, templates, waiting

#: ``stack show`` fields, in heatclient's order where it has them.
STACK_FIELDS = ("id", "name", "action", "status", "status_reason", "parent_id",
                "disable_rollback", "created_at", "updated_at", "outputs")
LIST_COLUMNS = ("id", "name", "action", "status", "created_at", "updated_at")
#: ``stack list --tag-mode`` (heatclient's) -> Engine.list_stacks keyword.
TAG_MODES = {None: "tags", "any": "tags_any", "not": "not_tags", "not-any": "not_tags_any"}


def _fields(stack):
    # Every field of the engine's view (new ones show up by themselves),
    # outputs last as heatclient prints them.
    if dataclasses.is_dataclass(stack):
        names = [f.name for f in dataclasses.fields(stack) if f.name != "outputs"]
        return tuple(names) + ("outputs",)
    return STACK_FIELDS


#: heatclient's ``stack show`` fields, in its order (osc/v1/stack.py
#: ``_show_stack``; Heat's format_stack keys), then nestedflow's own.
HEAT_SHOW_FIELDS = ("id", "stack_name", "description", "creation_time", "updated_time",
                    "stack_status", "stack_status_reason", "parameters", "outputs", "parent",
                    "tags", "notification_topics", "capabilities", "disable_rollback",
                    "timeout_mins", "project_id")


#: Fields of the engine's view shown under their own name: nothing of
#: heatclient's says the same.
OWN_SHOW_FIELDS = ("output_errors",)


def _described(engine, stack):
    """Heat's ``description`` and ``parameters`` of a stack (heat/engine/api.py
    format_stack): the template's description, and every template parameter
    with the value it has (hidden ones masked, as get_environment masks
    them) plus Heat's OS::stack_id, OS::stack_name and OS::project_id."""
    from nestedflow import exceptions

    try:
        template = engine.get_template(stack.id) or {}
        given = (engine.get_environment(stack.id) or {}).get("parameters") or {}
    except (exceptions.StackNotFound, AttributeError):
        return None, {}
    declared = template.get("parameters") or template.get("Parameters") or {}
    parameters = {}
    for name, spec in declared.items():
        spec = spec if isinstance(spec, dict) else {}
        if str(spec.get("hidden", spec.get("NoEcho"))).lower() in ("true", "1", "yes", "on"):
            parameters[name] = "******"  # Heat's mask (heat/engine/parameters.py)
            continue
        parameters[name] = given.get(name, spec.get("default", spec.get("Default")))
    parameters.update({"OS::stack_id": stack.id, "OS::stack_name": stack.name,
                       "OS::project_id": getattr(stack, "project_id", None)})
    description = template.get("description", template.get("Description"))
    return description, parameters


def stack_data(stack, parsed_args=None, engine=None):
    """``(names, values)`` of a stack for a ShowOne command: heatclient's
    fields, nestedflow's own, and the view's other names (``name``,
    ``action``, ``status``...) when a ``-c`` asks for them. ``engine``
    gives the description and parameters."""
    from nestedflow.cmd.commands import heat_columns

    description, parameters = _described(engine, stack) if engine is not None else (None, {})
    extra = {"description": description, "parameters": parameters,
             # Heat's format_stack answers these two empty, always.
             "capabilities": [], "notification_topics": []}
    names, values = [], []
    own = tuple(f for f in OWN_SHOW_FIELDS if getattr(stack, f, None))
    legacy = tuple(f for f in _fields(stack) if f not in HEAT_SHOW_FIELDS)
    for field in heat_columns.names(parsed_args, HEAT_SHOW_FIELDS + own, legacy):
        if field in extra:
            values.append(columns.cell(extra[field]))
        elif field == "outputs":
            values.append(columns.Outputs(dict(stack.outputs or {})))
        elif field == "tags":
            values.append(columns.cell(list(getattr(stack, "tags", None) or ())))
        else:
            values.append(heat_columns.value(stack, field))
        names.append(field)
    return tuple(names), tuple(values)


class StackCommand(bases.ShowOne):
    """A command that starts an action on a stack and shows the result.

    The exit status is 1 when the stack did not reach ``<ACTION>_COMPLETE``
    (after printing the stack, with one ``ERROR:`` line naming why).
    """

    #: The action that must complete for exit status 0.
    action = None
    exit_code = 0

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        waiting.add_wait_argument(parser)
        return parser

    def start(self, parsed_args):
        """Start the action; returns the IN_PROGRESS Stack."""
        raise NotImplementedError

    def succeeded(self, stack):
        return waiting.succeeded(stack, self.action)

    def take_action(self, parsed_args):
        started = self.start(parsed_args)
        final, waited = waiting.settle(self.app, parsed_args, started)
        if final is None:
            from nestedflow import exceptions

            raise exceptions.StackNotFound(started.id)
        if waited and not self.succeeded(final):
            self.exit_code = 1
            self.app.stderr.write(waiting.failure_line(final))
        return stack_data(final, parsed_args, self.app.engine)

    def run(self, parsed_args):
        super().run(parsed_args)
        return self.exit_code


def add_tags_argument(parser):
    parser.add_argument("--tags", metavar="<tag1,tag2...>",
                        help="a list of tags to associate with the stack")


def split_tags(text):
    return [t.strip() for t in text.split(",") if t.strip()]


def tags_kwargs(parsed_args):
    """``tags=`` only when given: an update without --tags keeps them (Heat's PATCH)."""
    if parsed_args.tags is None:
        return {}
    return {"tags": split_tags(parsed_args.tags)}


def _stack_arg(parser, help_text="stack to act on (name or ID)"):
    parser.add_argument("stack", metavar="<stack>", help=help_text)


class CreateStack(StackCommand):
    """Create a stack."""

    action = states.CREATE

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument("name", metavar="<stack-name>", help="name of the stack to create")
        templates.add_template_arguments(parser, required=True)
        parser.add_argument("--timeout", type=templates.positive_int, metavar="<timeout>",
                            help="stack creation timeout in minutes")
        rollback = parser.add_mutually_exclusive_group()
        # heatclient's default (osc/v1/stack.py CreateStack: disable_rollback
        # = not enable_rollback): a failed create is left as CREATE_FAILED.
        rollback.add_argument(
            "--enable-rollback", dest="disable_rollback", action="store_false",
            help="roll back a failed create (delete what it created)")
        rollback.add_argument(
            "--disable-rollback", dest="disable_rollback", action="store_true",
            help="leave a failed create as CREATE_FAILED (the default, as heatclient's)")
        parser.set_defaults(disable_rollback=True)
        add_tags_argument(parser)
        signals.add_hook_arguments(parser, "pre-create")
        previews.add_dry_run(parser)
        return parser

    def take_action(self, parsed_args):
        if parsed_args.dry_run:
            return previews.create_preview(self.app, parsed_args,
                                           templates.template_kwargs(parsed_args))
        return super().take_action(parsed_args)

    def start(self, parsed_args):
        kwargs = templates.template_kwargs(parsed_args)
        kwargs.update(tags_kwargs(parsed_args))
        return self.app.engine.create_stack(
            parsed_args.name, disable_rollback=parsed_args.disable_rollback,
            timeout=parsed_args.timeout, **kwargs)


class UpdateStack(StackCommand):
    """Update a stack."""

    action = states.UPDATE

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        _stack_arg(parser, "name or ID of stack to update")
        templates.add_template_arguments(parser, required=False)
        parser.add_argument(
            "--existing", action="store_true",
            help="re-use the template, parameters and environment of the current stack; "
            "-t may then be left out, and what is given is merged with what is stored")
        rollback = parser.add_mutually_exclusive_group()
        rollback.add_argument(
            "--rollback", dest="rollback", nargs="?", const="enabled",
            choices=("enabled", "disabled", "keep"),
            help="enabled: roll back if the update fails; disabled: do not; keep: as the "
            "stack was created (default)")
        rollback.add_argument("--no-rollback", dest="rollback", action="store_const",
                              const="disabled", help="same as --rollback disabled")
        parser.set_defaults(rollback="keep")
        parser.add_argument(
            "--converge", action="store_true",
            help="refused: heatclient's observe-reality update; nestedflow keeps no "
                 "observed state to converge from")
        parser.add_argument("--timeout", type=templates.positive_int, metavar="<timeout>",
                            help="stack update timeout in minutes (from this update on)")
        add_tags_argument(parser)
        signals.add_hook_arguments(parser, "pre-update")
        parser.add_argument("--clear-parameter", metavar="<parameter>", action="append",
                            default=[], help="with --existing: set this parameter back to "
                                             "its default; may be repeated")
        previews.add_dry_run(parser, update=True)
        return parser

    def take_action(self, parsed_args):
        if parsed_args.dry_run:
            self._check_template(parsed_args)
            stack = self.app.find_stack(parsed_args.stack)
            return previews.update_preview(self.app, parsed_args, stack.id,
                                           templates.template_kwargs(parsed_args))
        return super().take_action(parsed_args)

    @staticmethod
    def _check_template(parsed_args):
        from nestedflow.cmd.errors import CommandError

        if parsed_args.template is None and not parsed_args.existing:
            raise CommandError("a template (-t) is required unless --existing is given")

    def start(self, parsed_args):
        self._check_template(parsed_args)
        if parsed_args.converge:
            from nestedflow.cmd.errors import CommandError

            # Heat's converge re-reads every resource's real state from its
            # service before updating; nestedflow's plugins have no such read.
            raise CommandError("--converge is not supported: nestedflow does not observe "
                               "resources' real state; update without it")
        kwargs = templates.template_kwargs(parsed_args)
        kwargs.update(tags_kwargs(parsed_args))
        if parsed_args.timeout is not None:
            kwargs["timeout"] = parsed_args.timeout
        stack = self.app.find_stack(parsed_args.stack)
        disable_rollback = {"enabled": False, "disabled": True}.get(parsed_args.rollback)
        if parsed_args.clear_parameter:
            kwargs["clear_parameters"] = parsed_args.clear_parameter
        return self.app.engine.update_stack(stack.id, existing=parsed_args.existing,
                                            disable_rollback=disable_rollback, **kwargs)


class DeleteStack(bases.Command):
    """Delete stack(s)."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument("stacks", metavar="<stack>", nargs="+",
                            help="stack(s) to delete (name or ID)")
        parser.add_argument("-y", "--yes", action="store_true",
                            help="skip the yes/no prompt (assume yes)")
        waiting.add_wait_argument(parser)
        return parser

    def _confirmed(self):
        isatty = getattr(self.app.stdin, "isatty", None)
        if not (isatty and isatty()):
            return True  # a script: heatclient asks only on a terminal too
        self.app.stdout.write("Are you sure you want to delete this stack(s) [y/N]? ")
        self.app.stdout.flush()
        answer = self.app.stdin.readline().strip().lower()
        return answer in ("y", "yes")

    def take_action(self, parsed_args):
        if not parsed_args.yes and not self._confirmed():
            self.app.stdout.write("Stack(s) not deleted\n")
            return 0
        failures = 0
        for name_or_id in parsed_args.stacks:
            stack = self.app.find_stack(name_or_id)
            started = self.app.engine.delete_stack(stack.id)
            final, waited = waiting.settle(self.app, parsed_args, started)
            if not waited:
                self.app.stdout.write(f"Stack {started.name} {started.action}_"
                                      f"{started.status}\n")
            elif final is None or waiting.succeeded(final, states.DELETE):
                self.app.stdout.write(f"Stack {started.name} deleted\n")
            else:
                failures += 1
                self.app.stderr.write(waiting.failure_line(final))
        return 1 if failures else 0


#: heatclient's ``stack list`` columns (osc/v1/stack.py ``_list``).
HEAT_LIST_COLUMNS = ("ID", "Stack Name", "Stack Status", "Creation Time", "Updated Time")


class ListStack(tables.Lister):
    """List stacks."""

    def get_parser(self, prog_name):
        from nestedflow.cmd.commands import listing

        parser = super().get_parser(prog_name)
        parser.add_argument("--nested", "--show-nested", dest="show_nested",
                            action="store_true", help="include nested stacks in the list")
        parser.add_argument("--tags", metavar="<tag1,tag2...>",
                            help="only stacks with these tags (see --tag-mode)")
        parser.add_argument("--deleted", action="store_true",
                            help="include deleted stacks (with their deletion state)")
        parser.add_argument("--hidden", action="store_true",
                            help="include stacks tagged with one of [engine] "
                                 "hidden_stack_tags")
        parser.add_argument("--all-projects", action="store_true",
                            help="every project's stacks (an embedded engine, with no "
                                 "request context, already lists them all)")
        parser.add_argument(
            "--tag-mode", choices=("any", "not", "not-any"),
            help="with --tags: 'any' (one of them), 'not' (not all of them), 'not-any' "
            "(none of them); default: all of them")
        length = parser.add_mutually_exclusive_group()
        length.add_argument("--short", action="store_true",
                            help="list fewer fields (no creation and update times)")
        length.add_argument("--long", action="store_true",
                            help="list additional fields (the project)")
        listing.add_arguments(parser, LIST_COLUMNS + ("stack_name", "stack_status",
                                                      "creation_time", "updated_time"))
        return parser

    def take_action(self, parsed_args):
        from nestedflow.cmd.commands import heat_columns, listing

        kwargs = {}
        if parsed_args.tags:
            kwargs[TAG_MODES[parsed_args.tag_mode]] = split_tags(parsed_args.tags)
        if parsed_args.deleted:
            kwargs["show_deleted"] = True
        if parsed_args.hidden:
            kwargs["show_hidden"] = True
        stacks = self.app.reader.list_stacks(show_nested=parsed_args.show_nested, **kwargs)
        stacks = listing.select(stacks, parsed_args, "id")
        shown = HEAT_LIST_COLUMNS[:3] if parsed_args.short else HEAT_LIST_COLUMNS
        if parsed_args.long:
            # heatclient inserts the owner third with --long; here the project.
            shown = shown[:2] + ("Project",) + shown[2:]
        if parsed_args.show_nested:
            shown += ("Parent",)
        if parsed_args.deleted:
            # heatclient's _list (osc/v1/stack.py) appends it, after Parent.
            shown += ("Deletion Time",)
        names = heat_columns.names(parsed_args, shown, LIST_COLUMNS)
        return names, heat_columns.rows(stacks, names)


class ShowStack(bases.ShowOne):
    """Show stack details."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        _stack_arg(parser, "stack to display (name or ID)")
        parser.add_argument("--no-resolve-outputs", action="store_true",
                            help="do not show the outputs (heatclient's: skips resolving them)")
        return parser

    def take_action(self, parsed_args):
        names, values = stack_data(self.app.find_stack(parsed_args.stack), parsed_args,
                                   self.app.engine)
        if parsed_args.no_resolve_outputs:
            # heatclient's _show_stack leaves the outputs field out.
            keep = [i for i, name in enumerate(names) if name != "outputs"]
            names, values = tuple(names[i] for i in keep), tuple(values[i] for i in keep)
        return names, values

