"""``stack create --dry-run`` and ``stack update --dry-run [--show-nested]``.

As python-heatclient's OSC plugin (heatclient/osc/v1/stack.py): a create's
dry run shows the preview's fields, sorted, its ``resources`` as a
structure; an update's shows one field per change (``added``, ``deleted``,
``replaced``, ``unchanged``, ``updated``), each the list of resources.
"""

from nestedflow.cmd.commands import columns

#: The resource fields an update preview lists (heatclient prints its own).
RESOURCE_FIELDS = ("resource_name", "resource_type", "physical_resource_id",
                   "parent_resource")


def add_dry_run(parser, update=False):
    parser.add_argument("--dry-run", action="store_true",
                        help="do not actually perform the stack "
                        + ("update" if update else "create") + ", but show what would be "
                        + ("changed" if update else "created"))
    if update:
        parser.add_argument("--show-nested", action="store_true",
                            help="show nested stacks when performing --dry-run")


def create_preview(app, parsed_args, kwargs):
    preview = app.engine.preview_stack(parsed_args.name, timeout=parsed_args.timeout,
                                       disable_rollback=parsed_args.disable_rollback,
                                       **{k: v for k, v in kwargs.items() if k != "tags"})
    names = tuple(sorted(preview))
    return names, tuple(columns.cell(preview[name]) for name in names)


def update_preview(app, parsed_args, stack_id, kwargs):
    kwargs = {k: v for k, v in kwargs.items() if k not in ("tags", "timeout")}
    changes = app.engine.preview_update_stack(stack_id, existing=parsed_args.existing,
                                              show_nested=parsed_args.show_nested, **kwargs)
    names = tuple(sorted(changes))
    return names, tuple(
        columns.Structure([{field: entry.get(field) for field in RESOURCE_FIELDS
                            if field in entry} for entry in changes[name]])
        for name in names)
