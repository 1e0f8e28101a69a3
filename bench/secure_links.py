"""The conductor rows with every link secured, side by side with none.

    python -m bench.secure_links --rounds 4 --out /tmp/nf-secure [BENCH ARGS...]

Starts servers of its own (the ones tests/functional/test_tls_links.py
uses: tests/functional/tls_servers.py): one ZooKeeper with a plain port and
a ``secureClientPort`` with SASL logins, one PostgreSQL with ``ssl = on``,
and two relays in front of the machine's RabbitMQ, one plain and one
terminating TLS. Then runs ``python -m bench --cases group`` once per mode
and round, alternating the order, with ``NESTEDFLOW_BENCH_JOBBOARD_URL``,
``NESTEDFLOW_BENCH_TRANSPORT_URL`` and ``--pg-url`` naming the links:

* ``off``: plain ZooKeeper port, no credentials; plain relay; sslmode=disable;
* ``on``: TLS, SASL DIGEST-MD5 credentials (so ACLs) and a client
  certificate; TLS relay (``ssl=true&ssl_ca_file=``); sslmode=verify-full;
* ``direct``: as ``off`` with the broker itself instead of the relay;
* ``zkpg``: as ``on`` with the broker itself (ZooKeeper and PostgreSQL secured).

Prints each row's times per mode and their medians (doc/source/performance.rst,
*Authentication and TLS on the links*).
"""

import argparse
import json
import os
import pathlib
import statistics
import subprocess
import sys
import uuid

REPO = pathlib.Path(__file__).resolve().parent.parent
RABBIT = ("127.0.0.1", 5672)


def _servers(out):
    sys.path.insert(0, str(REPO / "tests" / "functional"))
    import tls_servers

    certs = tls_servers.make_certs(out / "certs")
    password = uuid.uuid4().hex
    zk = tls_servers.SecureZooKeeper(out / "zk", certs, {"conductor": password})
    zk.start()
    pg = tls_servers.SslPostgres(certs)
    pg.start()
    tls_relay = tls_servers.TlsProxy(RABBIT, certs.server_crt, certs.server_key)
    plain_relay = tls_servers.TlsProxy(RABBIT)
    pg_base = f"postgresql+psycopg2://postgres@127.0.0.1:{pg.port}/postgres"
    links = {
        "off": (f"zookeeper://127.0.0.1:{zk.port}/nfb",
                f"rabbit://guest:guest@127.0.0.1:{plain_relay.port}/",
                f"{pg_base}?sslmode=disable"),
        "on": (f"zookeeper://conductor:{password}@{zk.secure_hosts}/nfb?sasl_mechanism="
               f"DIGEST-MD5&use_ssl=true&ca={certs.ca_pem}&certfile={certs.client_crt}"
               f"&keyfile={certs.client_key}",
               f"rabbit://guest:guest@127.0.0.1:{tls_relay.port}/?ssl=true"
               f"&ssl_ca_file={certs.ca_pem}",
               f"{pg_base}?sslmode=verify-full&sslrootcert={certs.ca_pem}"),
    }
    direct = f"rabbit://guest:guest@{RABBIT[0]}:{RABBIT[1]}/"
    links["direct"] = (links["off"][0], direct, links["off"][2])
    links["zkpg"] = (links["on"][0], direct, links["on"][2])

    def stop():
        tls_relay.close()
        plain_relay.close()
        pg.stop()
        zk.stop()

    return links, stop


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m bench.secure_links")
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--modes", default="off,on")
    parser.add_argument("--out", default="/tmp/nestedflow-bench-secure-links")
    args, bench_args = parser.parse_known_args(argv)
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    modes = args.modes.split(",")
    links, stop = _servers(out)
    times = {}
    try:
        for round_ in range(args.rounds):
            order = modes if round_ % 2 == 0 else modes[::-1]
            for mode in order:
                jobboard, transport, db = links[mode]
                env = dict(os.environ, NESTEDFLOW_BENCH_JOBBOARD_URL=jobboard,
                           NESTEDFLOW_BENCH_TRANSPORT_URL=transport)
                result = out / f"{mode}-{round_}.json"
                subprocess.run([sys.executable, "-m", "bench", "--cases", "group", "--db",
                                "postgresql", "--pg-url", db, "--no-stock", "--json",
                                str(result), *(bench_args or ["--sizes", "1000", "--runs", "1"])],
                               cwd=REPO, env=env, check=True, capture_output=True)
                for row in json.loads(result.read_text())["rows"]:
                    key = f"{row['params']['members']}x{row['params']['per_member']} " \
                          f"c={row['params']['conductors']}"
                    times.setdefault(key, {}).setdefault(mode, []).extend(row["times_s"])
                print(f"round {round_} {mode} done", flush=True)
    finally:
        stop()
    for key, by_mode in sorted(times.items()):
        medians = {mode: statistics.median(values) for mode, values in by_mode.items()}
        ratio = (f"  on/off {medians['on'] / medians['off']:.3f}"
                 if {"on", "off"} <= set(medians) else "")
        print(key, "  ".join(f"{mode}: {' '.join(f'{t:.2f}' for t in by_mode[mode])} -> "
                             f"{medians[mode]:.2f}" for mode in modes if mode in by_mode) + ratio)
    return 0


if __name__ == "__main__":
    sys.exit(main())
