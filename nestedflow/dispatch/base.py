"""How a traversal gets to whoever runs it."""

import abc
import functools
import importlib.metadata
import urllib.parse

from nestedflow import exceptions

#: The stevedore entry-point group of the dispatchers, named by the scheme
#: of the jobboard URL that selects them (as TaskFlow's jobboard backends
#: and tooz's drivers are): a new backend is an entry point, not an engine
#: change.
NAMESPACE = "nestedflow.dispatchers"

#: The dispatcher of an engine with no jobboard URL: traversals run in process.
IN_PROCESS = "local"


class Dispatcher(abc.ABC):
    """Hands traversals to something that runs them.

    The embedded engine runs them in local threads; the distributed one
    posts a job that a conductor claims. Either way the traversal is run by
    :func:`nestedflow.flows.runner.run_traversal`.
    """

    #: True when traversals run in this process (callers must keep it alive).
    runs_in_process = True

    @abc.abstractmethod
    def dispatch(self, stack_id, traversal_id, action):
        """Arrange for the traversal to run; returns at once."""

    @abc.abstractmethod
    def add_done_callback(self, callback):
        """Call ``callback()`` whenever a traversal run by this process ends
        (a dispatcher that runs nothing itself may ignore it)."""

    @abc.abstractmethod
    def close(self):
        """Stop accepting work; wait for what this process runs itself."""

    def unserved(self):
        """Why nothing would run a traversal posted now (one line), or None
        when something would -- always, for one that runs them itself."""
        return None

    @classmethod
    def from_url(cls, url, *, runtime, backend):
        """The dispatcher an engine selects with ``url`` (its scheme names
        the entry point), running traversals with ``runtime`` and journaling
        them in ``backend``. Dispatchers made otherwise need not offer it."""
        raise NotImplementedError(f"{cls.__name__} is not chosen by a URL")


def dispatcher_class(url):
    """The dispatcher class the scheme of ``url`` names (no URL: in process)."""
    scheme = urllib.parse.urlsplit(url).scheme if url else IN_PROCESS
    found = _registry().get(scheme)
    if found is not None:
        return found
    failure = _registry().failure(scheme)
    if failure is not None:
        raise failure.error  # e.g. kazoo missing: the caller says what to install
    known = sorted(ep.name for ep in importlib.metadata.entry_points(group=NAMESPACE))
    # The URL may carry credentials: show where it points, not them.
    parts = urllib.parse.urlsplit(url)
    shown = url if "@" not in parts.netloc else parts._replace(
        netloc="***@" + parts.netloc.rpartition("@")[2], query="").geturl()
    raise exceptions.NestedflowError(
        f"jobboard_url {shown!r}: no dispatcher for the scheme {scheme!r} "
        f"(known: {', '.join(known)})") from None


@functools.cache
def _registry():
    # Built on first use: a command that only reads stacks starts faster
    # (stevedore is not imported), and only the dispatcher asked for is
    # imported -- the ZooKeeper one pulls in kazoo and TaskFlow's jobboard.
    from nestedflow.plugins.registry import Registry

    return Registry(NAMESPACE)
