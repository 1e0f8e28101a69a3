"""oslo conventions the docs rely on: the sample configuration has the
oslo.db, oslo.log and oslo.messaging namespaces, and reno's notes lint."""

import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.path.dirname(sys.executable)


def test_genconfig_has_the_oslo_namespaces(tmp_path):
    sample = tmp_path / "nestedflow.conf.sample"
    subprocess.run([os.path.join(BIN, "oslo-config-generator"), "--config-file",
                    "etc/nestedflow-config-generator.conf", "--output-file", str(sample)],
                   cwd=ROOT, check=True, capture_output=True, timeout=120)
    text = sample.read_text()
    for needle in ("[database]\n", "#connection = <None>",           # oslo.db
                   "#log_config_append = <None>", "#debug = false",  # oslo.log
                   "#transport_url = rabbit://",                     # oslo.messaging
                   "[oslo_messaging_notifications]",
                   "[engine]\n", "#max_nested_stack_depth = 5"):     # nestedflow
        assert needle in text, needle


def test_reno_lint_passes():
    proc = subprocess.run([os.path.join(BIN, "reno"), "lint"], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
