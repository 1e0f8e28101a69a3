"""Heat's ``heat.common.password_gen`` (used by ``OS::Heat::RandomString``):
character classes with a minimum count each, and a password drawn from
them with the system's secure random source.

Same names and semantics as Heat's module: ``generate_password(length,
char_classes)`` puts at least ``min_count`` characters of each class in
the result, draws the rest from the union of the classes, and shuffles.
"""

import collections
import secrets
import string

CHARACTER_CLASSES = (LETTERS_DIGITS, LETTERS, LOWERCASE, UPPERCASE, DIGITS, HEXDIGITS,
                     OCTDIGITS) = ("lettersdigits", "letters", "lowercase", "uppercase",
                                   "digits", "hexdigits", "octdigits")

_MEMBERS = {
    LETTERS_DIGITS: string.ascii_letters + string.digits,
    LETTERS: string.ascii_letters,
    LOWERCASE: string.ascii_lowercase,
    UPPERCASE: string.ascii_uppercase,
    DIGITS: string.digits,
    HEXDIGITS: string.digits + "ABCDEF",
    OCTDIGITS: string.octdigits,
}

CharClass = collections.namedtuple("CharClass", ("allowed_chars", "min_count"))

_random = secrets.SystemRandom()


def named_char_class(char_class, min_count=0):
    """One of :data:`CHARACTER_CLASSES` with its minimum count."""
    if char_class not in _MEMBERS:
        raise ValueError(f"unknown character class {char_class!r}")
    return CharClass(frozenset(_MEMBERS[char_class]), min_count)


def special_char_class(allowed_chars, min_count=0):
    """A class of the given characters with its minimum count."""
    return CharClass(frozenset(allowed_chars), min_count)


def generate_password(length, char_classes):
    """A random string of ``length`` characters meeting every class's minimum."""
    chosen = []
    for char_class in char_classes:
        pool = sorted(char_class.allowed_chars)
        chosen += [_random.choice(pool) for _ in range(char_class.min_count)]
    if len(chosen) > length:
        raise ValueError("the minimum counts add up to more than the length")
    union = sorted(set().union(*(c.allowed_chars for c in char_classes)))
    chosen += [_random.choice(union) for _ in range(length - len(chosen))]
    _random.shuffle(chosen)
    return "".join(chosen)


def generate_openstack_password():
    """Heat's default for generated service passwords: 32 characters with
    at least one lowercase letter, one uppercase letter and one digit."""
    return generate_password(32, [named_char_class(LOWERCASE, 1),
                                  named_char_class(UPPERCASE, 1),
                                  named_char_class(DIGITS, 1),
                                  special_char_class("!@#%^&*", 1)])
