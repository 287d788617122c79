"""Job, JobChunk and Report now belong to the measurement app (``labelling.measurement``).

State only: ``measurement.0001_initial`` took them over with their tables as they are,
so nothing here touches the database.
"""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [  # noqa: RUF012 (generated)
        ("labelling", "0002_jobs"),
        ("measurement", "0001_initial"),
    ]

    operations = [  # noqa: RUF012 (generated)
        migrations.SeparateDatabaseAndState(
            database_operations=[],
            state_operations=[
                migrations.DeleteModel(name="Report"),
                migrations.DeleteModel(name="JobChunk"),
                migrations.DeleteModel(name="Job"),
            ],
        ),
    ]
