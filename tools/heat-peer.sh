#!/usr/bin/env bash
# Install Heat's own programs as *peers* the tests drive -- never as a
# dependency of nestedflow, which does not import Heat. They go into a
# virtualenv of their own:
#
#   tools/heat-peer.sh            # create or complete the peer virtualenv; prints its path
#   tools/heat-peer.sh path       # print the path only (exit 1 when not installed)
#
# What it holds, pinned to the versions the tests are written against:
#   openstack-heat 27.0.1       heat-wsgi-api, and Heat's own plugin files
#                               (heat/engine/resources/...) for plugin_dirs tests
#   python-heatclient 5.3.0, python-openstackclient 10.5.0   `openstack stack ...`
#   gabbi, tempest, heat-tempest-plugin, stestr   Heat's own API and functional suites
#   psycopg2-binary 2.9.13, PyMySQL 1.2.4   database drivers, for Heat's own engines
#                               on PostgreSQL and MySQL (bench/heat_engines.py); the
#                               versions nestedflow's own virtualenv has
#
# Environment: NESTEDFLOW_HEAT_VENV  where the virtualenv goes (default .venv-heat
# in the repository root).
set -euo pipefail

cd "$(dirname "$0")/.."

VENV="${NESTEDFLOW_HEAT_VENV:-$PWD/.venv-heat}"
PINS=(
    "openstack-heat==27.0.1"
    "python-heatclient==5.3.0"
    "python-openstackclient==10.5.0"
    "gabbi==4.2.3"
    "tempest==47.0.0"
    "heat-tempest-plugin==3.0.0"
    "stestr==4.2.1"
)
# Stamped apart: a virtualenv made before the drivers were added (or by an
# older checkout of this script) keeps its stamp, and only gains the drivers.
DB_PINS=(
    "psycopg2-binary==2.9.13"
    "PyMySQL==1.2.4"
)
STAMP="$VENV/.nestedflow-peer-pins"
DB_STAMP="$VENV/.nestedflow-peer-db-pins"

installed() {
    [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "${PINS[*]}" ] &&
        [ -f "$DB_STAMP" ] && [ "$(cat "$DB_STAMP")" = "${DB_PINS[*]}" ]
}

if [ "${1:-}" = "path" ]; then
    [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "${PINS[*]}" ] || exit 1
    echo "$VENV"
    exit 0
fi

if installed; then
    echo "$VENV"
    exit 0
fi

# Two test processes (pytest-xdist workers) may ask at once on a fresh
# machine: one installs, the other waits and then finds the stamp.
mkdir -p "$(dirname "$VENV")"
exec 9>"$VENV.lock"
flock 9
if installed; then
    echo "$VENV"
    exit 0
fi

if ! [ -f "$STAMP" ] || [ "$(cat "$STAMP")" != "${PINS[*]}" ]; then
    python3 -m venv "$VENV" >&2
    "$VENV/bin/pip" install -q --upgrade pip >&2
    "$VENV/bin/pip" install -q "${PINS[@]}" >&2
    echo "${PINS[*]}" > "$STAMP"
fi
"$VENV/bin/pip" install -q "${DB_PINS[@]}" >&2
echo "${DB_PINS[*]}" > "$DB_STAMP"
echo "$VENV"
