"""Stored software configs and deployments (Heat's ``software_config`` and
``software_deployment`` tables; heat/db/api.py ``software_config_*`` and
``software_deployment_*``).

Visibility is Heat's: ``project`` None (the embedded default, an admin)
sees every row; otherwise a config is seen by its tenant, a deployment by
its tenant or its ``stack_user_project_id``. A row not seen is "not found".
"""


import sqlalchemy as sa
from oslo_db import exception as db_exc

from nestedflow import exceptions
from nestedflow.db import models, retrying

_ALL = object()


class SoftwareConfigStore(retrying.GuardedStore):
    """Config and deployment rows of one database (a :class:`nestedflow.db.api.Database`)."""

    # -- configs ------------------------------------------------------------

    def create_config(self, name, group, config, tenant, config_id):
        """A new config. ``config_id`` is the caller's, chosen once (a
        resource's idempotency key, or a new id per request): a re-run, or a
        call tried again after a commit whose answer a dropped connection
        lost, finds the config the first made instead of adding another."""
        row = models.SoftwareConfig(id=config_id, name=name, group=group,
                                    config=config, tenant=tenant,
                                    created_at=models.utcnow())
        try:
            with self._db.writer() as session:
                session.add(row)
        except db_exc.DBDuplicateEntry:
            return self.get_config(row.id)
        return row

    def get_config(self, config_id, project=_ALL):
        with self._db.reader() as session:
            row = session.get(models.SoftwareConfig, config_id) if config_id else None
        if row is None or (project is not _ALL and row.tenant != project):
            raise exceptions.SoftwareConfigNotFound(config_id)
        return row

    def list_configs(self, project=_ALL, limit=None, marker=None):
        """Oldest first (Heat paginates on created_at, then id); ``marker``:
        the id of the last config of the previous page."""
        table = models.SoftwareConfig
        query = sa.select(table).order_by(table.created_at, table.id)
        if project is not _ALL:
            query = query.where(table.tenant == project)
        if marker is not None:
            last = self.get_config(marker, project)
            query = query.where(sa.or_(
                table.created_at > last.created_at,
                sa.and_(table.created_at == last.created_at, table.id > last.id)))
        if limit is not None:
            query = query.limit(int(limit))
        with self._db.reader() as session:
            return list(session.scalars(query))

    def delete_config(self, config_id, project=_ALL):
        self.get_config(config_id, project)
        with self._db.writer() as session:
            used = session.scalar(sa.select(models.SoftwareDeployment.id)
                                  .where(models.SoftwareDeployment.config_id == config_id)
                                  .limit(1))
            if used is not None:
                # Heat's InvalidRestrictedAction.
                raise exceptions.ActionNotAllowed(
                    f"Software config with id {config_id} can not be deleted as it is "
                    "referenced.")
            session.execute(sa.delete(models.SoftwareConfig)
                            .where(models.SoftwareConfig.id == config_id))

    # -- deployments --------------------------------------------------------

    @staticmethod
    def _visible(row, project):
        return project is _ALL or project in (row.tenant, row.stack_user_project_id)

    def create_deployment(self, values, project=_ALL):
        """A new deployment (``values``: its columns, ``id`` the caller's,
        chosen once, as :meth:`create_config`'s)."""
        self.get_config(values["config_id"], project)
        row = models.SoftwareDeployment(**{**values, "created_at": models.utcnow()})
        try:
            with self._db.writer() as session:
                session.add(row)
        except db_exc.DBDuplicateEntry:
            pass  # a re-run, or a call tried again, that made it: the same one
        return self.get_deployment(row.id, project)

    def get_deployment(self, deployment_id, project=_ALL):
        """The deployment and its config: ``(deployment, config)``."""
        with self._db.reader() as session:
            row = (session.get(models.SoftwareDeployment, deployment_id)
                   if deployment_id else None)
            config = (session.get(models.SoftwareConfig, row.config_id)
                      if row is not None else None)
        if row is None or not self._visible(row, project):
            raise exceptions.SoftwareDeploymentNotFound(deployment_id)
        return row, config

    def list_deployments(self, project=_ALL, server_id=None):
        """``(deployment, config)`` pairs, oldest first."""
        sd, sc = models.SoftwareDeployment, models.SoftwareConfig
        query = (sa.select(sd, sc).join(sc, sd.config_id == sc.id)
                 .order_by(sd.created_at, sd.id))
        if project is not _ALL:
            query = query.where(sa.or_(sd.tenant == project,
                                       sd.stack_user_project_id == project))
        if server_id:
            query = query.where(sd.server_id == server_id)
        with self._db.reader() as session:
            return [tuple(pair) for pair in session.execute(query)]

    def update_deployment(self, deployment_id, values, project=_ALL):
        self.get_deployment(deployment_id, project)
        if "config_id" in values:
            self.get_config(values["config_id"], project)
        with self._db.writer() as session:
            session.execute(sa.update(models.SoftwareDeployment)
                            .where(models.SoftwareDeployment.id == deployment_id)
                            .values(**values))
        return self.get_deployment(deployment_id, project)

    def delete_deployment(self, deployment_id, project=_ALL):
        """Deletes it; returns the row it was (a deleted one is not found)."""
        row, _ = self.get_deployment(deployment_id, project)
        with self._db.writer() as session:
            session.execute(sa.delete(models.SoftwareDeployment)
                            .where(models.SoftwareDeployment.id == deployment_id))
        return row


#: ``project`` argument meaning "every project" (no scoping).
ALL_PROJECTS = _ALL
