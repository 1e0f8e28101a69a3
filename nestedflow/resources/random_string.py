"""``OS::Heat::RandomString``: a random secret kept as a physical object."""

import secrets
import string

from nestedflow import exceptions
from nestedflow.properties import constraints
from nestedflow.properties.schema import Attribute, Property, Types
from nestedflow.resources import base

_CLASSES = {
    "lettersdigits": string.ascii_letters + string.digits,
    "letters": string.ascii_letters,
    "lowercase": string.ascii_lowercase,
    "uppercase": string.ascii_uppercase,
    "digits": string.digits,
    "hexdigits": string.digits + "ABCDEF",
    "octdigits": string.octdigits,
}
#: The character classes (the PoC's Dummy ``sequence`` names them too).
CHARACTER_CLASSES = _CLASSES


class RandomString(base.StoredObjectResource):
    """Generates a random string once; any property change replaces it (as Heat)."""

    properties_schema = {
        "length": Property(Types.INTEGER, "Length of the string.", default=32,
                           constraints=[constraints.Range(1, 512)]),
        "character_classes": Property(
            Types.LIST, "Classes of characters with a minimum count each.",
            schema=Property(Types.MAP, schema={
                "class": Property(Types.STRING, default="lettersdigits",
                                  constraints=[constraints.AllowedValues(sorted(_CLASSES))]),
                "min": Property(Types.INTEGER, default=1,
                                constraints=[constraints.Range(1, 512)]),
            }),
        ),
        "character_sequences": Property(
            Types.LIST, "Sequences of characters with a minimum count each.",
            schema=Property(Types.MAP, schema={
                "sequence": Property(Types.STRING, required=True),
                "min": Property(Types.INTEGER, default=1,
                                constraints=[constraints.Range(1, 512)]),
            }),
        ),
        "salt": Property(Types.STRING, "Change it to generate a new string."),
    }
    attributes_schema = {"value": Attribute("The random string.")}

    def _generate(self):
        length = self.properties.get("length", 32)
        pools = [
            (_CLASSES[c.get("class", "lettersdigits")], c.get("min", 1))
            for c in self.properties.get("character_classes") or []
        ] + [
            (s["sequence"], s.get("min", 1))
            for s in self.properties.get("character_sequences") or []
        ]
        if not pools:
            pools = [(_CLASSES["lettersdigits"], 1)]
        required = sum(minimum for _, minimum in pools)
        if required > length:
            raise exceptions.StackValidationFailed(
                f"length {length} is shorter than the {required} characters the "
                "classes and sequences require",
                path=f"resources.{self.name}.properties.length",
            )
        chars = [secrets.choice(pool) for pool, minimum in pools for _ in range(minimum)]
        alphabet = "".join(pool for pool, _ in pools)
        chars += [secrets.choice(alphabet) for _ in range(length - len(chars))]
        secrets.SystemRandom().shuffle(chars)
        return "".join(chars)

    def object_data(self):
        # Only used when the create key is new: a re-run create gets the
        # stored value back from the store, never a second random string.
        return {"value": self._generate()}

    @classmethod
    def needs_replace_with_prop_diff(cls, changed, new_properties, old_properties):
        return True  # a new string for any change (Heat's RandomString)

    def update(self, new_properties, old_properties):
        raise exceptions.UpdateReplace(self.name)

    def get_attribute(self, name):
        if name == "value":
            return self.context.data.get("value")
        return None

    def reference_id(self):
        return self.context.data.get("value")
