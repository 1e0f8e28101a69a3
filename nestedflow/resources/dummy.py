"""``OS::Heat::Dummy``: the convergence proof-of-concept's test resource.

The PoC (Heat's convergence PoC, ``Dummy`` in its resource mapping) uses it
to show update-in-place, replacement and failure without a cloud: each
action sleeps a while, the physical id is random, and

- ``name_len`` -- length of the random name generated at create (attribute
  ``name``; ``value`` too, the PoC's attribute name);
- ``update_in_place_prop`` -- the only property whose change updates in
  place: a change of any other property replaces the resource;
- ``fail_prop`` -- ``"yes"`` (or ``"y"``) fails the create or update.

Registered as ``OS::Heat::Dummy`` and under the PoC's own name ``Dummy`` so
its sample templates run unchanged. Objects live in the shared physical
store (:mod:`nestedflow.db.physical`), so duplicates and leaks can be
counted as for ``OS::Heat::TestResource``. The wait is drawn between the
``[dummy] min_wait_secs`` and ``max_wait_secs`` options (1 to 5 s, as in the
PoC's README).
"""

import random
import secrets

from nestedflow import exceptions
from nestedflow.conf import CONF
from nestedflow.properties import constraints
from nestedflow.properties.schema import Attribute, Property, Types
from nestedflow.resources import base
from nestedflow.resources.random_string import CHARACTER_CLASSES as _SEQUENCES

_YES = ("yes", "y")


class Dummy(base.StoredObjectResource):
    """Sleeps, fails on request, and is replaced unless only
    ``update_in_place_prop`` changed."""

    properties_schema = {
        "name_len": Property(Types.INTEGER, "Length of the random name.", default=32,
                             constraints=[constraints.Range(1, 512)]),
        "sequence": Property(Types.STRING, "Characters the random name is made of.",
                             default="hexdigits",
                             constraints=[constraints.AllowedValues(sorted(_SEQUENCES))]),
        "update_in_place_prop": Property(
            Types.STRING, "Change it to update the resource in place.", default="",
            update_allowed=True),
        "fail_prop": Property(Types.STRING, '"yes" fails the create or update.',
                              default="no"),
    }
    attributes_schema = {
        "name": Attribute("The random name generated at create."),
        "value": Attribute("The random name (the PoC's attribute name)."),
    }

    def _wait(self):
        low, high = CONF.dummy.min_wait_secs, CONF.dummy.max_wait_secs
        # random (not secrets): a test delay, nothing to keep secret.
        self.context.sleep(random.uniform(min(low, high), max(low, high)))  # noqa: S311

    def _maybe_fail(self, properties, action):
        if str(properties.get("fail_prop") or "").strip().lower() in _YES:
            raise exceptions.DummyFailed(f"Dummy {self.name} failed on {action} (fail_prop is yes)")

    def object_data(self):
        # Only used when the create key is new: a create re-run after a
        # crash finds the object, and its name, that the first run made.
        length = self.properties.get("name_len") or 32
        alphabet = _SEQUENCES[self.properties.get("sequence") or "hexdigits"]
        return {"name": "".join(secrets.choice(alphabet) for _ in range(length))}

    def create(self):
        self._wait()
        self._maybe_fail(self.properties, "create")
        return super().create()

    def update(self, new_properties, old_properties):
        changed = {k for k in set(new_properties) | set(old_properties)
                   if new_properties.get(k) != old_properties.get(k)}
        if changed - {"update_in_place_prop"}:
            raise exceptions.UpdateReplace(self.name)
        self._wait()
        self._maybe_fail(new_properties, "update")
        super().update(new_properties, old_properties)

    def delete(self):
        self._wait()
        super().delete()

    def get_attribute(self, name):
        if name in ("name", "value"):
            return self.context.data.get("name")
        return None
