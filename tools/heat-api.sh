#!/usr/bin/env bash
# Run Heat's own, unmodified heat-api (openstack-heat 27.0.1 from the peer
# virtualenv tools/heat-peer.sh installs) on a local port, in front of a
# nestedflow-engine started with [heat_engine] enabled = true.
#
#   tools/heat-api.sh [--port 8004] [--host 127.0.0.1]
#                     [--transport-url rabbit://guest:guest@127.0.0.1:5672/]
#                     [--exchange heat] [--workdir DIR]
#
# Lab configuration, no Keystone: the noauth paste flavor (every request is
# the admin of the project named by the X-Auth-Project header, default
# "admin"), oslo.policy's deprecated rules OR-ed in (noauth's bare "admin"
# role is not expanded to "reader" as Keystone's implied roles would), and
# policy.yaml granting admin the one rule with no deprecated fallback
# (software_deployments:metadata, heat/policies/software_deployments.py),
# no database (heat-api needs none).
# --exchange is heat-api's [DEFAULT] control_exchange: it must match the
# engine's [heat_engine] exchange. The server runs in the foreground (exec):
# stop it with SIGTERM. Clients:
#
#   openstack --os-auth-type none --os-endpoint http://127.0.0.1:8004/v1/admin stack list
set -euo pipefail

cd "$(dirname "$0")/.."

PORT=8004
HOST=127.0.0.1
TRANSPORT_URL="${NESTEDFLOW_TRANSPORT_URL:-rabbit://guest:guest@127.0.0.1:5672/}"
EXCHANGE=heat
WORKDIR=""
while [ $# -gt 0 ]; do
    case "$1" in
        --port) PORT="$2"; shift 2 ;;
        --host) HOST="$2"; shift 2 ;;
        --transport-url) TRANSPORT_URL="$2"; shift 2 ;;
        --exchange) EXCHANGE="$2"; shift 2 ;;
        --workdir) WORKDIR="$2"; shift 2 ;;
        *) echo "heat-api.sh: unknown argument $1" >&2; exit 2 ;;
    esac
done

VENV="$(tools/heat-peer.sh)"
WORKDIR="${WORKDIR:-$(mktemp -d -t nestedflow-heat-api.XXXXXX)}"
mkdir -p "$WORKDIR"
cat > "$WORKDIR/heat.conf" <<CONF
[DEFAULT]
transport_url = $TRANSPORT_URL
control_exchange = $EXCHANGE
rpc_response_timeout = 60
log_file = $WORKDIR/heat-api.log
[paste_deploy]
flavor = noauth
api_paste_config = $VENV/etc/heat/api-paste.ini
[oslo_policy]
enforce_new_defaults = False
enforce_scope = False
policy_file = $WORKDIR/policy.yaml
CONF
cat > "$WORKDIR/policy.yaml" <<'POLICY'
"software_deployments:metadata": "((role:admin or role:reader) and project_id:%(project_id)s) or (role:heat_stack_user and project_id:%(project_id)s)"
POLICY
echo "heat-api on http://$HOST:$PORT/v1/<project> (config $WORKDIR/heat.conf)" >&2
exec "$VENV/bin/heat-wsgi-api" --host "$HOST" --port "$PORT" -- --config-file "$WORKDIR/heat.conf"
