"""Every read and write of the state, and the only package that writes SQL
(but for TaskFlow's own journal tables, which the adapter's journal backend
writes):
``api.Database`` is a facade over ``stacks``, ``resources`` (with their
locks), ``events`` and ``templates`` (the cache); ``drivers`` tunes the
engine they share; ``migration`` and alembic; ``schema`` declares in Core
the tables ``core_reads`` lists stacks from without the ORM or oslo.db;
``physical`` the store of the built-in test types' objects; ``owners``
the one type of the owner tokens of traversal runs and resource locks
(``OwnerToken``: every format is built and read there)."""
