"""CPython's cyclic garbage collector: paused while a flow is built and
compiled, and told once which objects live as long as the process.

Building and compiling a traversal's flow allocates a few hundred
thousand container objects (tasks, their argument mappings, graph and
hierarchy nodes) that all live as long as the traversal. CPython runs a
full collection each time the heap has grown by a quarter, and a full
collection walks every object: during the compile of 4,000 resources that
was three full collections and a third of the time, so the compile time
grew faster than the flow (doc/source/performance.rst). Nothing built
there is garbage yet; the collector resumes when the last build finishes.
Reference counting still frees everything acyclic meanwhile.
"""

import contextlib
import gc
import threading

_lock = threading.Lock()
_depth = 0
_resume = False
_frozen = False


@contextlib.contextmanager
def paused():
    """Pause automatic collection for the block (nestable, thread-safe):
    the collector is resumed when the last overlapping block ends, if it
    was enabled when the first began."""
    global _depth, _resume
    with _lock:
        if _depth == 0:
            _resume = gc.isenabled()
            gc.disable()
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0 and _resume:
                gc.enable()


def freeze_long_lived():
    """Exempt every object alive now from later collections (``gc.freeze``),
    the first time it is called in the process.

    Called once an engine has loaded what runs traversals: the modules,
    plugins and caches then alive (over 100,000 objects) live as long as the
    process, yet every full collection walked them all -- a full collection
    during a 1,000-resource create cost 0.18-0.25 s, and freezing took 6-9%
    off that create's time (doc/source/performance.rst). Collections stay
    automatic for everything made afterwards. Only once: a process that
    builds one engine after another (a test run) would otherwise freeze
    the garbage each one left, which nothing would then free.
    """
    global _frozen
    with _lock:
        if _frozen:
            return
        _frozen = True
    gc.freeze()
