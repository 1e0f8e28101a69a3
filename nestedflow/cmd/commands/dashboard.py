"""``dashboard``: serve the read-only web dashboard (doc/source/dashboard.rst)."""

from nestedflow.cmd.commands import bases


class RunDashboard(bases.Command):
    """Serve the read-only web dashboard until interrupted.

    Stacks, their resource graphs, checks, events and data, live while a
    traversal runs. Listens on [dashboard] bind_host:port (127.0.0.1:8780);
    it has no login: put it behind an authenticating proxy to serve it wider.
    """

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument("--bind-host", metavar="ADDRESS",
                            help="address to listen on ([dashboard] bind_host)")
        parser.add_argument("--port", type=int, metavar="PORT",
                            help="port to listen on, 0 for any free one ([dashboard] port)")
        return parser

    def take_action(self, parsed_args):
        import signal
        import threading

        from nestedflow.dashboard import server

        conf = self.app.conf
        section = conf.dashboard
        host = parsed_args.bind_host or section.bind_host
        port = section.port if parsed_args.port is None else parsed_args.port
        application = server.make_app(conf, db_url=self.app.db_url,
                                      transport_url=self.app.transport_url)
        running = server.Server(application, host, port, section.threads)
        stopped = threading.Event()
        for signum in (signal.SIGTERM, signal.SIGINT):
            signal.signal(signum, lambda *_: stopped.set())
        try:
            running.start()
        except OSError as error:
            application.close()
            from nestedflow.cmd.errors import CommandError

            raise CommandError(f"cannot listen on {host}:{port}: {error}") from error
        # Scripts (and tests) read where it listens from this line.
        self.app.stdout.write(f"nestedflow dashboard at {running.url}\n")
        self.app.stdout.flush()
        stopped.wait()
        running.stop()
        return 0
