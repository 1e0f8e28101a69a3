import os

from oslo_config import cfg

GROUP = "engine"


def _default_workers():
    # Resource actions mostly wait on I/O, so a few per core keeps the
    # cores busy without letting a 1,000-resource stack open 1,000 threads.
    return max(4, 4 * (os.cpu_count() or 1))


engine_opts = [
    cfg.IntOpt(
        "max_workers",
        default=_default_workers(),
        min=1,
        help="Resource actions of one stack traversal that may run at once.",
    ),
    cfg.IntOpt(
        "max_nested_waits",
        default=32,
        min=0,
        help="Resource actions of one traversal that may wait for their nested "
        "stacks beyond max_workers: waiting does not count as running, so a parent "
        "keeps more children in flight than it has workers.",
    ),
    cfg.IntOpt(
        "max_template_size",
        default=524288,
        min=1,
        help="Largest accepted template, in bytes (Heat's default).",
    ),
    cfg.IntOpt(
        "max_resources_per_stack",
        default=1000,
        min=1,
        help="Most resources one stack tree may hold.",
    ),
    cfg.IntOpt(
        "max_nested_stack_depth",
        default=5,
        min=0,
        help="Deepest nesting of stacks inside stacks.",
    ),
    cfg.IntOpt(
        "max_template_values",
        default=1000000,
        min=1,
        help="Most values (mappings, lists, scalars) a template, environment or "
        "parameter value may hold once YAML aliases are expanded: a few hundred "
        "bytes of aliases can stand for billions of values.",
    ),
    cfg.IntOpt(
        "max_template_depth",
        default=100,
        min=1,
        help="Deepest nesting of mappings and lists inside a template, environment "
        "or parameter value (kept well below Python's recursion limit).",
    ),
    cfg.IntOpt(
        "max_parameters",
        default=1000,
        min=0,
        help="Most parameters one template may declare.",
    ),
    cfg.IntOpt(
        "max_outputs",
        default=1000,
        min=0,
        help="Most outputs one template may declare.",
    ),
    cfg.IntOpt(
        "max_parameter_size",
        default=524288,
        min=1,
        help="Largest value of one parameter, in bytes (as JSON for lists and maps).",
    ),
    cfg.IntOpt(
        "max_function_string_size",
        default=1048576,
        min=1024,
        help="Most characters of text one intrinsic function call may build "
        "(str_replace, list_join, make_url...; for repeat, all the text it "
        "substitutes). 1 MiB: twice max_template_size, so any template or file "
        "can be substituted into and still fit, and the largest request body "
        "Heat accepts (its max_json_body_size).",
    ),
    cfg.IntOpt(
        "max_function_result_items",
        default=100000,
        min=100,
        help="Most items of the list or map one intrinsic function call may "
        "return (repeat, str_split, list_concat, map_merge...); for repeat, its "
        "copies times the values in one copy of its template, counted before "
        "they are made. Far above real templates, low enough that one call "
        "cannot take more than some tens of MB.",
    ),
    cfg.BoolOpt(
        "freeze_startup_objects",
        default=True,
        help="Once the engine has loaded what runs traversals (plugins, TaskFlow, "
        "oslo.messaging), exempt every object alive then from the cyclic garbage "
        "collector (gc.freeze): its full collections walk only what was made "
        "later. Objects made before that point which later become cyclic garbage "
        "are never freed; turn this off in a host process that builds its engine "
        "before the rest of its long-lived state is settled.",
    ),
    cfg.BoolOpt(
        "database_only_waves",
        default=True,
        help="Create and delete the resources whose actions only write "
        "nestedflow's database (OS::Heat::None, OS::Heat::Value, ...) a "
        "dependency wave at a time: one task and one transaction per wave, "
        "with the same per-resource states and events "
        "(doc/source/performance.rst). Off: a task per resource.",
    ),
    cfg.ListOpt(
        "hidden_stack_tags",
        default=["data-processing-cluster"],
        help="Stacks with any of these tags are left out of stack lists unless "
        "hidden ones are asked for (Heat's [DEFAULT] hidden_stack_tags).",
    ),
    cfg.StrOpt(
        "jobboard_url",
        help="zookeeper://HOST:PORT/ROOT to post traversals as jobs for "
        "conductors; unset runs them in-process.",
    ),
    cfg.StrOpt(
        "transport_url",
        deprecated_for_removal=True,
        deprecated_reason="oslo.messaging's own [DEFAULT] transport_url is read "
        "first; this copy is only read when that is unset.",
        help="oslo.messaging transport for stack notifications (unset: "
        "[DEFAULT] transport_url, else fake://, in-process only).",
    ),
    cfg.StrOpt(
        "signal_url_base",
        help="Where resources are signalled from outside, when a heat-api "
        "forwards Heat's resource signal to this engine: its orchestration "
        "endpoint with the project (http://heat:8004/v1/<project>). Wait "
        "condition handles and scaling policies answer their signal URLs "
        "under it (.../stacks/<name>/<id>/resources/<resource>/signal), and "
        "curl_cli as a curl command. Unset: the URLs name nestedflow's own "
        "signal path (nestedflow:stacks/...) and curl_cli is the "
        "`nestedflow stack resource signal` command.",
    ),
]


def register_opts(conf):
    conf.register_opts(engine_opts, group=GROUP)


def list_opts():
    return [(GROUP, engine_opts)]
