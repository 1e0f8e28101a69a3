"""What a traversal job on the jobboard may say, checked before anything of it runs.

A job is read from ZooKeeper, which anyone holding the deployment's
credentials (or, without ACLs, anyone who reaches the server) can write.
The conductor therefore trusts nothing in it until:

1. its details match :data:`SCHEMA` (a JSON schema: only the fields the
   poster and the conductors write, each of its type; the factory from the
   allow-list, the action a known one) -- checked on strings alone, so
   nothing a job names is imported or called first;
2. the stack it names exists in the database and the traversal it names
   is the stack's current one: the database, not the job, is the truth,
   and a job for another traversal would only fence the real one.

A job failing either is refused: logged, moved to the trash with the
reason, never retried (see ``Conductor._refuse``).
"""

import jsonschema

from nestedflow import exceptions
from nestedflow.flows import factories

_ID = {"type": "string", "minLength": 1, "maxLength": 64, "pattern": r"^[A-Za-z0-9._:-]+$"}
_TEXT = {"type": "string", "maxLength": 4096}
_TIME = {"type": "number", "minimum": 0}

#: The details of a stack-traversal job: what ``jobboard.job_details`` posts
#: plus what conductors record in it (attempts, last error, refusal).
SCHEMA = {
    "type": "object",
    "required": ["factory", "kwargs"],
    "additionalProperties": False,
    "properties": {
        "factory": {"type": "string", "enum": sorted(factories.ALLOWED)},
        "kwargs": {
            "type": "object",
            "required": ["stack_id", "traversal_id", "action"],
            "additionalProperties": False,
            "properties": {
                "stack_id": _ID,
                "traversal_id": _ID,
                "action": {"type": "string", "enum": list(factories.ACTIONS)},
            },
        },
        "flow_uuid": _ID,
        "posted_by": _TEXT,
        "posted_at": _TIME,
        "attempts": {"type": "integer", "minimum": 0},
        "last_conductor": _TEXT,
        "last_error": _TEXT,
        "refused": _TEXT,
        "refused_by": _TEXT,
        "refused_at": _TIME,
    },
}

_VALIDATOR = jsonschema.Draft7Validator(SCHEMA)


def _where(error):
    path = ".".join(str(part) for part in error.absolute_path)
    return f"details.{path}" if path else "details"


def schema_refusal(details):
    """Why ``details`` breaks :data:`SCHEMA`, in one line (None: it does not)."""
    if not isinstance(details, dict):
        return "job details are not a JSON object"
    name = details.get("factory")
    if not isinstance(name, str) or name not in factories.ALLOWED:
        return f"flow factory {name!r} is not in nestedflow's allow-list"
    kwargs = details.get("kwargs")
    if isinstance(kwargs, dict) and sorted(kwargs) != ["action", "stack_id", "traversal_id"]:
        return f"arguments {kwargs!r} are not stack_id, traversal_id, action strings"
    error = jsonschema.exceptions.best_match(_VALIDATOR.iter_errors(details))
    if error is None:
        return None
    return f"{_where(error)}: {error.message[:300]}"


def stack_refusal(db, kwargs):
    """Why the stack and traversal a schema-valid job names forbid running it
    (None: the stack exists and the traversal is its current one)."""
    stack_id, traversal_id = kwargs["stack_id"], kwargs["traversal_id"]
    try:
        stack = db.get_stack(stack_id)
    except exceptions.StackNotFound:
        return f"stack {stack_id} no longer exists (or never did)"
    if stack.current_traversal != traversal_id:
        return (f"traversal {traversal_id} is not the current traversal of stack "
                f"{stack_id} (superseded by {stack.current_traversal}, or never its own)")
    return None
