"""The stock-TaskFlow baseline: the same graph as plain tasks, stock SQL persistence.

No nestedflow code runs here: ``taskflow.task.Task`` no-op (or sleeping)
tasks in one ``graph_flow.Flow`` (added in a single ``add(*tasks)`` call),
run by ``taskflow.engines.load(..., engine="parallel")`` with the stock
``SQLAlchemyBackend`` on the same database URL and the same worker count.
"""

import contextlib
import time
import uuid

import futurist
import taskflow.engines
from taskflow import task
from taskflow.patterns import graph_flow
from taskflow.persistence import models as tf_models
from taskflow.persistence.backends import impl_sqlalchemy

from bench import shapes


class NodeTask(task.Task):
    """Requires its parents' symbols, provides its own, sleeps its wait."""

    def __init__(self, name, parents, wait):
        super().__init__(name=name, provides=name, requires=list(parents))
        self.wait = wait

    def execute(self, **parents):
        if self.wait:
            time.sleep(self.wait)
        return self.name


def build_flow(nodes, name="stock"):
    flow = graph_flow.Flow(name)
    flow.add(*[NodeTask(n, parents, wait) for n, parents, wait in nodes])
    return flow


def backend_for(url):
    backend = impl_sqlalchemy.SQLAlchemyBackend({"connection": url})
    with contextlib.closing(backend.get_connection()) as conn:
        conn.upgrade()
    return backend


def new_book(backend, name):
    book = tf_models.LogBook(name, uuid=str(uuid.uuid4()))
    with contextlib.closing(backend.get_connection()) as conn:
        conn.save_logbook(book)
    return book


def load_engine(nodes, backend, workers, executor):
    flow = build_flow(nodes)
    book = new_book(backend, f"bench-{uuid.uuid4().hex[:8]}")
    return taskflow.engines.load(flow, engine="parallel", backend=backend, book=book,
                                 executor=executor)


def run(nodes, backend, workers):
    """Build, load, compile and run the flow; what a stack create costs in TaskFlow."""
    executor = futurist.ThreadPoolExecutor(max_workers=workers)
    try:
        engine = load_engine(nodes, backend, workers, executor)
        engine.run()
    finally:
        executor.shutdown(wait=True)


def run_measured(nodes, url, workers, measured):
    """A warm-up flow of 5, then ``measured(run, nodes...)``: a row's baseline."""
    backend = backend_for(url)
    try:
        run(shapes.flat(5), backend, workers)
        measured(run, nodes, backend, workers)
    finally:
        backend.close()


def compile_only(nodes, backend, workers):
    """Build the flow, load it and compile it (no atom rows, nothing runs)."""
    executor = futurist.ThreadPoolExecutor(max_workers=workers)
    try:
        engine = load_engine(nodes, backend, workers, executor)
        engine.compile()
    finally:
        executor.shutdown(wait=True)
