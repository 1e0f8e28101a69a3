"""Stored template versions a process keeps in memory."""

import collections
import threading

#: Template versions a process keeps in memory (Database.get_template).
TEMPLATE_CACHE_SIZE = 64


class TemplateCache:
    """The last ``size`` template versions stored or read (thread-safe)."""

    def __init__(self, size):
        self._size = size
        self._rows = collections.OrderedDict()
        self._lock = threading.Lock()

    def get(self, template_id):
        with self._lock:
            row = self._rows.get(template_id)
            if row is not None:
                self._rows.move_to_end(template_id)
            return row

    def put(self, row):
        with self._lock:
            self._rows[row.id] = row
            self._rows.move_to_end(row.id)
            while len(self._rows) > self._size:
                self._rows.popitem(last=False)
