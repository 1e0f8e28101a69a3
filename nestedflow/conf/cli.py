"""Options of the command line's resident engine (``nestedflow`` and
``nestedflow-engine``; :mod:`nestedflow.rpc.resident_client`).

A ``nestedflow-engine`` also listens on a local socket; the command line
sends its calls there when one answers, instead of building an engine in
its own process (the import and build cost of every command).
"""

from oslo_config import cfg

GROUP = "cli"

ENGINE_CHOICES = ("auto", "embedded", "remote")

cli_opts = [
    cfg.StrOpt(
        "engine",
        default="auto",
        choices=[
            ("auto", "the resident engine when one answers on engine_socket and "
             "serves the same database, else an engine in the command's own process"),
            ("embedded", "always an engine in the command's own process"),
            ("remote", "always the resident engine; a command fails when none answers"),
        ],
        help="Which engine a nestedflow command uses ($NESTEDFLOW_ENGINE and "
        "--engine override it).",
    ),
    cfg.StrOpt(
        "engine_socket",
        sample_default="$XDG_RUNTIME_DIR/nestedflow/engine.sock",
        help="Local socket the resident engine (nestedflow-engine) listens on "
        "and the command line reaches it by ($NESTEDFLOW_ENGINE_SOCKET "
        "overrides it). Default: nestedflow/engine.sock in $XDG_RUNTIME_DIR, "
        "else engine.sock in the user's data directory (beside the default "
        "SQLite file). Only its owner may connect: the engine runs what it is "
        "sent with its own database credentials.",
    ),
    cfg.BoolOpt(
        "serve_socket",
        default=True,
        help="Whether nestedflow-engine listens on engine_socket. A second "
        "engine on one host finds the socket served and leaves it to the first.",
    ),
]


def register_opts(conf):
    conf.register_opts(cli_opts, group=GROUP)


def list_opts():
    return [(GROUP, cli_opts)]
