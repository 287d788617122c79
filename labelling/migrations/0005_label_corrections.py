"""A maintainer's corrections of stored labels (``LabelCorrection``), and the version
that each correction names (``Label.version``)."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [  # noqa: RUF012 (generated)
        ("labelling", "0004_maintainers_use_the_admin"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [  # noqa: RUF012 (generated)
        migrations.CreateModel(
            name="LabelCorrection",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("corrected_at", models.DateTimeField(auto_now_add=True)),
                (
                    "old_verdict",
                    models.CharField(
                        choices=[
                            ("correct", "Correct"),
                            ("incorrect", "Incorrect"),
                            ("unclear", "Unclear"),
                        ],
                        max_length=16,
                    ),
                ),
                (
                    "new_verdict",
                    models.CharField(
                        choices=[
                            ("correct", "Correct"),
                            ("incorrect", "Incorrect"),
                            ("unclear", "Unclear"),
                        ],
                        max_length=16,
                    ),
                ),
                ("reason", models.TextField()),
                ("version", models.PositiveIntegerField()),
            ],
            options={
                "ordering": ("label", "version"),
            },
        ),
        migrations.AddField(
            model_name="label",
            name="version",
            field=models.PositiveIntegerField(default=1),
        ),
        migrations.AddConstraint(
            model_name="label",
            constraint=models.CheckConstraint(
                condition=models.Q(("version__gte", 1)), name="label_version"
            ),
        ),
        migrations.AddField(
            model_name="labelcorrection",
            name="corrected_by",
            field=models.ForeignKey(
                on_delete=django.db.models.deletion.PROTECT,
                related_name="label_corrections",
                to=settings.AUTH_USER_MODEL,
            ),
        ),
        migrations.AddField(
            model_name="labelcorrection",
            name="label",
            field=models.ForeignKey(
                on_delete=django.db.models.deletion.CASCADE,
                related_name="corrections",
                to="labelling.label",
            ),
        ),
        migrations.AddConstraint(
            model_name="labelcorrection",
            constraint=models.UniqueConstraint(
                fields=("label", "version"), name="correction_one_per_version"
            ),
        ),
        migrations.AddConstraint(
            model_name="labelcorrection",
            constraint=models.CheckConstraint(
                condition=models.Q(
                    ("old_verdict__in", ["correct", "incorrect", "unclear"]),
                    ("new_verdict__in", ["correct", "incorrect", "unclear"]),
                ),
                name="correction_verdicts",
            ),
        ),
        migrations.AddConstraint(
            model_name="labelcorrection",
            constraint=models.CheckConstraint(
                condition=models.Q(("old_verdict", models.F("new_verdict")), _negated=True),
                name="correction_changes",
            ),
        ),
        migrations.AddConstraint(
            model_name="labelcorrection",
            constraint=models.CheckConstraint(
                condition=models.Q(("reason", ""), _negated=True), name="correction_has_reason"
            ),
        ),
    ]
