"""Which transport an engine publishes stack completions on.

oslo.messaging defaults ``[DEFAULT] transport_url`` to ``rabbit://`` (a
broker on localhost). An engine nobody configured must not use that: it
would publish every stack's completion to a broker that may not exist
(and did, on the benchmark machine: 8 ms of every small stack's settle).
Only a value someone set counts; otherwise in-process delivery.
"""

from oslo_config import cfg

from nestedflow.conf import engine as engine_opts
from nestedflow.messaging import transport


def _conf(tmp_path, text=None):
    conf = cfg.ConfigOpts()
    engine_opts.register_opts(conf)
    transport.register_opts(conf)
    files = []
    if text is not None:
        path = tmp_path / "nestedflow.conf"
        path.write_text(text)
        files = [str(path)]
    conf([], project="nestedflow", default_config_files=files)
    return conf


def test_unconfigured_engine_delivers_in_process(tmp_path):
    conf = _conf(tmp_path)
    assert conf.transport_url == "rabbit://"  # oslo.messaging's default...
    assert transport.url(conf) == transport.IN_PROCESS  # ...is not a choice


def test_a_configured_transport_url_is_used(tmp_path):
    conf = _conf(tmp_path, "[DEFAULT]\ntransport_url = rabbit://guest:guest@127.0.0.1:5672/\n")
    assert transport.url(conf) == "rabbit://guest:guest@127.0.0.1:5672/"


def test_an_explicit_url_wins_and_the_deprecated_option_still_counts(tmp_path):
    conf = _conf(tmp_path, "[engine]\ntransport_url = rabbit://old@127.0.0.1:5672/\n")
    assert transport.url(conf) == "rabbit://old@127.0.0.1:5672/"
    assert transport.url(conf, "rabbit://explicit@127.0.0.1:5672/") == (
        "rabbit://explicit@127.0.0.1:5672/")
