"""The links to the servers nestedflow trusts (ZooKeeper, RabbitMQ, the
database) as an operator sees them: a TLS handshake tried on its own so
that a wrong CA, certificate or key is reported once, in one line naming
the link, instead of as the endless reconnection loop of the client
library (kazoo, kombu) that owns the connection. See doc/source/security.rst.
"""
