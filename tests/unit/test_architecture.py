"""The shape of the package: small modules, no import cycle, and the
private TaskFlow and SQLAlchemy names used only by their adapters
(doc/source/architecture.rst)."""

import ast
import pathlib

import nestedflow
from nestedflow.db import sqlalchemy_compat
from nestedflow.taskflow import compat as taskflow_compat

PACKAGE = pathlib.Path(nestedflow.__file__).parent
ADAPTERS = {PACKAGE / "taskflow" / "compat.py", PACKAGE / "db" / "sqlalchemy_compat.py"}
MAX_LINES = 600


def _modules():
    for path in sorted(PACKAGE.rglob("*.py")):
        if "migrations" in path.parts:
            continue  # alembic revisions: generated shape, never imported
        name = ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        yield name.removesuffix(".__init__"), path


def test_no_module_is_over_600_lines():
    long = {name: n for name, path in _modules()
            if (n := len(path.read_text().splitlines())) > MAX_LINES}
    assert long == {}


def _module_level_imports(name, path, known):
    """The nestedflow modules ``name`` imports when it is imported (imports
    inside functions are deferred on purpose and do not count)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.parse(path.read_text()).body:
        for inner in ast.walk(node) if isinstance(node, (ast.If, ast.Try)) else [node]:
            if isinstance(inner, ast.Import):
                found.update(alias.name for alias in inner.names)
            elif isinstance(inner, ast.ImportFrom):
                base = inner.module or ""
                if inner.level:
                    parts = package.split(".")[:len(package.split(".")) - inner.level + 1]
                    base = ".".join(parts + ([inner.module] if inner.module else []))
                found.update(f"{base}.{alias.name}" if f"{base}.{alias.name}" in known
                             else base for alias in inner.names)
    return {module for module in found if module in known and module != name
            and not name.startswith(module + ".")}


def test_no_import_cycle():
    modules = dict(_modules())
    graph = {name: _module_level_imports(name, path, modules) for name, path in modules.items()}
    done, path_ = set(), []

    def visit(name):
        if name in path_:
            cycle = path_[path_.index(name):] + [name]
            raise AssertionError("import cycle: " + " -> ".join(cycle))
        if name in done:
            return
        path_.append(name)
        for imported in sorted(graph[name]):
            visit(imported)
        path_.pop()
        done.add(name)

    for name in sorted(graph):
        visit(name)


def test_private_dependency_names_only_in_the_adapters():
    guarded = {name for _, _, name in (*taskflow_compat.ENGINE_NAMES,
                                       *taskflow_compat.JOBBOARD_NAMES,
                                       *sqlalchemy_compat.NAMES)}
    trees = {name: ast.parse(path.read_text()) for name, path in _modules()
             if path not in ADAPTERS}
    # Names nestedflow also gives things of its own -- attributes of its
    # classes (``self._lock = ...``), module-level functions -- cannot be
    # told apart by name: left out.
    own = {node.attr for tree in trees.values() for node in ast.walk(tree)
           if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store)
           and isinstance(node.value, ast.Name) and node.value.id == "self"}
    own.update(node.name for tree in trees.values() for node in tree.body
               if isinstance(node, ast.FunctionDef))
    guarded -= own
    assert len(guarded) > 20  # most of them are distinctive
    users = {}
    for name, tree in trees.items():
        for node in ast.walk(tree):
            used = (node.attr if isinstance(node, ast.Attribute)
                    else node.name if isinstance(node, ast.FunctionDef) else None)
            if used in guarded:
                users.setdefault(used, []).append(f"{name}:{node.lineno}")
    assert users == {}
