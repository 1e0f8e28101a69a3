#!/usr/bin/env bash
# The project's test command: starts the ZooKeeper the functional tests use
# (installing the Debian zookeeper package first when it is missing -- as
# root, or through sudo; one line saying what to run when neither works),
# installs the same way the other Debian packages tests drive (tmux,
# chromium for the dashboard's browser tests, graphviz's dot),
# points the tests at the local servers, and runs pytest with the python in
# the README's .venv (or the active virtualenv). Arguments go to pytest:
#
#   tools/test.sh                      # everything, on two pytest-xdist workers
#   tools/test.sh -q tests/unit        # a subset (one process)
#   tools/test.sh -k rollback -x
#
# PostgreSQL, MariaDB and RabbitMQ are expected to be running already; override
# any of the URLs below by exporting it before calling this script.
set -euo pipefail

cd "$(dirname "$0")/.."

: "${NESTEDFLOW_TEST_PG_URL:=postgresql+psycopg2://postgres@127.0.0.1:5432/test}"
: "${NESTEDFLOW_TEST_MYSQL_URL:=mysql+pymysql://root@127.0.0.1:3306/test}"
: "${NESTEDFLOW_TEST_ZK:=127.0.0.1:${NESTEDFLOW_ZK_PORT:-2181}}"
: "${NESTEDFLOW_TEST_RABBIT:=rabbit://guest:guest@127.0.0.1:5672/}"
export NESTEDFLOW_TEST_PG_URL NESTEDFLOW_TEST_MYSQL_URL NESTEDFLOW_TEST_ZK NESTEDFLOW_TEST_RABBIT

tools/zookeeper.sh ensure

# Debian packages the tests drive as real programs: tmux (the command line
# in a real terminal), chromium (the dashboard's browser tests drive it
# through Playwright, which never downloads a browser of its own) and
# graphviz (the stack graph's DOT is rendered by dot). Installed here, as
# ZooKeeper is, so this one command is all a newcomer runs.
missing=()
command -v tmux >/dev/null 2>&1 || missing+=(tmux)
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
command -v dot >/dev/null 2>&1 || missing+=(graphviz)
if [ "${#missing[@]}" -gt 0 ]; then
    as_root=()
    if [ "$(id -u)" -ne 0 ]; then
        if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
            as_root=(sudo -n)
        else
            echo "test.sh: the tests need ${missing[*]}: run 'sudo apt-get install ${missing[*]}'" >&2
            exit 1
        fi
    fi
    export DEBIAN_FRONTEND=noninteractive
    "${as_root[@]}" apt-get install -y --no-install-recommends "${missing[@]}" >/dev/null \
        || { "${as_root[@]}" apt-get update >/dev/null \
             && "${as_root[@]}" apt-get install -y --no-install-recommends "${missing[@]}" >/dev/null; }
fi

# Run `tests` unless the arguments already name test paths (or node ids such
# as tests/unit/test_x.py::test_y): naming both would collect them twice.
has_path=0
for arg in "$@"; do
    case "$arg" in
        -*) ;;
        *) if [ -e "${arg%%::*}" ]; then has_path=1; fi ;;
    esac
done
# The README's virtualenv unless another one is active.
python=python3
if [ -z "${VIRTUAL_ENV:-}" ] && [ -x .venv/bin/python ]; then
    python=.venv/bin/python
elif [ -n "${VIRTUAL_ENV:-}" ]; then
    python="$VIRTUAL_ENV/bin/python"
fi
if [ "$has_path" -eq 1 ]; then
    exec "$python" -m pytest "$@"
fi
# The whole suite on NESTEDFLOW_TEST_PROCESSES pytest-xdist workers (2 by
# default): most functional tests wait on conductors, timeouts and
# servers, so two at a time nearly halve its wall time on two cores. Each
# worker has its own databases, jobboard roots and topics.
exec "$python" -m pytest -n "${NESTEDFLOW_TEST_PROCESSES:-2}" --dist worksteal tests "$@"
