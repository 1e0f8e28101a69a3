"""Core statements compiled once per dialect, run without SQLAlchemy's
per-execution cache look-up.

``Connection.execute(statement)`` finds the statement's compiled form in
SQLAlchemy's cache by a cache key it generates anew on every execution,
walking the whole statement: 150 us for a resource's compare-and-swap
write with its event (PostgreSQL's ``WITH written AS (UPDATE ...) INSERT
INTO events ...``), on the benchmark machine -- more than the rest of the
statement's client side, and a TestResource's create makes three such
writes. A :class:`Precompiled` keeps one statement's SQL, compiled once for
one dialect, with its parameters' bind processors, and runs it with
``Connection.exec_driver_sql``: the same connection, transaction, cursor
and events (oslo.db's error translation, statement counts), parameters
processed as SQLAlchemy processes them (JSON encoded, SQLite's timestamps
as text) and literal parameters (``atomic_key + 1``) filled in. Only
public SQLAlchemy API is used.

For statements built once and run many times per resource; a statement
whose SQL depends on its parameters (``expanding`` lists, an ``INSERT``
whose columns are its parameters' keys) must go through ``execute``.
"""

import weakref

# Dialect -> {id(statement): (statement, Precompiled)}; the statement is
# kept so that its id is never reused for another one.
_COMPILED = weakref.WeakKeyDictionary()


class Precompiled:
    """One statement compiled for one dialect (see the module docstring)."""

    def __init__(self, statement, dialect):
        compiled = statement.compile(dialect=dialect)
        binds = compiled.binds
        if any(bind.expanding for bind in binds.values()):
            raise ValueError("a statement with expanding parameters cannot be precompiled")
        self.sql = compiled.string
        self._order = tuple(compiled.positiontup) if compiled.positional else None
        self._defaults = {name: bind.effective_value for name, bind in binds.items()
                          if not bind.required}
        processors = []
        for name, bind in binds.items():
            process = bind.type.dialect_impl(dialect).bind_processor(dialect)
            if process is not None:
                processors.append((name, process))
        self._processors = tuple(processors)

    def parameters(self, values):
        """``values`` (by parameter name) as the driver takes them."""
        params = {**self._defaults, **values}
        for name, process in self._processors:
            if name in params:
                params[name] = process(params[name])
        if self._order is None:
            return params
        return tuple(params[name] for name in self._order)

    def execute(self, conn, values):
        """Run on ``conn`` with ``values`` (a dict, or a list of dicts for
        an executemany); returns the cursor result."""
        if isinstance(values, list):
            return conn.exec_driver_sql(self.sql, [self.parameters(v) for v in values])
        return conn.exec_driver_sql(self.sql, self.parameters(values))


def execute(conn, statement, values):
    """``conn.execute(statement, values)``, with ``statement`` compiled once
    per dialect (:class:`Precompiled`)."""
    dialect = conn.dialect
    by_statement = _COMPILED.get(dialect)
    if by_statement is None:
        by_statement = _COMPILED.setdefault(dialect, {})
    found = by_statement.get(id(statement))
    if found is None or found[0] is not statement:
        found = by_statement[id(statement)] = (statement, Precompiled(statement, dialect))
    return found[1].execute(conn, values)

