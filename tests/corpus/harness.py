"""The real-template corpus: what each template needs, and running one.

Each entry of ``manifest.yaml`` names a template under this directory, the
files it reads (``get_file`` and template-resource types, by the name the
template writes), and values for its parameters that have no default.
Cloud resource types are mapped to ``OS::Heat::None`` by wildcard registry
entries (``"OS::Nova::*": OS::Heat::None``), as a new user trying a Heat
template on nestedflow would; nestedflow's own types -- Heat's own types it
implements among them (software configs and deployments, values...) --
stay real. The servers' agents are played by the run: a deployment
waiting for its signal is signalled success (``deploy_status_code`` 0),
as os-collect-config on a server would after running the config.

``python tests/corpus/harness.py`` regenerates the manifest (run it after
adding templates): parameters already in the manifest are kept, so
hand-written values survive; each template is then run through create,
outputs and delete and its result recorded.
"""

import hashlib
import pathlib
import re
import sys

import yaml

ROOT = pathlib.Path(__file__).resolve().parent
MANIFEST = ROOT / "manifest.yaml"
TEMPLATE_SUFFIXES = (".yaml", ".yml", ".template")
#: nestedflow's built-in types in Heat's namespace are kept; any other
#: OS::Heat:: type is mapped one by one (a wildcard would catch the built-ins).
HEAT_NAMESPACE = "OS::Heat::"


def _walk(node):
    yield node
    if isinstance(node, dict):
        for value in node.values():
            yield from _walk(value)
    elif isinstance(node, list):
        for value in node:
            yield from _walk(value)


def referenced_names(data):
    """File names a template reads: get_file arguments and template types."""
    names = set()
    for node in _walk(data):
        if isinstance(node, dict):
            if len(node) == 1 and isinstance(node.get("get_file"), str):
                names.add(node["get_file"])
            value = node.get("type")
            if isinstance(value, str) and value.endswith(TEMPLATE_SUFFIXES):
                names.add(value)
    return {n for n in names if "://" not in n or n.startswith("file://")}


def resource_types(data):
    types = set()
    for node in _walk(data):
        if isinstance(node, dict) and isinstance(node.get("type"), str):
            if "::" in node["type"]:
                types.add(node["type"])
    return types


def _resolve(directory, name):
    name = name[len("file://"):] if name.startswith("file://") else name
    # "/cfg1.sh": heat-tempest-plugin passes such files itself; they are
    # kept next to the template.
    name = name.lstrip("/")
    for candidate in (directory / name, directory / "nested" / name):
        if candidate.is_file():
            return candidate.resolve()
    return None


def collect_files(path, data):
    """{name as written: path} for everything ``path`` reads, recursively."""
    files = {}
    pending = [(path, data)]
    while pending:
        current, content = pending.pop()
        for name in sorted(referenced_names(content)):
            if name in files:
                continue
            found = _resolve(current.parent, name)
            if found is None:
                continue
            files[name] = found
            if found.name.endswith(TEMPLATE_SUFFIXES):
                try:
                    nested = yaml.safe_load(found.read_text())
                except (yaml.YAMLError, UnicodeDecodeError):
                    continue
                pending.append((found, nested))
    return files


def corpus_environment(types, known_types):
    """The wildcard registry that maps every cloud type to OS::Heat::None."""
    registry = {}
    for type_name in sorted(types):
        if type_name in known_types:
            continue
        if type_name.startswith(HEAT_NAMESPACE):
            registry[type_name] = "OS::Heat::None"
        else:
            registry[type_name.rsplit("::", 1)[0] + "::*"] = "OS::Heat::None"
    return {"resource_registry": registry}


_CONSTRAINT_SAMPLES = {
    "ip_addr": "10.0.0.10", "net_cidr": "10.0.0.0/24", "ip_or_cidr": "10.0.0.10",
    "mac_addr": "fa:16:3e:00:00:01", "dns_name": "example.org", "dns_domain": "example.org.",
    "rel_dns_name": "host", "iso_8601": "2050-01-01T00:00:00", "timezone": "UTC",
    "cron_expression": "0 23 * * *", "json_string": "{}", "expiration": "2099-01-01T00:00:00",
}
_STRING_CANDIDATES = ("sample", "Sample1", "10.0.0.10", "10.0.0.0/24", "a", "abc", "x1", "1",
                      "Sample1-secret", "Sample1-long-enough-secret")


def sample_value(spec):
    """A value a user might pass for a parameter without a default."""
    kind = spec.get("type", "string")
    constraints = spec.get("constraints") or []
    for item in constraints:
        if isinstance(item, dict) and item.get("allowed_values"):
            return item["allowed_values"][0]
    if kind == "number":
        for item in constraints:
            if isinstance(item, dict) and isinstance(item.get("range"), dict):
                return item["range"].get("min", item["range"].get("max", 1))
        return 1
    if kind == "boolean":
        return False
    if kind == "json":
        return {}
    if kind == "comma_delimited_list":
        return "sample1,sample2"
    for item in constraints:
        if isinstance(item, dict) and item.get("custom_constraint") in _CONSTRAINT_SAMPLES:
            return _CONSTRAINT_SAMPLES[item["custom_constraint"]]
    patterns = [item["allowed_pattern"] for item in constraints
                if isinstance(item, dict) and isinstance(item.get("allowed_pattern"), str)]
    lengths = [item["length"] for item in constraints
               if isinstance(item, dict) and isinstance(item.get("length"), dict)]
    for candidate in _STRING_CANDIDATES:
        if all(re.fullmatch(p, candidate) for p in patterns) and all(
                length.get("min", 0) <= len(candidate) <= length.get("max", 10**6)
                for length in lengths):
            return candidate
    return "sample"


def discover():
    """Every distinct template in the corpus: (relative path, parsed data)."""
    seen = set()
    for path in sorted(ROOT.rglob("*")):
        if not path.is_file() or not path.name.endswith(TEMPLATE_SUFFIXES):
            continue
        text = path.read_text()
        if not re.search(r"^heat_template_version\s*:", text, re.M):
            continue
        digest = hashlib.sha256(text.encode()).hexdigest()
        if digest in seen:
            continue
        seen.add(digest)
        try:
            data = yaml.safe_load(text)
        except yaml.YAMLError:
            data = {}
        yield path.relative_to(ROOT).as_posix(), data if isinstance(data, dict) else {}


def load_manifest():
    with open(MANIFEST) as handle:
        return yaml.safe_load(handle)


def files_for(entry):
    return {name: (ROOT / rel).read_text() for name, rel in entry.get("files", {}).items()}


def run(engine, name, entry, known_types, timeout=120):
    """Create, read outputs, delete; return (stack after create, after delete)."""
    template = (ROOT / entry["template"]).read_text()
    types = set(entry.get("types", ()))
    environment = corpus_environment(types, known_types)
    if entry.get("parameter_defaults"):
        environment["parameter_defaults"] = entry["parameter_defaults"]
    stack = engine.create_stack(
        name, template, parameters=entry.get("parameters") or {}, files=files_for(entry),
        environment=environment)
    created = wait_as_agent(engine, stack.id, timeout)
    deleted = wait_as_agent(engine, engine.delete_stack(stack.id).id, timeout)
    return created, deleted


#: What a server's agent signals after running a config successfully.
AGENT_SIGNAL = {"deploy_stdout": "", "deploy_stderr": "", "deploy_status_code": 0}


#: Wait condition handles, and the SUCCESS signal a server sends each.
HANDLE_SIGNALS = {
    "OS::Heat::WaitConditionHandle": lambda n: {"status": "SUCCESS", "id": f"corpus-{n}"},
    "OS::Heat::UpdateWaitConditionHandle": lambda n: {
        "Status": "SUCCESS", "UniqueId": f"corpus-{n}", "Reason": "corpus", "Data": None},
}


def _signal_handles(engine, stack_id, signalled):
    """Send each waiting wait condition's handle (in the stack's tree) the
    ``count`` SUCCESS signals its servers would, once."""
    resources = engine.list_resources(stack_id, nested_depth=5)
    for waiting in resources:
        # Only a create or an update waits for signals (HeatWaitCondition's
        # handle_create and handle_update); a deleted wait condition's handle
        # may already be in its own delete, which refuses them.
        if waiting.type != "OS::Heat::WaitCondition" or (waiting.action, waiting.status) not in (
                ("CREATE", "IN_PROGRESS"), ("UPDATE", "IN_PROGRESS")):
            continue
        for handle in resources:
            key = (handle.stack_id, handle.name)
            if (handle.stack_id == waiting.stack_id and handle.type in HANDLE_SIGNALS
                    and handle.status == "COMPLETE" and key not in signalled):
                signalled.add(key)
                for number in range(int(waiting.properties.get("count") or 1)):
                    engine.signal_resource(handle.stack_id, handle.name,
                                           HANDLE_SIGNALS[handle.type](number))


def wait_as_agent(engine, stack_id, timeout):
    """``engine.wait``, signalling every deployment that waits for its
    server's signal meanwhile (templates run concurrently on one engine
    share the agent: any waiting deployment is one no server will signal),
    and every wait condition's handle as its servers would."""
    import time

    from nestedflow import exceptions

    deadline = time.monotonic() + timeout
    signalled = set()
    while True:
        for deployment in engine.list_software_deployments():
            if deployment["status"] == "IN_PROGRESS":
                engine.signal_software_deployment(deployment["id"], AGENT_SIGNAL)
        _signal_handles(engine, stack_id, signalled)
        remaining = deadline - time.monotonic()
        try:
            return engine.wait(stack_id, timeout=max(0.0, min(0.5, remaining)))
        except exceptions.WaitTimeout:
            if remaining <= 0.5:
                raise


def build(run_templates=True, only=None):
    """Regenerate the manifest, keeping hand-written parameter values; with
    ``only`` (a substring of template paths), run just those templates and
    keep the others' recorded results."""
    old = {}
    if MANIFEST.exists():
        old = {e["template"]: e for e in load_manifest()["templates"]}
    entries = []
    for rel, data in discover():
        path = ROOT / rel
        files = collect_files(path, data)
        types = set(resource_types(data))
        # Nested templates' parameters without a default: TripleO-style
        # templates leave them to the environment's parameter_defaults.
        nested_required = {}
        for found in files.values():
            if found.name.endswith(TEMPLATE_SUFFIXES):
                try:
                    nested = yaml.safe_load(found.read_text()) or {}
                except yaml.YAMLError:
                    continue
                types |= resource_types(nested)
                declared = nested.get("parameters") if isinstance(nested, dict) else None
                for pname, spec in (declared or {}).items():
                    if isinstance(spec, dict) and "default" not in spec:
                        nested_required.setdefault(pname, spec)
        previous = old.get(rel, {})
        defaults = dict(previous.get("parameter_defaults") or {})
        for pname, spec in nested_required.items():
            defaults.setdefault(pname, sample_value(spec))
        params = dict(previous.get("parameters") or {})
        declared = data.get("parameters") if isinstance(data.get("parameters"), dict) else {}
        for pname, spec in declared.items():
            if isinstance(spec, dict) and "default" not in spec and pname not in params:
                params[pname] = sample_value(spec)
        entry = {"template": rel}
        if files:
            entry["files"] = {n: p.relative_to(ROOT).as_posix() for n, p in sorted(files.items())}
        if params:
            entry["parameters"] = params
        if defaults:
            entry["parameter_defaults"] = defaults
        entry["types"] = sorted(types)
        for key in ("heat_rejects", "result"):
            if key in previous:
                entry[key] = previous[key]
        entries.append(entry)
    if run_templates:
        _record_results([e for e in entries if only is None or only in e["template"]])
    with open(MANIFEST, "w") as handle:
        handle.write("# Generated by tests/corpus/harness.py; parameters, parameter_defaults\n"
                     "# and heat_rejects may be edited by hand. See tests/corpus/SOURCES.\n")
        yaml.safe_dump({"templates": entries}, handle, sort_keys=False, width=100)


def _record_results(entries):
    import tempfile

    import nestedflow
    from nestedflow import exceptions

    with tempfile.TemporaryDirectory() as tmp:
        engine = nestedflow.Engine(db_url=f"sqlite:///{tmp}/corpus.db")
        known = set(engine.registry.names())
        try:
            for index, entry in enumerate(entries):
                entry.pop("result", None)
                try:
                    created, deleted = run(engine, f"corpus-{index}", entry, known)
                    if (created.action, created.status) != ("CREATE", "COMPLETE"):
                        entry["result"] = f"create failed: {created.status_reason}"
                    elif (deleted.action, deleted.status) != ("DELETE", "COMPLETE"):
                        entry["result"] = f"delete failed: {deleted.status_reason}"
                    else:
                        entry["result"] = "pass"
                except exceptions.NestedflowError as error:
                    entry["result"] = f"refused: {error}"
                print(f"{entry['template']}: {entry['result']}", file=sys.stderr)
        finally:
            engine.close()


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT.parent.parent))
    selected = sys.argv[sys.argv.index("--only") + 1] if "--only" in sys.argv else None
    build(run_templates="--no-run" not in sys.argv, only=selected)
