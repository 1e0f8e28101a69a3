"""Keep a fenced run's expected ending out of the error log.

A run that lost its traversal (a conductor paused past its ZooKeeper
session, then woken) stops at its next write with an
:class:`~nestedflow.exceptions.OwnershipLost`. That is fencing working as
designed, and the conductor reports it in one WARNING naming the stack,
the traversal and the new owner; TaskFlow, however, logs every atom and
engine failure on the way down at ERROR with a traceback -- hundreds of
lines for one fenced run. :class:`FencedRunFilter` drops those records
(or, where the logger is at DEBUG, keeps them as DEBUG).
"""

import logging

from nestedflow import exceptions

#: The loggers that report an atom's or an engine's failure.
LOGGERS = (
    "taskflow.engines.action_engine.builder",
    "taskflow.engines.action_engine.completer",
    "taskflow.engines.action_engine.engine",
    "taskflow.engines.action_engine.executor",
    "taskflow.engines.action_engine.runtime",
    "taskflow.engines.action_engine.actions.task",
    "taskflow.engines.action_engine.actions.retry",
    "taskflow.storage",
    # save_and_reraise_exception's "Original exception being dropped".
    "oslo_utils.excutils",
)


def _names(cls):
    """Qualified names of ``cls`` and every subclass (as tracebacks print them)."""
    found = {f"{cls.__module__}.{cls.__qualname__}"}
    for sub in cls.__subclasses__():
        found |= _names(sub)
    return found


def is_fenced(record):
    """Does ``record`` report a run stopping because it lost its traversal?"""
    if record.exc_info and isinstance(record.exc_info[1], exceptions.OwnershipLost):
        return True
    try:
        message = record.getMessage()
    except Exception:
        return False
    # Failures TaskFlow formats itself (its Failure objects) carry the
    # exception only as text.
    return any(name in message for name in _names(exceptions.OwnershipLost))


class FencedRunFilter(logging.Filter):
    def filter(self, record):
        if record.levelno <= logging.DEBUG or not is_fenced(record):
            return True
        if not logging.getLogger(record.name).isEnabledFor(logging.DEBUG):
            return False
        record.levelno, record.levelname = logging.DEBUG, "DEBUG"
        return True


_FILTER = FencedRunFilter()


def install():
    """Put the filter on TaskFlow's failure loggers (idempotent)."""
    for name in LOGGERS:
        logger = logging.getLogger(name)
        if _FILTER not in logger.filters:
            logger.addFilter(_FILTER)
