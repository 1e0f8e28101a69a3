"""What an Engine requires of the process and configuration hosting it.

Concurrency: nestedflow runs on native threads (a traversal's resource
actions on a worker pool's threads; Heat-style polls park as greenlets on
those threads, see :mod:`nestedflow.pools.parking`). A process monkey-patched
by eventlet -- as many Heat services still are -- turns those threads into
green threads of one OS thread, under which the parking pool's own greenlet
switches and blocking database drivers are not supported: such a process
is refused at ``Engine()``. A host patched by eventlet runs nestedflow in a
separate process (``nestedflow-engine``) and calls it through
:class:`nestedflow.rpc.EngineClient`, which is plain oslo.messaging.

Configuration: nestedflow registers its options on oslo.config's global
``cfg.CONF`` (the object Heat and most OpenStack services use) in groups of
its own, and oslo.messaging's exactly as oslo.messaging defines them, so
they never clash with a host's oslo.db, oslo.messaging or oslo.log options;
it never calls ``CONF()`` (parsing is the host's).
"""

import sys

from nestedflow import exceptions


def check_process():
    """Refuse a process monkey-patched by eventlet (see the module docstring)."""
    eventlet = sys.modules.get("eventlet.patcher")
    if eventlet is not None and eventlet.is_monkey_patched("thread"):
        raise exceptions.NestedflowError(
            "this process is monkey-patched by eventlet (threads are green threads): "
            "nestedflow's Engine runs on native threads only; run it in a process of "
            "its own (nestedflow-engine) and call it with nestedflow.rpc.EngineClient")


def check_conf(conf, global_conf):
    """The host's configuration must be oslo.config's global object."""
    if conf is not None and conf is not global_conf:
        raise exceptions.NestedflowError(
            "Engine(conf=...) must be oslo.config's global cfg.CONF, where nestedflow's "
            "options are registered; a separate ConfigOpts object is not supported")
