"""Living inside a host (the embedding issue): a host's global oslo.config
with oslo.db, oslo.messaging and oslo.log options registered and parsed
before nestedflow is imported; an eventlet-patched process is refused.
Each case runs in a fresh interpreter (a clean global CONF, no patching
leaking into the test process)."""

import subprocess
import sys
import textwrap

HOST = textwrap.dedent("""
    import sys
    from oslo_config import cfg
    from oslo_db import options as db_options
    from oslo_log import log
    import oslo_messaging as messaging

    CONF = cfg.CONF
    db_options.set_defaults(CONF, connection="sqlite:///{db}")
    log.register_options(CONF)
    messaging.set_transport_defaults("host")
    CONF.register_opts([cfg.StrOpt("host_only", default="mine")])
    CONF(["--debug"], project="hostengine", default_config_files=[])
    log.setup(CONF, "hostengine")
    messaging.get_rpc_transport(CONF, url="fake://")

    parse = type(CONF).__call__

    def no_reparse(self, *args, **kwargs):
        if self is CONF:
            raise AssertionError("nestedflow called the host's CONF()")
        return parse(self, *args, **kwargs)  # a private ConfigOpts of nestedflow's

    type(CONF).__call__ = no_reparse

    import nestedflow
    engine = nestedflow.Engine(conf=CONF)
    stack = engine.create_stack("hosted", {{"heat_template_version": "2018-08-31",
        "resources": {{"r": {{"type": "OS::Heat::None"}}}}}})
    print(engine.wait(stack.id).stack_status, CONF.host_only, CONF.debug,
          CONF.database.connection.startswith("sqlite"), CONF.control_exchange)
    engine.close()
""")


def _run(code, tmp_path):
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, cwd=tmp_path)


def test_engine_in_a_host_configuration(tmp_path):
    result = _run(HOST.format(db=tmp_path / "host.sqlite"), tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split()[-5:] == ["CREATE_COMPLETE", "mine", "True", "True", "host"]


def test_a_separate_config_object_is_refused(tmp_path):
    result = _run(textwrap.dedent("""
        from oslo_config import cfg
        import nestedflow
        try:
            nestedflow.Engine(db_url="sqlite://", conf=cfg.ConfigOpts())
        except nestedflow.exceptions.NestedflowError as error:
            print("refused:", error)
    """), tmp_path)
    assert "refused: Engine(conf=...) must be oslo.config's global cfg.CONF" in result.stdout


def test_an_eventlet_patched_process_is_refused(tmp_path):
    result = _run(textwrap.dedent("""
        import eventlet
        eventlet.monkey_patch()
        import nestedflow
        try:
            nestedflow.Engine(db_url="sqlite://")
        except nestedflow.exceptions.NestedflowError as error:
            print("refused:", error)
    """), tmp_path)
    assert "refused: this process is monkey-patched by eventlet" in result.stdout, \
        result.stderr
