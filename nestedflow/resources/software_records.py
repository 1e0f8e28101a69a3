"""Software configs' documents and deployments' states, as written.

Shared by the software-config and software-deployment resource types and
by the Engine's software-config methods (:mod:`nestedflow.engine.software_config`),
which sits above them: the resources write through these, not through the
engine.
"""

import datetime

from nestedflow import exceptions
from nestedflow.db import models
from nestedflow.db.software_config import ALL_PROJECTS
from nestedflow.resources import software_config_io as swc_io

#: Heat's SOFTWARE_DEPLOYMENT_STATUSES (heat/rpc/api.py).
IN_PROGRESS, FAILED, COMPLETE = "IN_PROGRESS", "FAILED", "COMPLETE"
#: Heat's SOFTWARE_DEPLOYMENT_OUTPUTS: what every signal may carry.
DEPLOY_OUTPUTS = ("deploy_stdout", "deploy_stderr", "deploy_status_code")


def config_document(config, inputs, outputs, options):
    """What a config stores (its ``config`` column): Heat's
    ``create_software_config`` checks and normalises the inputs and outputs
    (heat/engine/software_config_io.py)."""
    return {"inputs": swc_io.inputs(inputs), "outputs": swc_io.outputs(outputs),
            "options": options, "config": config}


def _parse_time(text):
    """An ISO 8601 time (Heat's ``timeutils.parse_isotime``) as naive UTC."""
    try:
        parsed = datetime.datetime.fromisoformat(str(text))
    except ValueError:
        raise exceptions.StackValidationFailed(
            f"not an ISO 8601 time: {text!r}", path="updated_at") from None
    if parsed.tzinfo is not None:
        parsed = parsed.astimezone(datetime.UTC).replace(tzinfo=None)
    return parsed


def update_deployment(store, deployment_id, project=ALL_PROJECTS, updated_at=None, **fields):
    """Heat's ``update_software_deployment``: the fields given (truthy) are
    written; ``updated_at`` (ISO 8601) defaults to now. Returns
    ``(deployment, config)``."""
    values = {key: value for key, value in fields.items() if value}
    if "status_reason" in values:
        values["status_reason"] = str(values["status_reason"])
    values["updated_at"] = _parse_time(updated_at) if updated_at else models.utcnow()
    return store.update_deployment(deployment_id, values, project)


def record_signal(store, deployment_id, details, updated_at=None, project=ALL_PROJECTS):
    """Record a deployment's signal (its outputs and ``deploy_*`` values)
    while it is IN_PROGRESS; returns Heat's event reason (None when it was
    not IN_PROGRESS: a late signal changes nothing).

    Heat's ``signal_software_deployment``: a non-zero ``deploy_status_code``
    or a value for an ``error_output`` output fails the deployment, the
    reason naming each.
    """
    if not deployment_id:
        raise exceptions.StackValidationFailed("deployment_id must be specified",
                                               path="deployment_id")
    row, config = store.get_deployment(deployment_id, project)
    if row.status != IN_PROGRESS:
        return None
    details = details or {}
    values = dict(row.output_values or {})
    status, reasons = None, {}
    code = details.get("deploy_status_code")
    if code and str(code) != "0":
        status = FAILED
        reasons["deploy_status_code"] = f"Deployment exited with non-zero status code: {code}"
        event_reason = f"deployment {deployment_id} failed ({code})"
    else:
        event_reason = f"deployment {deployment_id} succeeded"
    for output in (config.config or {}).get("outputs") or []:
        key = output["name"]
        if key in details:
            values[key] = details[key]
            if output.get("error_output", False):
                status = FAILED
                reasons[key] = details[key]
                event_reason = f"deployment {deployment_id} failed"
    for key in DEPLOY_OUTPUTS:
        values[key] = details.get(key)
    if status == FAILED:
        reason = ", ".join(f"{key} : {value}" for key, value in reasons.items())
    else:
        status, reason = COMPLETE, "Outputs received"
    update_deployment(store, deployment_id, project, updated_at, output_values=values,
                      status=status, status_reason=reason)
    return event_reason
