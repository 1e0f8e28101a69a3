"""Heat's stack methods (heat/engine/service.py ``EngineService``) on the Engine."""

import json

from oslo_utils import strutils, uuidutils

from nestedflow import exceptions
from nestedflow.heat_rpc import faults, formats, paging
from nestedflow.heat_rpc.calls import Calls, project_scoped, rpc

#: Environment sections nestedflow's Engine reads besides ``parameters``
#: (``encrypted_param_names`` and ``event_sinks``, which heat-api also
#: sends, have no meaning here).
_ENVIRONMENT_KEYS = ("parameter_defaults", "resource_registry", "parameter_merge_strategies")


def split_params(params, files=None, environment_files=None):
    """Heat's ``params`` (an environment) as the Engine's ``parameters`` and
    ``environment``, the named environment files merged over it in order
    (heat/common/environment_util.py ``merge_environments``)."""
    merged = {key: dict(value) for key, value in (params or {}).items()
              if isinstance(value, dict)}
    for name in environment_files or ():
        if name not in (files or {}):
            raise faults.fault("NotFound",
                               f"Environment file {name} not found in files.",
                               msg_fmt=f"Environment file {name} not found in files.")
        loaded = formats.parsed(files[name])
        for section, value in loaded.items():
            if isinstance(value, dict):
                merged.setdefault(section, {}).update(value)
    environment = {key: merged[key] for key in _ENVIRONMENT_KEYS if merged.get(key)}
    return merged.get("parameters") or {}, environment or None


def _tags(value):
    if value is None:
        return None
    if isinstance(value, str):
        return [tag for tag in value.split(",") if tag]
    return list(value)


def _timeout(args):
    value = (args or {}).get("timeout_mins")
    if value in (None, "", "0", 0):
        return None
    try:
        return int(value)
    except (TypeError, ValueError):
        raise faults.validation_failed(f"Invalid timeout value {value}") from None


def _bool(args, name, default=None):
    value = (args or {}).get(name)
    if value is None:
        return default
    return strutils.bool_from_string(value, strict=True)


def _preview_resources(entries, project):
    """Heat's ``format_stack_resource`` fields a preview lacks: identities
    with the stack id ``"None"``, no times, an attribute map (heat/engine/api.py
    ``format_stack_preview``); a nested stack stays a list of its own."""
    result = []
    for entry in entries:
        if isinstance(entry, list):
            result.append(_preview_resources(entry, project))
            continue
        entry = dict(entry)
        stack = {"tenant": project, "stack_name": entry.get("stack_name"),
                 "stack_id": "None", "path": ""}
        entry.setdefault("stack_identity", stack)
        entry.setdefault("resource_identity",
                         dict(stack, path=f"/resources/{entry.get('resource_name')}"))
        for key, value in (("creation_time", None), ("updated_time", None),
                           ("description", ""), ("metadata", {}), ("attributes", {})):
            entry.setdefault(key, value)
        result.append(entry)
    return result


class StackCalls(Calls):
    """identify, list, count, show, create, update, delete, abandon, export,
    preview, templates and the stack actions."""

    @rpc
    def identify_stack(self, ctxt, stack_name):
        """By id (an admin's: any project's) or by name in the caller's project."""
        stack = None
        if uuidutils.is_uuid_like(stack_name):
            try:
                stack = self.engine.get_stack(stack_name, context=ctxt)
            except exceptions.StackNotFound:
                stack = None
            if stack is not None and stack.id != stack_name:
                stack = None
        if stack is None:
            try:
                stack = self.engine.get_stack(stack_name, context=project_scoped(ctxt))
            except exceptions.StackNotFound:
                raise faults.stack_not_found(stack_name) from None
        return formats.identity(stack)

    def _listed(self, ctxt, filters, show_nested, tags, tags_any, not_tags, not_tags_any,
                show_deleted=False, show_hidden=False):
        # Hidden stacks: the Engine's [engine] hidden_stack_tags (Heat's).
        stacks = self.engine.list_stacks(
            show_nested=bool(show_nested), tags=_tags(tags), tags_any=_tags(tags_any),
            not_tags=_tags(not_tags), not_tags_any=_tags(not_tags_any),
            show_deleted=bool(show_deleted), show_hidden=bool(show_hidden),
            context=project_scoped(ctxt))
        return paging.filter_stacks(stacks, filters)

    @rpc
    def list_stacks(self, ctxt, limit=None, marker=None, sort_keys=None, sort_dir=None,
                    filters=None, show_deleted=False, show_nested=False, show_hidden=False,
                    tags=None, tags_any=None, not_tags=None, not_tags_any=None,
                    tenant_safe=True):
        stacks = self._listed(ctxt, filters, show_nested, tags, tags_any, not_tags,
                              not_tags_any, show_deleted, show_hidden)
        stacks = paging.page(stacks, paging.STACK_SORT_KEYS, sort_keys, sort_dir or "desc",
                             marker, limit, default_key="creation_time")
        return [formats.stack_summary(stack) for stack in stacks]

    @rpc
    def count_stacks(self, ctxt, filters=None, show_deleted=False, show_nested=False,
                     show_hidden=False, tags=None, tags_any=None, not_tags=None,
                     not_tags_any=None, tenant_safe=True):
        return len(self._listed(ctxt, filters, show_nested, tags, tags_any, not_tags,
                                not_tags_any, show_deleted, show_hidden))

    def _detail(self, ctxt, stack, resolve_outputs=True):
        template = self.engine.get_template(stack.id, context=ctxt)
        environment = self.engine.get_environment(stack.id, context=ctxt)
        return formats.stack_detail(stack, template, environment, resolve_outputs)

    @rpc
    def show_stack(self, ctxt, stack_identity, resolve_outputs=True):
        if stack_identity is None:
            return [self._detail(ctxt, stack, resolve_outputs)
                    for stack in self.engine.list_stacks(context=project_scoped(ctxt))]
        return [self._detail(ctxt, self._stack(ctxt, stack_identity), resolve_outputs)]

    @rpc
    def create_stack(self, ctxt, stack_name, template, params, files, args,
                     environment_files=None, files_container=None, owner_id=None,
                     nested_depth=0, user_creds_id=None, stack_user_project_id=None,
                     parent_resource_name=None, template_id=None):
        if owner_id is not None:
            raise faults.not_supported("Creating a nested stack through the RPC API")
        parameters, environment = split_params(params, files, environment_files)
        args = args or {}
        adopt = args.get("adopt_stack_data")
        if isinstance(adopt, str):
            adopt = json.loads(adopt)
        stack = self.engine.create_stack(
            stack_name, template, parameters=parameters, files=files or None,
            environment=environment, disable_rollback=_bool(args, "disable_rollback", True),
            timeout=_timeout(args), adopt_stack_data=adopt, tags=_tags(args.get("tags")),
            context=ctxt)
        return formats.identity(stack)

    @rpc
    def update_stack(self, ctxt, stack_identity, template, params, files, args,
                     environment_files=None, files_container=None, template_id=None):
        stack = self._stack(ctxt, stack_identity)
        args = args or {}
        existing = _bool(args, "existing", False)
        parameters, environment = split_params(params, files, environment_files)
        if existing and not template:
            template = None
        updated = self.engine.update_stack(
            stack.id, template, parameters=parameters, files=files or None,
            environment=environment, existing=existing,
            disable_rollback=_bool(args, "disable_rollback"), timeout=_timeout(args),
            tags=_tags(args.get("tags")), clear_parameters=args.get("clear_parameters") or None,
            context=ctxt)
        return formats.identity(updated)

    @rpc
    def preview_update_stack(self, ctxt, stack_identity, template, params, files, args,
                             environment_files=None, files_container=None):
        stack = self._stack(ctxt, stack_identity)
        parameters, environment = split_params(params, files, environment_files)
        existing = _bool(args, "existing", False)
        return self.engine.preview_update_stack(
            stack.id, template if template or not existing else None, parameters=parameters,
            files=files or None, environment=environment, existing=existing,
            show_nested=_bool(args, "show_nested", False), context=ctxt)

    @rpc
    def preview_stack(self, ctxt, stack_name, template, params, files, args,
                      environment_files=None, files_container=None):
        parameters, environment = split_params(params, files, environment_files)
        preview = self.engine.preview_stack(
            stack_name, template, parameters=parameters, files=files or None,
            environment=environment, timeout=_timeout(args),
            disable_rollback=_bool(args, "disable_rollback", True), context=ctxt)
        preview.pop("id", None)
        # heat/engine/api.py format_stack(preview=True): the stack is not
        # stored, its id is the string "None".
        preview["stack_identity"] = {"tenant": ctxt.project_id if ctxt else "",
                                     "stack_name": stack_name, "stack_id": "None", "path": ""}
        project = ctxt.project_id if ctxt else ""
        preview["parameters"] = {
            **{name: str(value) for name, value in (preview.get("parameters") or {}).items()},
            "OS::stack_name": stack_name, "OS::stack_id": "None", "OS::project_id": project}
        for key, value in (("creation_time", None), ("updated_time", None),
                           ("deletion_time", None), ("notification_topics", []),
                           ("capabilities", []), ("stack_owner", None), ("parent", None),
                           ("stack_user_project_id", None), ("tags", None)):
            preview.setdefault(key, value)
        preview["resources"] = _preview_resources(preview.get("resources") or [], project)
        return preview

    @rpc
    def delete_stack(self, ctxt, stack_identity):
        stack = self._stack(ctxt, stack_identity)
        self.engine.delete_stack(stack.id, context=ctxt)

    @rpc
    def abandon_stack(self, ctxt, stack_identity, abandon=True):
        stack = self._stack(ctxt, stack_identity)
        return self.engine.abandon_stack(stack.id, abandon=abandon, context=ctxt)

    @rpc
    def export_stack(self, ctxt, stack_identity):
        stack = self._stack(ctxt, stack_identity)
        return self.engine.abandon_stack(stack.id, abandon=False, context=ctxt)

    @rpc
    def get_template(self, ctxt, stack_identity):
        stack = self._stack(ctxt, stack_identity)
        return formats.parsed(self.engine.get_template(stack.id, context=ctxt))

    @rpc
    def get_environment(self, ctxt, stack_identity):
        stack = self._stack(ctxt, stack_identity)
        environment = dict(self.engine.get_environment(stack.id, context=ctxt) or {})
        for key in ("parameters", "parameter_defaults", "resource_registry"):
            environment.setdefault(key, {})
        environment.setdefault("encrypted_param_names", [])
        environment.setdefault("event_sinks", [])
        return environment

    @rpc
    def get_files(self, ctxt, stack_identity):
        stack = self._stack(ctxt, stack_identity)
        return self.engine.get_files(stack.id, context=ctxt) or {}

    # -- actions -------------------------------------------------------------

    @rpc
    def stack_suspend(self, ctxt, stack_identity):
        self.engine.suspend_stack(self._stack(ctxt, stack_identity).id, context=ctxt)

    @rpc
    def stack_resume(self, ctxt, stack_identity):
        self.engine.resume_stack(self._stack(ctxt, stack_identity).id, context=ctxt)

    @rpc
    def stack_check(self, ctxt, stack_identity):
        self.engine.check_stack(self._stack(ctxt, stack_identity).id, context=ctxt)

    @rpc
    def stack_cancel_update(self, ctxt, stack_identity, cancel_with_rollback=True):
        stack = self._stack(ctxt, stack_identity)
        # heat-engine's stack_cancel_update: only an update in progress (or
        # a create, without rollback) can be cancelled.
        allowed = [("UPDATE", "IN_PROGRESS")]
        if not cancel_with_rollback:
            allowed.append(("CREATE", "IN_PROGRESS"))
        if (stack.action, stack.status) not in allowed:
            raise faults.not_supported(
                f"Cancelling update when stack is {stack.action}_{stack.status}")
        self.engine.cancel_update(stack.id, rollback=cancel_with_rollback, context=ctxt)

    # -- snapshots -----------------------------------------------------------

    @rpc
    def stack_snapshot(self, ctxt, stack_identity, name):
        stack = self._stack(ctxt, stack_identity)
        if stack.status == "IN_PROGRESS":
            raise faults.action_in_progress(stack.name, stack.action)
        return formats.snapshot(self.engine.stack_snapshot(stack.id, name, context=ctxt))

    @rpc
    def stack_list_snapshots(self, ctxt, stack_identity):
        stack = self._stack(ctxt, stack_identity)
        return [formats.snapshot(item)
                for item in self.engine.list_snapshots(stack.id, context=ctxt)]

    def _snapshot_call(self, method, ctxt, stack_identity, snapshot_id):
        stack = self._stack(ctxt, stack_identity)
        try:
            return method(stack.id, snapshot_id, context=ctxt)
        except exceptions.SnapshotNotFound as error:
            raise faults.translate(error, stack) from None

    @rpc
    def show_snapshot(self, ctxt, stack_identity, snapshot_id):
        return formats.snapshot(self._snapshot_call(self.engine.show_snapshot, ctxt,
                                                    stack_identity, snapshot_id))

    @rpc
    def delete_snapshot(self, ctxt, stack_identity, snapshot_id):
        self._snapshot_call(self.engine.delete_snapshot, ctxt, stack_identity, snapshot_id)

    @rpc
    def stack_restore(self, ctxt, stack_identity, snapshot_id):
        self._snapshot_call(self.engine.restore_snapshot, ctxt, stack_identity, snapshot_id)
