"""The resident engine's wire format and the client's import cost."""

import datetime
import subprocess
import sys

from nestedflow.engine import views
from nestedflow.rpc import wire


def test_values_come_back_as_the_engine_returned_them():
    when = datetime.datetime(2026, 11, 27, 14, 0, 1, 5)
    stack = views.Stack(id="i", name="n", action="CREATE", status="COMPLETE",
                        status_reason="", outputs={"o": [1, "x"]}, parent_id=None,
                        disable_rollback=False, created_at=when, updated_at=None,
                        tags=("a",))
    message = {"result": {"at": when, "pair": ("a", 1), "stacks": [stack], "n": None}}
    line = wire.dumps(message)
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    back = wire.loads(line)
    assert back == message
    assert type(back["result"]["pair"]) is tuple
    assert isinstance(back["result"]["stacks"][0], views.Stack)


def test_the_client_imports_no_sqlalchemy_taskflow_or_oslo_messaging():
    code = ("import sys, nestedflow.rpc.resident_client, nestedflow.cmd.shell; "
            "print(sorted({m.split('.')[0] for m in sys.modules} & "
            "{'sqlalchemy', 'taskflow', 'oslo_messaging', 'oslo_config', 'rich'}))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "[]"
