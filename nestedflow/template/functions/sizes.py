"""Limits on what one function call builds: ``[engine] max_function_string_size``
(characters of text) and ``max_function_result_items`` (items of a list or map).

A template of a few hundred bytes can ask for far more than it holds --
``repeat`` over three lists of 150 is 3,375,000 copies, ``str_replace`` of a
long value into a text that repeats its placeholder multiplies the two -- so
the input limits (:mod:`nestedflow.template.limits`) do not bound what
resolving it makes. Each function checks the size of its own result, before
building it where its size can be known first, so a call never holds more
than about one limit of new data.

Errors are StackValidationFailed naming the call's path, with ``limit`` set
to the option's name: validation refuses the template for it even in an
output, whose other errors Heat turns into a None value.
"""

from nestedflow.conf import CONF
from nestedflow.conf import engine as engine_opts
from nestedflow.exceptions import StackValidationFailed

STRING_OPTION = "max_function_string_size"
ITEMS_OPTION = "max_function_result_items"

# The options' least values. A result no larger fits however they are set,
# so it is not compared with them: reading an option costs more than most
# small function calls, and functions run for every resource of every
# traversal.
_OPTS = {opt.name: opt for opt in engine_opts.engine_opts}
STRING_FLOOR = _OPTS[STRING_OPTION].type.min
ITEMS_FLOOR = _OPTS[ITEMS_OPTION].type.min


def too_large(message, option, path):
    limit = getattr(CONF.engine, option)
    error = StackValidationFailed(f"{message}, more than [engine] {option} ({limit})",
                                  path=path)
    # A plain attribute, not a subclass: it survives the trip through RPC
    # (exceptions.to_remote keeps attributes; an unknown class would not).
    error.limit = option
    return error


def is_too_large(error):
    return getattr(error, "limit", None) in (STRING_OPTION, ITEMS_OPTION)


def max_string():
    return CONF.engine.max_function_string_size


def max_items():
    return CONF.engine.max_function_result_items


def check_string(size, path):
    if size > STRING_FLOOR and size > max_string():
        raise too_large(f"would build {size} characters", STRING_OPTION, path)


def check_items(count, path):
    if count > ITEMS_FLOOR and count > max_items():
        raise too_large(f"would return {count} items", ITEMS_OPTION, path)


def text(result, path):
    """``result`` (a string a function built) if it is within the limit."""
    check_string(len(result), path)
    return result


def items(result, path):
    """``result`` (a list or map a function built) if it is within the limit."""
    check_items(len(result), path)
    return result


class TextBudget:
    """The characters of text one call builds, counted as it goes."""

    __slots__ = ("spent", "limit", "path")

    def __init__(self, path):
        self.spent = 0
        self.limit = None  # the option, read once the floor is passed
        self.path = path

    def fits(self, size):
        """Whether ``size`` more characters stay within the limit."""
        total = self.spent + size
        if total <= STRING_FLOOR:
            return True
        if self.limit is None:
            self.limit = max_string()
        return total <= self.limit

    def check(self, size):
        if not self.fits(size):
            raise too_large(f"would build at least {self.spent + size} characters",
                            STRING_OPTION, self.path)

    def spend(self, size):
        self.check(size)
        self.spent += size


def count_values(value, stop):
    """Values (maps, lists, scalars) in ``value``, counting no further than ``stop``."""
    count = 0
    pending = [value]
    while pending and count <= stop:
        node = pending.pop()
        count += 1
        if isinstance(node, dict):
            pending.extend(node.values())
        elif isinstance(node, list):
            pending.extend(node)
    return count
