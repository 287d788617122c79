"""The measurement models move here from the labelling app, their tables unchanged.

``Job``, ``JobChunk`` and ``Report`` were created by ``labelling.0002_jobs``. This
migration adds them to this app's state only (``db_table`` keeps the existing tables,
their rows and constraints); ``labelling.0003_measurement_moves_out`` then removes them
from the labelling app's state, again without touching the database. Their content
types follow them, so permissions granted on them stay attached.
"""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

MOVED = ("job", "jobchunk", "report")


def move_content_types(source: str, target: str):
    def move(apps, schema_editor):
        content_type = apps.get_model("contenttypes", "ContentType")
        db = schema_editor.connection.alias
        content_type.objects.using(db).filter(app_label=source, model__in=MOVED).update(
            app_label=target
        )

    return move


class Migration(migrations.Migration):
    initial = True

    dependencies = [  # noqa: RUF012 (generated)
        ("labelling", "0002_jobs"),
        ("contenttypes", "0002_remove_content_type_name"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [  # noqa: RUF012 (generated)
        migrations.SeparateDatabaseAndState(
            database_operations=[],
            state_operations=[
                migrations.CreateModel(
                    name="Job",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True,
                                primary_key=True,
                                serialize=False,
                                verbose_name="ID",
                            ),
                        ),
                        (
                            "kind",
                            models.CharField(
                                choices=[
                                    ("import", "import a corpus"),
                                    ("measure", "measure a corpus"),
                                ],
                                max_length=16,
                            ),
                        ),
                        (
                            "status",
                            models.CharField(
                                choices=[
                                    ("queued", "Queued"),
                                    ("running", "Running"),
                                    ("done", "Done"),
                                    ("failed", "Failed"),
                                ],
                                default="queued",
                                max_length=16,
                            ),
                        ),
                        ("title", models.CharField(max_length=300)),
                        ("schema_name", models.CharField(blank=True, max_length=100)),
                        ("params", models.JSONField(blank=True, default=dict)),
                        ("units_total", models.PositiveIntegerField(default=0)),
                        ("units_done", models.PositiveIntegerField(default=0)),
                        ("chunks_total", models.PositiveIntegerField(default=0)),
                        ("chunks_done", models.PositiveIntegerField(default=0)),
                        ("error", models.TextField(blank=True)),
                        ("payload", models.BinaryField(blank=True, null=True)),
                        ("created_at", models.DateTimeField(auto_now_add=True)),
                        ("started_at", models.DateTimeField(blank=True, null=True)),
                        ("finished_at", models.DateTimeField(blank=True, null=True)),
                        (
                            "corpus",
                            models.ForeignKey(
                                blank=True,
                                null=True,
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="jobs",
                                to="labelling.corpus",
                            ),
                        ),
                        (
                            "created_by",
                            models.ForeignKey(
                                blank=True,
                                null=True,
                                on_delete=django.db.models.deletion.SET_NULL,
                                related_name="+",
                                to=settings.AUTH_USER_MODEL,
                            ),
                        ),
                    ],
                    options={
                        "db_table": "labelling_job",
                        "ordering": ("-created_at", "-id"),
                    },
                ),
                migrations.CreateModel(
                    name="JobChunk",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True,
                                primary_key=True,
                                serialize=False,
                                verbose_name="ID",
                            ),
                        ),
                        ("index", models.PositiveIntegerField()),
                        ("positions", models.JSONField(default=list)),
                        (
                            "status",
                            models.CharField(
                                choices=[
                                    ("queued", "Queued"),
                                    ("running", "Running"),
                                    ("done", "Done"),
                                    ("failed", "Failed"),
                                ],
                                default="queued",
                                max_length=16,
                            ),
                        ),
                        ("rows", models.JSONField(blank=True, default=list)),
                        ("errors", models.JSONField(blank=True, default=list)),
                        ("peer", models.JSONField(blank=True, default=dict)),
                        ("worker", models.CharField(blank=True, max_length=200)),
                        ("seconds", models.FloatField(blank=True, null=True)),
                        ("started_at", models.DateTimeField(blank=True, null=True)),
                        ("finished_at", models.DateTimeField(blank=True, null=True)),
                        (
                            "job",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="chunks",
                                to="measurement.job",
                            ),
                        ),
                    ],
                    options={
                        "db_table": "labelling_jobchunk",
                        "ordering": ("job", "index"),
                    },
                ),
                migrations.CreateModel(
                    name="Report",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True,
                                primary_key=True,
                                serialize=False,
                                verbose_name="ID",
                            ),
                        ),
                        (
                            "kind",
                            models.CharField(
                                choices=[
                                    ("measure", "corpus report"),
                                    ("records", "ground truth from records"),
                                ],
                                max_length=16,
                            ),
                        ),
                        ("title", models.CharField(max_length=300)),
                        ("schema_name", models.CharField(max_length=100)),
                        (
                            "command",
                            models.TextField(
                                help_text="The command that reproduces these figures."
                            ),
                        ),
                        ("figures", models.JSONField()),
                        ("created_at", models.DateTimeField(auto_now_add=True)),
                        (
                            "corpus",
                            models.ForeignKey(
                                blank=True,
                                null=True,
                                on_delete=django.db.models.deletion.SET_NULL,
                                related_name="reports",
                                to="labelling.corpus",
                            ),
                        ),
                        (
                            "job",
                            models.OneToOneField(
                                blank=True,
                                null=True,
                                on_delete=django.db.models.deletion.SET_NULL,
                                related_name="report",
                                to="measurement.job",
                            ),
                        ),
                    ],
                    options={
                        "db_table": "labelling_report",
                        "ordering": ("-created_at", "-id"),
                    },
                ),
                migrations.AddConstraint(
                    model_name="job",
                    constraint=models.CheckConstraint(
                        condition=models.Q(("kind__in", ["import", "measure"])), name="job_kind"
                    ),
                ),
                migrations.AddConstraint(
                    model_name="job",
                    constraint=models.CheckConstraint(
                        condition=models.Q(("status__in", ["queued", "running", "done", "failed"])),
                        name="job_status",
                    ),
                ),
                migrations.AddConstraint(
                    model_name="job",
                    constraint=models.CheckConstraint(
                        condition=models.Q(("units_done__lte", models.F("units_total"))),
                        name="job_units_le_total",
                    ),
                ),
                migrations.AddConstraint(
                    model_name="job",
                    constraint=models.CheckConstraint(
                        condition=models.Q(("chunks_done__lte", models.F("chunks_total"))),
                        name="job_chunks_le_total",
                    ),
                ),
                migrations.AddConstraint(
                    model_name="jobchunk",
                    constraint=models.UniqueConstraint(
                        fields=("job", "index"), name="job_chunk_unique"
                    ),
                ),
                migrations.AddConstraint(
                    model_name="jobchunk",
                    constraint=models.CheckConstraint(
                        condition=models.Q(("status__in", ["queued", "running", "done", "failed"])),
                        name="job_chunk_status",
                    ),
                ),
                migrations.AddConstraint(
                    model_name="report",
                    constraint=models.CheckConstraint(
                        condition=models.Q(("kind__in", ["measure", "records"])), name="report_kind"
                    ),
                ),
            ],
        ),
        migrations.RunPython(
            move_content_types("labelling", "measurement"),
            move_content_types("measurement", "labelling"),
        ),
    ]
