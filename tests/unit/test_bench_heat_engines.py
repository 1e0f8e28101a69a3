"""The heat-engines bench rows without Heat: arguments, the peer's python,
the skip when the peer virtualenv is missing, ratios, targets and the table.
(tests/functional/test_bench_heat_engines.py runs them through Heat.)"""

import json
import os
import stat

import pytest

from bench import cases, cli, heat_engines, report

LEGACY, CONVERGENCE = "heat-legacy", "heat-convergence"


def _run(elapsed, cpu=1.0, validate=None):
    run = {"elapsed_s": elapsed, "cpu_s": cpu, "statements": 1000, "commits": 100,
           "rss_mb": 100.0, "children_rss_mb": 0.0, "loadavg": 1.0}
    if validate is not None:
        run.update(validate_s=validate, validate_cpu_s=validate / 2,
                   total_s=elapsed + validate)
    return run


def _row(nf_s, legacy_s, convergence_s, n=1000, db="sqlite"):
    params = {"n": n, "type": "OS::Heat::None", "pacing": "off"}
    row = {"case": "heat-engines", "db": db, "params": params, "bound_s": None,
           "label": cases.label(cases.BY_NAME["heat-engines"], params), "status": "ok",
           "runs_requested": 1}
    row.update(cli.summarize([_run(nf_s, cpu=nf_s / 2)], n, None))
    cli.add_peers(row, {LEGACY: [_run(legacy_s, 5.0, 1.89)],
                        CONVERGENCE: [_run(convergence_s, 20.0, 1.5)]}, n)
    return row


def test_case_runs_both_heat_engines_beside_nestedflow():
    case = cases.BY_NAME["heat-engines"]
    assert case.peers == (LEGACY, CONVERGENCE)
    assert set(case.peers) == set(heat_engines.ENGINES)
    assert not case.stock
    labels = [cases.label(case, p) for p in case.variants]
    assert labels == ["1000 None", "1000 TestResource", "100 None (Heat paced)"]
    args = cli.parse_args(["--quick", "--cases", "heat-engines", "--db", "sqlite"])
    assert [r["label"] for r in cli.plan(args)] == ["10 None (Heat paced)"]


def test_template_is_n_independent_resources_of_one_type():
    tmpl = heat_engines.template(3, "OS::Heat::TestResource")
    assert tmpl["resources"] == {f"r{i}": {"type": "OS::Heat::TestResource"}
                                 for i in range(3)}


def test_standalone_arguments():
    args = heat_engines.parse_args(["--engines", "convergence", "--resources", "10"])
    assert args.engines == [CONVERGENCE] and args.resources == 10
    assert (args.pacing, args.journal, args.db) == ("off", "wal", "sqlite")
    with pytest.raises(SystemExit):
        heat_engines.parse_args(["--engines", "fast"])


def _repo_with_peer_script(tmp_path, body):
    tools = tmp_path / "tools"
    tools.mkdir()
    script = tools / "heat-peer.sh"
    script.write_text("#!/bin/sh\n" + body)
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return str(tmp_path)


def test_peer_python_asks_heat_peer_sh_for_the_path(tmp_path):
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    python = venv / "bin" / "python"
    python.write_text("")
    python.chmod(0o755)
    root = _repo_with_peer_script(tmp_path, f'[ "$1" = path ] && echo {venv}\n')
    assert heat_engines.peer_python(root) == str(python)


def test_peer_python_is_none_when_not_installed(tmp_path):
    assert heat_engines.peer_python(_repo_with_peer_script(tmp_path, "exit 1\n")) is None
    assert heat_engines.peer_python(str(tmp_path / "nowhere")) is None


def _args(tmp_path):
    return cli.parse_args(["--quick", "--cases", "heat-engines", "--db", "sqlite",
                           "--json", str(tmp_path / "out.json")])


def test_rows_skipped_in_one_line_without_the_peer(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(heat_engines, "peer_python", lambda root=None: None)

    def never(*args, **kwargs):
        raise AssertionError("nothing runs without the peer virtualenv")

    monkeypatch.setattr(cli.Runner, "run", never)
    args = _args(tmp_path)
    results = []
    cli.execute(args, cli.plan(args), results, {}, lambda: None)
    assert [r["status"] for r in results] == ["skipped"]
    assert "tools/heat-peer.sh" in results[0]["note"]
    message = capsys.readouterr().err.strip().splitlines()
    assert len(message) == 1 and "tools/heat-peer.sh" in message[0]
    cli.evaluate(results)
    cells, _ = report.table_rows({"rows": results})[0]
    assert cells[4] == "skipped"


def test_peer_runs_use_the_peer_python_interleaved(tmp_path, monkeypatch):
    """Each run index: nestedflow, then Heat legacy, then convergence, the
    latter two with the peer's python (a stand-in script here)."""
    calls = tmp_path / "calls"
    fake = tmp_path / "peer-python"
    fake.write_text(f"#!/bin/sh\necho peer >> {calls}\n"
                    f"echo '{json.dumps(_run(2.0, validate=0.5))}' > \"$4\"\n")
    fake.chmod(0o755)
    monkeypatch.setattr(heat_engines, "peer_python", lambda root=None: str(fake))
    original = cli.Runner.run
    order = []

    def run(self, case, row, impl, index):
        order.append((impl, index))
        if impl == "nestedflow":
            return _run(0.5)
        return original(self, case, row, impl, index)

    monkeypatch.setattr(cli.Runner, "run", run)
    args = _args(tmp_path)
    args.runs = 2
    results = []
    cli.execute(args, cli.plan(args), results, {}, lambda: None)
    assert order == [("nestedflow", 1), (LEGACY, 1), (CONVERGENCE, 1),
                     ("nestedflow", 2), (LEGACY, 2), (CONVERGENCE, 2)]
    assert calls.read_text().split() == ["peer"] * 4
    row = results[0]
    assert row["vs_peers"] == {LEGACY: 4.0, CONVERGENCE: 4.0}
    assert row["peers"][LEGACY]["validate_s"] == 0.5


def test_table_shows_validate_apart_and_the_ratios():
    row = _row(1.3, 13.37, 59.5)
    cli.evaluate([row])
    lines = report.table_rows({"rows": [row]})
    assert [cells[3] for cells, _ in lines] == ["nestedflow", "Heat legacy", "Heat convergence"]
    legacy = lines[1][0]
    assert legacy[4] == "13.4 (+1.89 validate)"
    assert legacy[5] == "75"  # res/s
    assert legacy[11] == "nestedflow 10.3x"
    note = report.peer_note(row)
    assert "Heat legacy 13.37 s (+1.89 s validate), CPU 5.00 s (+0.94 s)" in note
    assert "10.3x nestedflow's wall, 7.7x its CPU" in note


def test_legacy_target_on_the_sqlite_none_row():
    slow, fast = _row(1.3, 13.37, 59.5), _row(0.4, 13.37, 59.5)
    for row, passed in ((slow, False), (fast, True)):
        targets = cases.targets(row, [row])
        assert [t.passed for t in targets] == [passed]
        assert targets[0].text.startswith(">= 15x Heat legacy (is ")
    assert cases.targets(_row(0.4, 13.37, 59.5, db="postgresql"), []) == []


def test_failed_peer_run_is_reported_not_hidden():
    row = _row(1.3, 13.37, 59.5)
    cli.add_peers(row, {LEGACY: [{"error": "RuntimeError: boom"}],
                        CONVERGENCE: [{"na": "no psycopg2"}]}, 1000)
    assert row["peers"] == {LEGACY: None, CONVERGENCE: None}
    notes = report.notes({"rows": [row], "machine": {"cores": os.cpu_count()}})
    assert any("Heat legacy: RuntimeError: boom" in line for line in notes)
    assert any("Heat convergence: no psycopg2" in line for line in notes)


def test_describe_one_run():
    line = heat_engines.describe(LEGACY, _run(13.37, 5.0, 1.89))
    assert line == ("Heat legacy: 13.37 s (+1.89 s validate), CPU 5.00 s (+0.94 s), "
                    "1000 SQL")
    assert heat_engines.describe(CONVERGENCE, {"na": "x"}) == "Heat convergence: n/a (x)"
