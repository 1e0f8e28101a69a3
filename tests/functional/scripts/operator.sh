#!/usr/bin/env bash
# The kind of script Heat operators keep, written for `openstack stack ...`
# (python-heatclient's OSC plugin): the test runs it unchanged with
# OPENSTACK pointing at `nestedflow`.
#
#   operator.sh NAME TEMPLATE ENVIRONMENT
set -euo pipefail

OPENSTACK=${OPENSTACK:-openstack}
name=$1
template=$2
environment=$3

$OPENSTACK stack create "$name" -t "$template" -e "$environment" \
    --parameter label=from-script -f value -c id >/dev/null

# Poll until it settles, as scripts did before --wait existed.
for _ in $(seq 1 300); do
    status=$($OPENSTACK stack show "$name" -f value -c stack_status)
    case "$status" in
        *_IN_PROGRESS) sleep 1 ;;
        CREATE_COMPLETE) break ;;
        *) echo "stack $name: $status" >&2; exit 1 ;;
    esac
done
echo "status: $status"

$OPENSTACK stack resource list "$name" -f value -c resource_name -c resource_status | sort
echo "label: $($OPENSTACK stack output show "$name" label -f value -c output_value)"
$OPENSTACK stack list -f value -c "Stack Name" -c "Stack Status"
$OPENSTACK stack delete "$name" --wait -y
[ -z "$($OPENSTACK stack list -f value -c ID)" ] && echo "deleted"
