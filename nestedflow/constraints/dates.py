"""Date, schedule and text constraints, as Heat's common_constraints
(iso_8601, expiration, cron_expression, timezone, json_string)."""

import datetime
import json
import time
import zoneinfo

from nestedflow.constraints.base import CustomConstraint


def _parse_iso(value):
    # oslo_utils.timeutils.parse_isotime accepts dates, date-times and
    # offsets written +00:00 or +0000; so does fromisoformat since 3.11.
    if not isinstance(value, str):
        raise ValueError(f"{value!r} is not a string")
    try:
        return datetime.datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        raise ValueError(f"{value!r} is not an ISO 8601 date or time") from None


class ISO8601(CustomConstraint):
    description = "an ISO 8601 date or time"

    def validate(self, value):
        _parse_iso(value)


class Expiration(CustomConstraint):
    description = "an ISO 8601 time in the future"

    def validate(self, value):
        if not value:
            return
        try:
            when = _parse_iso(value)
            if when.tzinfo is not None:
                when = when.astimezone(datetime.UTC).replace(tzinfo=None)
            if when <= datetime.datetime.now(datetime.UTC).replace(tzinfo=None):
                raise ValueError("Expiration time is out of date.")
        except ValueError as exc:
            raise ValueError(f"Expiration {value} is invalid: {exc}") from None


class CronExpression(CustomConstraint):
    description = "a cron expression"

    def validate(self, value):
        if not value:
            return
        import croniter  # only templates that use the constraint pay for it

        try:
            croniter.croniter(value)
        except Exception as exc:  # croniter raises several unrelated types
            raise ValueError(f"Invalid CRON expression: {exc}") from None


class Timezone(CustomConstraint):
    description = "an IANA time zone name"

    def validate(self, value):
        if not value:
            return
        try:
            zoneinfo.ZoneInfo(value)
        except (zoneinfo.ZoneInfoNotFoundError, ValueError, TypeError) as exc:
            raise ValueError(f"Invalid timezone: {exc}") from None


class JSONString(CustomConstraint):
    description = "a JSON document"

    def validate(self, value):
        if not value:
            return
        try:
            json.loads(value)
        except (json.JSONDecodeError, TypeError) as exc:
            raise ValueError(f"JSON string {value} is invalid: {exc}") from None


class Delay(CustomConstraint):
    """``test_constr``: validating waits ``value`` seconds (Heat's
    TestConstraintDelay, used by OS::Heat::TestResource's
    ``constraint_prop_secs`` to make validation slow in tests)."""

    description = "a number of seconds to wait while validating"

    def validate(self, value):
        if value:
            time.sleep(float(value))
