"""``db sync``: create the schema or upgrade an existing database."""

from nestedflow.cmd.commands import bases


def display_url(url):
    """The database URL without its password."""
    if url is None:
        from nestedflow.db.migration import default_url

        url = default_url()
    try:
        from sqlalchemy.engine import make_url

        return make_url(url).render_as_string(hide_password=True)
    except Exception:  # not a URL SQLAlchemy understands: db_sync will say so
        return url


class SyncDatabase(bases.Command):
    """Create the database schema or upgrade it to this version's migrations.

    The engine creates a missing schema by itself; run this after upgrading
    nestedflow, before the new version's engines and conductors start, so an
    existing database gets the new migrations once (and not racing from
    several processes).
    """

    def take_action(self, parsed_args):
        from nestedflow import exceptions
        from nestedflow.cmd.errors import CommandError
        from nestedflow.db import migration

        db_url = self.app.db_url
        try:
            before = migration.revisions(db_url)
            migration.db_sync(db_url)
            after = migration.revisions(db_url)
        except exceptions.NestedflowError:
            raise
        except Exception as exc:
            from sqlalchemy.exc import SQLAlchemyError

            if isinstance(exc, SQLAlchemyError):
                raise CommandError(f"database sync failed: {exc}") from exc
            raise
        shown, head = display_url(db_url), ", ".join(sorted(after or ()))
        if before is None:
            self.app.stdout.write(f"created the schema at {shown} (revision {head})\n")
        elif before != after:
            self.app.stdout.write(f"upgraded {shown} from revision "
                                  f"{', '.join(sorted(before))} to {head}\n")
        else:
            self.app.stdout.write(f"database at {shown} is up to date (revision {head})\n")
        return 0
