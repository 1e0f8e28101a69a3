"""Frozen copies of the column types the revisions create.

A revision must create the same schema whatever the models become later,
so it never uses ``nestedflow.db.models``' types; these stay as they were
when the first revision used them. A type that changes gets a new name
here, and the revisions that used the old one keep it.
"""

import sqlalchemy as sa
from sqlalchemy.dialects import mysql

#: Microsecond timestamps on MariaDB (its DATETIME drops them otherwise).
TIMESTAMP = sa.DateTime().with_variant(mysql.DATETIME(fsp=6), "mysql", "mariadb")
JSON = sa.JSON().with_variant(mysql.JSON(), "mysql", "mariadb")
