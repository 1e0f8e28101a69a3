"""The shape of the package (doc/source/architecture.rst, "Packages"): the
layers and forbidden imports of pyproject.toml's import-linter contracts,
no import cycle between packages or modules, no module touching another's
private names, small modules, and the private TaskFlow and SQLAlchemy
names used only by their adapters."""

import ast
import pathlib
import subprocess
import sys
import tomllib

import nestedflow
from nestedflow.db import sqlalchemy_compat
from nestedflow.taskflow import compat as taskflow_compat
from nestedflow.taskflow import jobboard as taskflow_jobboard

PACKAGE = pathlib.Path(nestedflow.__file__).parent
ROOT = PACKAGE.parent
ADAPTERS = {PACKAGE / "taskflow" / "compat.py", PACKAGE / "taskflow" / "jobboard.py",
            PACKAGE / "db" / "sqlalchemy_compat.py"}
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
                                       *taskflow_jobboard.JOBBOARD_NAMES,
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


# -- packages -----------------------------------------------------------------


def _contracts():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    return {contract["id"]: contract for contract in config["contracts"]}


def _packages():
    """The top-level packages and modules of nestedflow (``__init__`` aside)."""
    return {path.stem if path.is_file() else path.name for path in PACKAGE.iterdir()
            if (path.is_dir() and (path / "__init__.py").exists())
            or (path.suffix == ".py" and path.name not in ("__init__.py", "__main__.py"))}


def test_import_contracts_are_kept():
    """import-linter's layers, forbidden and independence contracts
    (pyproject.toml); its report names each broken import chain. In a
    process of its own: import-linter's command sets up logging and the
    console for the whole process, which the command-line tests then see."""
    code = ("import sys; from importlinter import cli; "
            f"sys.exit(cli.lint_imports(config_filename={str(ROOT / 'pyproject.toml')!r}, "
            "no_cache=True, no_logo=True))")
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                            text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr


def test_every_package_is_in_a_layer_and_under_the_taskflow_contract():
    """A new package must be placed: the contracts name packages one by one."""
    contracts = _contracts()
    layered = {name.strip() for layer in contracts["layers"]["layers"]
               for name in layer.split("|")}
    assert layered == _packages()
    guarded = {name.removeprefix("nestedflow.")
               for name in contracts["taskflow-adapter"]["source_modules"]}
    assert guarded == _packages() - {"taskflow"}


def _all_imports(path, name):
    """Every nestedflow module ``path`` imports, deferred imports included."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[:len(package.split(".")) - node.level + 1]
                base = ".".join(parts + ([node.module] if node.module else []))
            found.update(f"{base}.{alias.name}" for alias in node.names)
            found.add(base)
    return {module for module in found if module.startswith("nestedflow.")}


def test_no_import_cycle_between_packages():
    """Top-level packages, every import counted (the layers imply it; this
    names the cycle when one appears)."""
    packages = _packages()
    graph = {package: set() for package in packages}
    for name, path in _modules():
        if name == "nestedflow" or name.endswith("__main__"):
            continue  # the lazy top-level API; `python -m` entry points
        source = name.split(".")[1]
        for module in _all_imports(path, name):
            target = module.split(".")[1]
            if target in packages and target != source:
                graph[source].add(target)
    done, trail = set(), []

    def visit(package):
        if package in trail:
            raise AssertionError("package import cycle: "
                                 + " -> ".join(trail[trail.index(package):] + [package]))
        if package in done:
            return
        trail.append(package)
        for imported in sorted(graph[package]):
            visit(imported)
        trail.pop()
        done.add(package)

    for package in sorted(graph):
        visit(package)


# -- private names ------------------------------------------------------------

#: ``_x`` attributes a module may touch on objects it does not own, with why.
PRIVATE_ALLOWED = {
    # Public API in spite of the underscore.
    ("*", "_mapping"): "SQLAlchemy Row._mapping is its documented mapping view",
    ("*", "_replace"): "namedtuple._replace (urllib's SplitResult) is public",
    ("*", "_exit"): "os._exit is the documented exit without clean-up",
    # The adapters: each lists and checks the private names it uses.
    ("nestedflow.taskflow.compat", "*"): "the TaskFlow adapter",
    ("nestedflow.db.sqlalchemy_compat", "*"): "the SQLAlchemy adapter",
    ("nestedflow.tenancy", "_request_store"): "oslo.context's current context (NAMES)",
    ("nestedflow.cmd.commands.tables", "_do_fit"): "cliff's table fitting (NAMES)",
    # A descriptor of the Engine's, building the Engine it belongs to.
    ("nestedflow.engine.parts", "_build"): "Engine's own part descriptor",
}


def _private_uses(tree):
    """``(line, attribute)`` of each ``x._name`` where ``x`` is not self, cls
    or super() and the module defines no ``_name`` of its own."""
    own = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            own.add(node.name)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            own.add(node.attr)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            own.add(node.id)
        elif isinstance(node, ast.arg):
            own.add(node.arg)
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Attribute) and node.attr.startswith("_")
                and not node.attr.startswith("__")) or node.attr in own:
            continue
        value = node.value
        if isinstance(value, ast.Name) and value.id in ("self", "cls"):
            continue
        if (isinstance(value, ast.Call) and isinstance(value.func, ast.Name)
                and value.func.id == "super"):
            continue
        yield node.lineno, node.attr


def test_no_module_touches_private_names_it_does_not_own():
    found = []
    for name, path in _modules():
        for line, attr in _private_uses(ast.parse(path.read_text())):
            if not any(key in PRIVATE_ALLOWED for key in
                       ((name, attr), ("*", attr), (name, "*"))):
                found.append(f"{name}:{line} {attr}")
    assert found == []


def test_layers_doc_is_current(doc_tool):
    tool = doc_tool("gen_layers")
    text = tool.DOC.read_text()
    assert tool.render(text) == text, "run tools/gen_layers.py"


def test_only_the_engine_service_reaches_its_dispatcher_and_tree():
    """Every traversal starts through StackLifecycle.start_traversal (which
    records its request id): no module but engine/service.py calls the
    Engine's ``_dispatch`` or walks its ``_tree`` (a part of its own named
    alike, ``self._dispatch``, is that part's own)."""
    found = []
    for name, path in _modules():
        if name == "nestedflow.engine.service":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if (isinstance(node, ast.Attribute) and node.attr in ("_dispatch", "_tree")
                    and not (isinstance(node.value, ast.Name) and node.value.id == "self")):
                found.append(f"{name}:{node.lineno} {ast.unparse(node)}")
    assert found == []
