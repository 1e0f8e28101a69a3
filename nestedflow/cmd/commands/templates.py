"""Template, environment and parameter options shared by create and update."""

import argparse
import os


def positive_int(text):
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid integer: {text!r}") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be a positive number of minutes: {text!r}")
    return value


def add_template_arguments(parser, required):
    parser.add_argument("-t", "--template", metavar="<template>", required=required,
                        help="path to the template; the files it names (get_file, "
                        "template resources) are read relative to it")
    parser.add_argument(
        "-e", "--environment", metavar="<environment>", action="append", default=[],
        dest="environments",
        help="path to an environment; may be repeated, later ones override earlier ones "
        "(resource_registry files are read relative to each)")
    parser.add_argument(
        "-P", "--parameter", metavar="<key=value>", action="append", default=[],
        dest="parameters",
        help="parameter value; may be repeated (also 'k1=v1;k2=v2')")
    parser.add_argument(
        "--parameter-file", metavar="<key=file>", action="append", default=[],
        dest="parameter_files",
        help="parameter whose value is the content of a file; may be repeated")


def parse_parameters(items):
    """``["k=v", ...]`` to a dict; the value may itself contain ``=``."""
    from nestedflow.cmd.errors import CommandError

    params = {}
    for item in items or ():
        key, sep, value = item.partition("=")
        key = key.strip()
        if not sep or not key:
            raise CommandError(f"invalid parameter {item!r}: expected KEY=VALUE")
        params[key] = value
    return params


def _split_parameters(items):
    # heatclient accepts "k1=v1;k2=v2" in one --parameter; a ';' inside a
    # value that has no '=' after it stays part of that value.
    out = []
    for item in items or ():
        parts = item.split(";")
        if all("=" in p for p in parts):
            out.extend(parts)
        else:
            out.append(item)
    return out


def existing_file(path, what):
    from urllib import parse

    from nestedflow.cmd.errors import CommandError

    scheme = parse.urlparse(path).scheme
    # A one-letter scheme is a Windows drive, not a URL.
    if len(scheme) > 1 and scheme != "file":
        # heatclient fetches a URL given as -t; nestedflow reaches no network
        # (the engine may run where the CLI's proxies and credentials do not).
        raise CommandError(f"{what} {path} refused: nestedflow reads local files only "
                           "and fetches nothing over the network; download it and pass "
                           "the local path")
    if scheme == "file":
        path = parse.unquote(parse.urlparse(path).path)
    if not os.path.exists(path):
        raise CommandError(f"{what} file {path} not found")
    if not os.path.isfile(path):
        raise CommandError(f"{what} file {path} is not a regular file")
    return path


def _parameter_files(items):
    params = {}
    for key, path in parse_parameters(items).items():
        with open(existing_file(path, f"parameter {key}"), encoding="utf-8") as f:
            params[key] = f.read()
    return params


def template_kwargs(parsed_args):
    """Engine keyword arguments: the template and environments with their
    files map (collected from local paths as heatclient does) and the
    parameters."""
    from nestedflow.cmd import template_files
    from nestedflow.cmd.errors import CommandError

    parameters = parse_parameters(_split_parameters(parsed_args.parameters))
    parameters.update(_parameter_files(parsed_args.parameter_files))
    kwargs = {"template": None, "parameters": parameters or None}
    files = {}
    try:
        if parsed_args.template is not None:
            path = existing_file(parsed_args.template, "template")
            kwargs["template"], files = template_files.template_contents(path)
        if parsed_args.environments:
            paths = [existing_file(e, "environment") for e in parsed_args.environments]
            kwargs["environment"], env_files = template_files.environments_contents(paths)
            files.update(env_files)
    except template_files.FilesError as exc:
        raise CommandError(str(exc)) from None
    from nestedflow.cmd.commands import signals

    hooks = signals.hooks_environment(parsed_args)
    if hooks is not None:
        # Breakpoints asked for on the command line override the files'.
        kwargs["environment"] = template_files.deep_update(
            kwargs.get("environment") or {}, hooks)
    if files:
        kwargs["files"] = files
    return kwargs
