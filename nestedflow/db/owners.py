"""The owner tokens written into ``stacks.traversal_owner``: who runs a
traversal. A conductor's run is its own name; an embedded engine's runs are
``<engine id>@<random>``, a traversal it stored but has not claimed
``<engine id>@queued``, one it stored and is posting ``<engine id>@unposted``
(:mod:`nestedflow.engine.recovery` tells the story). Here, beside the
heartbeats that find a dead engine's runs by this format, so that every
layer that names runs (the in-process dispatcher, the engine) shares one
definition.
"""

import uuid

#: Between an engine's id and its run's part in an owner token: not a
#: character of a conductor's name, so the two never mix.
SEPARATOR = "@"
#: The run part of a traversal a jobboard engine stored and is posting:
#: the outbox mark, written in the transaction that stores the traversal.
UNPOSTED = "unposted"


#: The owner token of a traversal stored but not yet claimed by a run.
QUEUED = "queued"


def queued_owner(engine_id):
    """The owner of a traversal ``engine_id`` stored and will run."""
    return f"{engine_id}{SEPARATOR}{QUEUED}"


def unposted_owner(engine_id):
    """The owner of a traversal ``engine_id`` stored and posts as a job."""
    return f"{engine_id}{SEPARATOR}{UNPOSTED}"


def run_owner(engine_id):
    """A new owner token for a run of ``engine_id``."""
    return f"{engine_id}{SEPARATOR}{uuid.uuid4().hex}"


def engine_of(owner):
    """The engine id an embedded run's owner token names (None: not one --
    a conductor's run, whose names cannot hold the separator)."""
    engine_id, sep, _ = (owner or "").rpartition(SEPARATOR)
    return engine_id if sep else None
