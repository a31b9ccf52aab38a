"""SQL expressions the dashboard groups by: the hour of the week in the person's time zone."""

from datetime import datetime
from zoneinfo import ZoneInfo

from django.db import NotSupportedError
from django.db.models import Func, IntegerField

from memory.insights.trends import utc_offsets


class LocalWeekHour(Func):
    """Hour of the week in `zone` (Monday 00:00–00:59 is 0, Sunday 23:00–23:59 is 167).

    Lets the heatmap group a person's readings by weekday and hour in one GROUP BY of at most
    168 rows. On SQLite, strftime with the zone's UTC offset (one offset per stretch between
    clock changes, as memory.insights.trends.LocalHour does): Django's own tz-aware extracts call a
    Python function per row there. On PostgreSQL, EXTRACT ... AT TIME ZONE.
    """

    output_field = IntegerField()

    def __init__(self, expression, *, zone: ZoneInfo, start: datetime, end: datetime):
        super().__init__(expression)
        self.zone = zone
        self.segments = utc_offsets(zone, start, end)

    def as_sql(self, compiler, connection, **extra_context):
        raise NotSupportedError("LocalWeekHour supports SQLite and PostgreSQL.")

    def as_postgresql(self, compiler, connection, **extra_context):
        column, params = compiler.compile(self.source_expressions[0])
        local = f"({column} AT TIME ZONE %s)"
        sql = f"(((EXTRACT(ISODOW FROM {local}) - 1) * 24 + EXTRACT(HOUR FROM {local}))::integer)"
        return sql, [*params, str(self.zone), *params, str(self.zone)]

    def as_sqlite(self, compiler, connection, **extra_context):
        column, column_params = compiler.compile(self.source_expressions[0])

        def week_hour(minutes: int) -> tuple[str, list]:
            # %% is SQLite's literal % (strftime formats and the modulo), after Django's
            # placeholder conversion. strftime('%w') counts from Sunday = 0.
            shift = f"'{minutes:+d} minutes'"
            sql = (
                f"(((CAST(strftime('%%w', {column}, {shift}) AS INTEGER) + 6) %% 7) * 24"
                f" + CAST(strftime('%%H', {column}, {shift}) AS INTEGER))"
            )
            return sql, [*column_params, *column_params]

        (_, first), *changes = self.segments
        if not changes:
            return week_hour(first)
        sql, params = ["CASE"], []
        offset = first
        for changed_at, next_offset in changes:
            part, part_params = week_hour(offset)
            sql.append(f"WHEN {column} < %s THEN {part}")
            params += [*column_params, connection.ops.adapt_datetimefield_value(changed_at)]
            params += part_params
            offset = next_offset
        part, part_params = week_hour(offset)
        sql.append(f"ELSE {part} END")
        params += part_params
        return " ".join(sql), params
