"""On PostgreSQL the rate counters live in an UNLOGGED table.

A counter is worth nothing after a crash (the window it counted is over by the time
the server is back), so it need not go through the write-ahead log: a commit that
touched only unlogged tables does not wait for a disk flush, which is most of the
cost of counting a request. Other databases are left as they are.
"""

from django.db import migrations

TABLE = "playground_rate_counter"


def unlogged(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(f"ALTER TABLE {TABLE} SET UNLOGGED")


def logged(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(f"ALTER TABLE {TABLE} SET LOGGED")


class Migration(migrations.Migration):
    dependencies = [("playground", "0001_initial")]  # noqa: RUF012

    operations = [migrations.RunPython(unlogged, logged)]  # noqa: RUF012
