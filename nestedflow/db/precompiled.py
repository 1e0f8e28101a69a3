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

On PostgreSQL (psycopg2) the server parses, analyses and plans every
statement it receives, and those three were half of its CPU in the flat
create of 1,000 TestResources (doc/source/performance.rst, "Prepared
statements on PostgreSQL"): a resource's writes are long ``WITH ... UPDATE
... INSERT`` statements sent as text each time. On a connection set up by
:func:`prepare_on`, a :class:`Precompiled` statement is therefore prepared
once per server session (``PREPARE``) and run as ``EXECUTE`` with its
values, which the server parses in a few microseconds and runs with the
plan it keeps. psycopg2 has no protocol-level prepare, so this is SQL's own
``PREPARE``: it lives as long as the server session, outlives a rolled back
transaction, and needs every statement of a session to reach the same
server session -- which a transaction-mode connection pooler (PgBouncer's
``pool_mode = transaction``) does not give: ``[database]
prepared_statements`` turns it off there.
"""

import hashlib
import re
import weakref

import sqlalchemy as sa

#: The key of a connection's ``info`` (SQLAlchemy's, per server session)
#: under which :func:`prepare_on` keeps the names prepared on it.
PREPARED = "nestedflow.prepared"

_PLACEHOLDER = re.compile(r"%\(([^)]+)\)s")
_TABLE = re.compile(r"\b(?:INTO|UPDATE|FROM)\s+(\w+)")

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
        # The columns it returns (RETURNING, or a SELECT's), each with its
        # type's result processor: rows come back as Connection.execute
        # would give them (JSON decoded, SQLite's timestamps parsed).
        self._columns = tuple(
            (column.key, column.type.dialect_impl(dialect).result_processor(dialect, None))
            for column in getattr(statement, "exported_columns", ()))
        self._prepared = _server_side(self.sql, binds, dialect) if (
            dialect.name == "postgresql" and dialect.driver == "psycopg2"
            and not compiled.positional) else None

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
        if self._prepared is not None:
            done = conn.info.get(PREPARED)
            if done is not None:
                name, prepare, run = self._prepared
                if name not in done:
                    conn.exec_driver_sql(prepare)
                    # Kept even if the transaction it ran in rolls back:
                    # PREPARE is not transactional.
                    done.add(name)
                return conn.exec_driver_sql(run, self.parameters(values))
        return conn.exec_driver_sql(self.sql, self.parameters(values))

    def first(self, conn, values):
        """The first row it returns run with ``values`` on ``conn``, as a
        dict by column key (processed as ``Connection.execute`` would), or
        None."""
        row = self.execute(conn, values).first()
        if row is None:
            return None
        return {key: value if process is None else process(value)
                for (key, process), value in zip(self._columns, row, strict=True)}


def _server_side(sql, binds, dialect):
    """(name, ``PREPARE`` statement, ``EXECUTE`` statement) of ``sql``
    (psycopg2's named placeholders) on PostgreSQL."""
    names = []

    def number(match):
        name = match.group(1)
        if name not in names:
            names.append(name)
        return f"${names.index(name) + 1}"

    body = _PLACEHOLDER.sub(number, sql).replace("%%", "%")
    types = ", ".join(_parameter_type(binds[name].type, dialect) for name in names)
    # Named for its verb and first table, as pg_stat_activity and the
    # server's log show it; the digest tells statements apart.
    table = _TABLE.search(sql)
    name = "nf_{}_{}_{}".format(sql.split(None, 1)[0].lower(),
                                table.group(1) if table else "x",
                                hashlib.sha1(sql.encode()).hexdigest()[:12])
    if not names:
        return name, f"PREPARE {name} AS {body}", f"EXECUTE {name}"
    arguments = ", ".join(f"%({n})s" for n in names)
    return name, f"PREPARE {name} ({types}) AS {body}", f"EXECUTE {name} ({arguments})"


def _parameter_type(bind_type, dialect):
    # Strings are declared text, whatever their column's length: a value
    # coerced to varchar(n) would be cut to n characters where it is only
    # compared, and a column still refuses one too long for it.
    if isinstance(bind_type, sa.String) and not isinstance(bind_type, sa.Enum):
        return "text"
    if isinstance(bind_type, sa.types.NullType):
        return "unknown"  # the server infers it from where it is used
    return bind_type.compile(dialect=dialect)


def prepare_on(engine):
    """Prepare :class:`Precompiled` statements on the server (PostgreSQL
    with psycopg2, see the module docstring) on every connection
    ``engine`` opens from now on."""
    dialect = engine.dialect
    if dialect.name != "postgresql" or dialect.driver != "psycopg2":
        return

    @sa.event.listens_for(engine, "connect")
    def _prepared_here(dbapi_connection, record):
        # SQLAlchemy clears a connection's info when it replaces the
        # server session under it (invalidation, recycling): a new session
        # has nothing prepared.
        record.info[PREPARED] = set()


def execute(conn, statement, values):
    """``conn.execute(statement, values)``, with ``statement`` compiled once
    per dialect (:class:`Precompiled`)."""
    return _precompiled(conn.dialect, statement).execute(conn, values)


def first(conn, statement, values):
    """:meth:`Precompiled.first` of ``statement``, compiled once per dialect."""
    return _precompiled(conn.dialect, statement).first(conn, values)


def _precompiled(dialect, statement):
    by_statement = _COMPILED.get(dialect)
    if by_statement is None:
        by_statement = _COMPILED.setdefault(dialect, {})
    found = by_statement.get(id(statement))
    if found is None or found[0] is not statement:
        found = by_statement[id(statement)] = (statement, Precompiled(statement, dialect))
    return found[1]

