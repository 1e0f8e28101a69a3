"""EngineClient: the Engine API over oslo.messaging, for hosts that do not
embed nestedflow in-process (``nestedflow-engine`` serves it)."""

import functools
import inspect
import os
import time

import oslo_messaging as messaging

from nestedflow import exceptions
from nestedflow.rpc import api
from nestedflow.rpc.api import register_opts

#: Seconds added to a wait slice's call timeout for the round trip.
_WAIT_MARGIN = 10.0


def _remote(method):
    """Call the RPC method of the same name, ``context`` as the message context."""
    name = method.__name__
    signature = inspect.signature(method)

    @functools.wraps(method)
    def call(self, *args, **kwargs):
        bound = signature.bind(self, *args, **kwargs)
        bound.apply_defaults()
        arguments = dict(bound.arguments)
        del arguments["self"]
        context = arguments.pop("context")
        return self._call(context, name, **arguments)

    return call


class EngineClient:
    """The methods of :class:`nestedflow.Engine`, with the same signatures,
    served by a ``nestedflow-engine`` on ``conf.rpc.topic``.

    ``conf`` is an oslo.config object (the host's; default nestedflow's
    global one); the broker is its ``[DEFAULT] transport_url`` unless
    ``transport_url`` is given. ``version_cap`` pins the RPC API version
    sent (for rolling upgrades: a client pinned to ``"1.0"`` talks to
    services of any 1.x and refuses methods newer than 1.0). Errors raised
    by the engine arrive as the same :mod:`nestedflow.exceptions` classes
    with the same messages.
    """

    def __init__(self, transport_url=None, conf=None, *, topic=None, version_cap=None,
                 timeout=None):
        if conf is None:
            from nestedflow.conf import CONF as conf
        # A host's own ConfigOpts carries none of nestedflow's options: the
        # ones read here are registered on it, as oslo libraries register
        # theirs on the conf they are handed.
        register_opts(conf)
        self.conf = conf
        self._transport = messaging.get_rpc_transport(
            conf, url=transport_url, allowed_remote_exmods=api.ALLOWED_REMOTE_EXMODS)
        target = messaging.Target(topic=topic or conf.rpc.topic, version=api.VERSION)
        self._client = messaging.get_rpc_client(
            self._transport, target, version_cap=version_cap,
            serializer=api.EngineSerializer(), timeout=timeout)

    def _call(self, context, method, _timeout=None, **kwargs):
        version = api.METHODS[method]
        for later_version, later in api.LATER_ARGUMENTS.get(method, ()):
            for name in later:
                # Sent only when given (not None or False), so that an older
                # server still serves the call.
                if kwargs.get(name) in (None, False):
                    kwargs.pop(name, None)
                else:
                    version = max(version, later_version, key=api.version_key)
        prepared = self._client.prepare(version=version,
                                        **({"timeout": _timeout} if _timeout else {}))
        try:
            return prepared.call(context, method, **kwargs)
        except exceptions.RemoteFailure as failure:
            raise exceptions.from_remote(failure) from None

    # -- lifecycle (1.0) ----------------------------------------------------

    def create_stack(self, name, template, parameters=None, files=None, environment=None,
                     disable_rollback=False, timeout=None, adopt_stack_data=None, tags=None,
                     context=None):
        return self._call(context, "create_stack", name=name,
                          template=_local_template(template), parameters=parameters,
                          files=files, environment=environment,
                          disable_rollback=disable_rollback, timeout=timeout,
                          adopt_stack_data=adopt_stack_data, tags=tags)

    def update_stack(self, stack_id, template, parameters=None, files=None, environment=None,
                     existing=False, disable_rollback=None, timeout=None, tags=None,
                     clear_parameters=None, context=None):
        return self._call(context, "update_stack", stack_id=stack_id,
                          template=_local_template(template), parameters=parameters,
                          files=files, environment=environment, existing=existing,
                          disable_rollback=disable_rollback, timeout=timeout, tags=tags,
                          clear_parameters=clear_parameters)

    @_remote
    def delete_stack(self, stack_id, context=None):
        pass

    @_remote
    def suspend_stack(self, stack_id, context=None):
        pass

    @_remote
    def resume_stack(self, stack_id, context=None):
        pass

    @_remote
    def check_stack(self, stack_id, context=None):
        pass

    @_remote
    def cancel_update(self, stack_id, rollback=True, context=None):
        pass

    # -- reading (1.0) ------------------------------------------------------

    @_remote
    def get_stack(self, stack_id, context=None):
        pass

    @_remote
    def list_stacks(self, show_nested=False, tags=None, tags_any=None, not_tags=None,
                    not_tags_any=None, show_deleted=False, show_hidden=False, context=None):
        pass

    @_remote
    def list_resources(self, stack_id, nested_depth=0, context=None):
        pass

    @_remote
    def list_events(self, stack_id, nested_depth=0, context=None):
        pass

    def wait(self, stack_id, timeout=None, context=None):
        """Block until the stack is no longer IN_PROGRESS; returns it.

        Waits on the server in slices of ``[rpc] wait_interval`` seconds, so
        no call outlives ``rpc_response_timeout`` however long the stack takes.
        """
        deadline = None if timeout is None else time.monotonic() + timeout
        interval = self.conf.rpc.wait_interval
        while True:
            remaining = None if deadline is None else deadline - time.monotonic()
            piece = interval if remaining is None else max(0.0, min(interval, remaining))
            try:
                return self._call(context, "wait", _timeout=piece + _WAIT_MARGIN,
                                  stack_id=stack_id, timeout=piece)
            except exceptions.WaitTimeout:
                if remaining is not None and remaining <= interval:
                    # The engine's own message, about the whole wait.
                    stack = self.get_stack(stack_id, context=context)
                    raise exceptions.WaitTimeout(
                        f"stack {stack.name} still {stack.action}_IN_PROGRESS "
                        f"after {timeout}s") from None

    # -- 1.1 ----------------------------------------------------------------

    @_remote
    def count_stacks(self, show_nested=False, context=None):
        pass

    # -- 1.2 ----------------------------------------------------------------

    def validate_template(self, template, files=None, environment=None, parameters=None,
                          show_nested=False, ignorable_errors=None, context=None):
        return self._call(context, "validate_template", template=_local_template(template),
                          files=files, environment=environment, parameters=parameters,
                          show_nested=show_nested, ignorable_errors=ignorable_errors)

    # -- 1.3 ----------------------------------------------------------------

    @_remote
    def list_checks(self, stack_id, nested_depth=0, latest=False, context=None):
        pass

    @_remote
    def stop_stack(self, stack_id, context=None):
        pass

    @_remote
    def continue_stack(self, stack_id, context=None):
        pass

    @_remote
    def rerun(self, stack_id, resources, with_dependents=False, with_dependencies=False,
              checks_only=False, context=None):
        pass

    # -- 1.4 ----------------------------------------------------------------

    def preview_stack(self, name, template, parameters=None, files=None, environment=None,
                      timeout=None, disable_rollback=False, context=None):
        return self._call(context, "preview_stack", name=name,
                          template=_local_template(template), parameters=parameters,
                          files=files, environment=environment, timeout=timeout,
                          disable_rollback=disable_rollback)

    def preview_update_stack(self, stack_id, template, parameters=None, files=None,
                             environment=None, existing=False, show_nested=False,
                             context=None):
        return self._call(context, "preview_update_stack", stack_id=stack_id,
                          template=_local_template(template), parameters=parameters,
                          files=files, environment=environment, existing=existing,
                          show_nested=show_nested)

    @_remote
    def get_template(self, stack_id, context=None):
        pass

    @_remote
    def get_environment(self, stack_id, context=None):
        pass

    @_remote
    def get_files(self, stack_id, context=None):
        pass

    @_remote
    def abandon_stack(self, stack_id, abandon=True, context=None):
        pass

    @_remote
    def stack_snapshot(self, stack_id, name=None, context=None):
        pass

    @_remote
    def list_snapshots(self, stack_id, context=None):
        pass

    @_remote
    def show_snapshot(self, stack_id, snapshot_id, context=None):
        pass

    @_remote
    def delete_snapshot(self, stack_id, snapshot_id, context=None):
        pass

    @_remote
    def restore_snapshot(self, stack_id, snapshot_id, context=None):
        pass

    @_remote
    def mark_resource_unhealthy(self, stack_id, resource_name, mark_unhealthy=True,
                                resource_status_reason="", context=None):
        pass

    # -- 1.5: the software-config store (Heat's methods) ----------------------

    @_remote
    def create_software_config(self, group, name, config, inputs, outputs, options,
                               context=None):
        pass

    @_remote
    def show_software_config(self, config_id, context=None):
        pass

    @_remote
    def list_software_configs(self, limit=None, marker=None, context=None):
        pass

    @_remote
    def delete_software_config(self, config_id, context=None):
        pass

    @_remote
    def create_software_deployment(self, server_id, config_id, input_values, action, status,
                                   status_reason, stack_user_project_id, deployment_id=None,
                                   context=None):
        pass

    @_remote
    def update_software_deployment(self, deployment_id, config_id, input_values,
                                   output_values, action, status, status_reason, updated_at,
                                   context=None):
        pass

    @_remote
    def show_software_deployment(self, deployment_id, context=None):
        pass

    @_remote
    def list_software_deployments(self, server_id=None, context=None):
        pass

    @_remote
    def delete_software_deployment(self, deployment_id, context=None):
        pass

    @_remote
    def metadata_software_deployments(self, server_id, context=None):
        pass

    @_remote
    def signal_software_deployment(self, deployment_id, details, updated_at=None,
                                   context=None):
        pass

    @_remote
    def resource_attributes(self, stack_id, resource_name, names=None, context=None):
        pass

    @_remote
    def signal_resource(self, stack_id, resource_name, details=None, context=None):
        pass

    # -- 1.6 ----------------------------------------------------------------

    @_remote
    def list_services(self, context=None):
        pass

    def close(self):
        self._transport.cleanup()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def _local_template(template):
    """A template given as a path is read here: the server cannot see our files."""
    if isinstance(template, (str, os.PathLike)) and "\n" not in str(template) \
            and os.path.isfile(template):
        with open(template, encoding="utf-8") as f:
            return f.read()
    return template
