"""``conductor run|list``."""

import argparse

from nestedflow.cmd.commands import bases, tables

COLUMNS = ("name", "host", "pid", "started_at", "job_slots", "jobs")


class RunConductor(bases.Command):
    """Run a conductor in the foreground (same as nestedflow-conductor).

    Claims stack traversal jobs from the jobboard (--jobboard-url) and runs
    them; SIGTERM hands running jobs back at a safe point.
    """

    def get_parser(self, prog_name):
        from nestedflow.cmd import conductor

        parser = super().get_parser(prog_name)
        conductor.add_run_arguments(parser, with_urls=False)
        return parser

    def take_action(self, parsed_args):
        from nestedflow.cmd import conductor

        # The global --db-url/--jobboard-url/--transport-url/--config-file/
        # --debug are the conductor's too.
        options = self.app.options
        args = argparse.Namespace(**vars(parsed_args))
        for name in ("config_files", "db_url", "jobboard_url", "transport_url", "debug"):
            setattr(args, name, getattr(options, name))
        if args.log_file is None:
            args.log_file = options.log_file
        return conductor.run_from_args(args)


class ListConductor(tables.Lister):
    """List live conductors and the jobs they hold."""

    def take_action(self, parsed_args):
        from nestedflow import exceptions
        from nestedflow.cmd.errors import CommandError
        from nestedflow.conductor import listing

        url = self.app.jobboard_url
        if not url:
            raise CommandError("no jobboard: pass --jobboard-url zookeeper://HOST:PORT/ROOT "
                               "(or set NESTEDFLOW_JOBBOARD_URL or [engine] jobboard_url)")
        try:
            described = listing.describe(url)
        except exceptions.NestedflowError:
            raise
        except Exception as exc:
            raise CommandError(f"cannot read the jobboard {_shown(url)}: "
                               f"{type(exc).__name__}: {exc}") from exc
        for warning in described.get("warnings") or ():
            self.app.stderr.write(f"WARNING: {warning}\n")
        self.described = described
        return COLUMNS, [_row(c) for c in described["conductors"]]

    def produce_output(self, parsed_args, column_names, data):
        result = super().produce_output(parsed_args, column_names, data)
        if parsed_args.formatter == "table":
            unclaimed = self.described.get("unclaimed") or []
            orphaned = self.described.get("orphaned") or []
            self.app.stdout.write(
                f"{len(unclaimed)} unclaimed job(s)"
                + (f", {len(orphaned)} held by no live conductor" if orphaned else "") + "\n")
        return result


def _shown(url):
    from nestedflow.dispatch import zookeeper

    try:
        return str(zookeeper.JobboardURL(url))
    except Exception:
        return "(malformed URL)"


def _row(conductor):
    from nestedflow.cmd.commands.columns import JobList

    return (conductor["name"], conductor.get("host"), conductor.get("pid"),
            conductor.get("started_at"), conductor.get("job_slots"),
            JobList(conductor["jobs"]))
