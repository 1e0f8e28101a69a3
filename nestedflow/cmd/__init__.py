"""nestedflow's programs: the ``nestedflow`` command, the conductor and the
RPC engine service.

Importing this package imports :mod:`nestedflow`, which sets
``EVENTLET_NO_GREENDNS`` for every process that uses nestedflow (see
there) before TaskFlow can import eventlet.
"""
