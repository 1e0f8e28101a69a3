"""The import-time check that a dependency still has the private names
nestedflow's adapters use (:mod:`nestedflow.taskflow.compat`,
:mod:`nestedflow.taskflow.jobboard`, :mod:`nestedflow.db.sqlalchemy_compat`).

A release of TaskFlow or SQLAlchemy that renames or drops one of them
would otherwise break nestedflow silently: an override no longer called,
an attribute set that nothing reads. Checking costs well under a
millisecond, so it runs every time an adapter is imported.
"""

import dis
import importlib
import importlib.metadata

from nestedflow import exceptions


def _assigns(cls, name):
    """Does a method of ``cls`` (not of its bases) assign attribute
    ``name``, or take a parameter so named? An instance attribute exists
    only once an instance does, but a method of the class owning it
    assigns it."""
    for value in vars(cls).values():
        for function in (value, getattr(value, "fget", None), getattr(value, "__func__", None)):
            code = getattr(function, "__code__", None)
            if code is None:
                continue
            if name in code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]:
                return True
            # Disassembled only where the name occurs: a fraction of a millisecond.
            if name in code.co_names and any(
                    instruction.opname == "STORE_ATTR" and instruction.argval == name
                    for instruction in dis.get_instructions(code)):
                return True
    return False


def installed(distribution):
    """``"<distribution> <version>"`` as installed."""
    try:
        return f"{distribution} {importlib.metadata.version(distribution)}"
    except importlib.metadata.PackageNotFoundError:
        return f"{distribution} (version unknown)"


def check(names, supported, distribution):
    """Raise :class:`exceptions.UnsupportedDependency` unless each of
    ``names`` -- ``(module, class or None for the module itself, name)`` --
    is still there in the installed ``distribution``."""
    for module_name, class_name, name in names:
        module = importlib.import_module(module_name)
        owner = module if class_name is None else getattr(module, class_name, None)
        found = owner is not None and (
            hasattr(owner, name) or (class_name is not None and _assigns(owner, name)))
        if not found:
            where = f"{module_name}.{class_name}" if class_name else module_name
            raise exceptions.UnsupportedDependency(f"{where}.{name}", supported,
                                                   installed(distribution))
