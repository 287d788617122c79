"""Retirement worksheets: the turns a compact compile retired (``Retirement``), a
worksheet's kind and rule, rows that judge a retired turn, the two retirement verdicts, and
their merged judgements (``RetirementLabel``)."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [  # noqa: RUF012 (generated)
        ("labelling", "0005_label_corrections"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [  # noqa: RUF012 (generated)
        migrations.CreateModel(
            name="Retirement",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("turn", models.PositiveIntegerField()),
                (
                    "role",
                    models.CharField(
                        choices=[
                            ("system", "System"),
                            ("user", "User"),
                            ("assistant", "Assistant"),
                            ("tool", "Tool"),
                        ],
                        max_length=16,
                    ),
                ),
                ("superseded_by", models.JSONField()),
                ("reason", models.TextField()),
                ("quote", models.JSONField()),
            ],
            options={
                "ordering": ("run", "transcript__position", "turn"),
            },
        ),
        migrations.CreateModel(
            name="RetirementLabel",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("schema_name", models.CharField(max_length=100)),
                ("schema_digest", models.CharField(max_length=64)),
                ("compiler_version", models.CharField(max_length=32)),
                ("turn", models.PositiveIntegerField()),
                (
                    "role",
                    models.CharField(
                        choices=[
                            ("system", "System"),
                            ("user", "User"),
                            ("assistant", "Assistant"),
                            ("tool", "Tool"),
                        ],
                        max_length=16,
                    ),
                ),
                ("superseded_by", models.JSONField()),
                ("reason", models.TextField()),
                (
                    "verdict",
                    models.CharField(
                        choices=[
                            ("correct", "Correct"),
                            ("incorrect", "Incorrect"),
                            ("unclear", "Unclear"),
                            ("safe_to_drop", "safe to drop"),
                            ("still_needed", "still needed"),
                        ],
                        max_length=16,
                    ),
                ),
                ("note", models.TextField(blank=True)),
                ("reviewers", models.JSONField(default=list)),
                ("adjudicated_by", models.CharField(blank=True, max_length=150)),
                ("quote", models.JSONField()),
                ("created_at", models.DateTimeField(auto_now_add=True)),
            ],
            options={
                "ordering": ("transcript__position", "turn"),
            },
        ),
        migrations.RemoveConstraint(
            model_name="adjudication",
            name="adj_choice",
        ),
        migrations.RemoveConstraint(
            model_name="label",
            name="label_verdict",
        ),
        migrations.RemoveConstraint(
            model_name="labelcorrection",
            name="correction_verdicts",
        ),
        migrations.RemoveConstraint(
            model_name="verdict",
            name="verdict_choice",
        ),
        migrations.AddField(
            model_name="worksheet",
            name="kind",
            field=models.CharField(
                choices=[("extraction", "extracted values"), ("retirement", "retired turns")],
                default="extraction",
                max_length=16,
            ),
        ),
        migrations.AddField(
            model_name="worksheet",
            name="rule",
            field=models.TextField(
                blank=True, help_text="The rule reviewers apply; exported with it."
            ),
        ),
        migrations.AlterField(
            model_name="adjudication",
            name="verdict",
            field=models.CharField(
                choices=[
                    ("correct", "Correct"),
                    ("incorrect", "Incorrect"),
                    ("unclear", "Unclear"),
                    ("safe_to_drop", "safe to drop"),
                    ("still_needed", "still needed"),
                ],
                max_length=16,
            ),
        ),
        migrations.AlterField(
            model_name="label",
            name="verdict",
            field=models.CharField(
                choices=[
                    ("correct", "Correct"),
                    ("incorrect", "Incorrect"),
                    ("unclear", "Unclear"),
                    ("safe_to_drop", "safe to drop"),
                    ("still_needed", "still needed"),
                ],
                max_length=16,
            ),
        ),
        migrations.AlterField(
            model_name="labelcorrection",
            name="new_verdict",
            field=models.CharField(
                choices=[
                    ("correct", "Correct"),
                    ("incorrect", "Incorrect"),
                    ("unclear", "Unclear"),
                    ("safe_to_drop", "safe to drop"),
                    ("still_needed", "still needed"),
                ],
                max_length=16,
            ),
        ),
        migrations.AlterField(
            model_name="labelcorrection",
            name="old_verdict",
            field=models.CharField(
                choices=[
                    ("correct", "Correct"),
                    ("incorrect", "Incorrect"),
                    ("unclear", "Unclear"),
                    ("safe_to_drop", "safe to drop"),
                    ("still_needed", "still needed"),
                ],
                max_length=16,
            ),
        ),
        migrations.AlterField(
            model_name="verdict",
            name="verdict",
            field=models.CharField(
                choices=[
                    ("correct", "Correct"),
                    ("incorrect", "Incorrect"),
                    ("unclear", "Unclear"),
                    ("safe_to_drop", "safe to drop"),
                    ("still_needed", "still needed"),
                ],
                max_length=16,
            ),
        ),
        migrations.AlterField(
            model_name="worksheetrow",
            name="extraction",
            field=models.ForeignKey(
                blank=True,
                null=True,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="rows",
                to="labelling.extraction",
            ),
        ),
        migrations.AddConstraint(
            model_name="adjudication",
            constraint=models.CheckConstraint(
                condition=models.Q(
                    (
                        "verdict__in",
                        ["correct", "incorrect", "unclear", "safe_to_drop", "still_needed"],
                    )
                ),
                name="adj_choice",
            ),
        ),
        migrations.AddConstraint(
            model_name="label",
            constraint=models.CheckConstraint(
                condition=models.Q(
                    (
                        "verdict__in",
                        ["correct", "incorrect", "unclear", "safe_to_drop", "still_needed"],
                    )
                ),
                name="label_verdict",
            ),
        ),
        migrations.AddConstraint(
            model_name="labelcorrection",
            constraint=models.CheckConstraint(
                condition=models.Q(
                    (
                        "old_verdict__in",
                        ["correct", "incorrect", "unclear", "safe_to_drop", "still_needed"],
                    ),
                    (
                        "new_verdict__in",
                        ["correct", "incorrect", "unclear", "safe_to_drop", "still_needed"],
                    ),
                ),
                name="correction_verdicts",
            ),
        ),
        migrations.AddConstraint(
            model_name="verdict",
            constraint=models.CheckConstraint(
                condition=models.Q(
                    (
                        "verdict__in",
                        ["correct", "incorrect", "unclear", "safe_to_drop", "still_needed"],
                    )
                ),
                name="verdict_choice",
            ),
        ),
        migrations.AddConstraint(
            model_name="worksheet",
            constraint=models.CheckConstraint(
                condition=models.Q(("kind__in", ["extraction", "retirement"])),
                name="worksheet_kind",
            ),
        ),
        migrations.AddField(
            model_name="retirement",
            name="run",
            field=models.ForeignKey(
                on_delete=django.db.models.deletion.CASCADE,
                related_name="retirements",
                to="labelling.compilerun",
            ),
        ),
        migrations.AddField(
            model_name="retirement",
            name="transcript",
            field=models.ForeignKey(
                on_delete=django.db.models.deletion.CASCADE,
                related_name="retirements",
                to="labelling.transcript",
            ),
        ),
        migrations.AddField(
            model_name="worksheetrow",
            name="retirement",
            field=models.ForeignKey(
                blank=True,
                null=True,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="rows",
                to="labelling.retirement",
            ),
        ),
        migrations.AddConstraint(
            model_name="worksheetrow",
            constraint=models.UniqueConstraint(
                fields=("worksheet", "retirement"), name="row_unique_retirement"
            ),
        ),
        migrations.AddConstraint(
            model_name="worksheetrow",
            constraint=models.CheckConstraint(
                condition=models.Q(
                    ("extraction__isnull", True), ("retirement__isnull", True), _connector="XOR"
                ),
                name="row_judges_one_thing",
            ),
        ),
        migrations.AddField(
            model_name="retirementlabel",
            name="transcript",
            field=models.ForeignKey(
                on_delete=django.db.models.deletion.CASCADE,
                related_name="retirement_labels",
                to="labelling.transcript",
            ),
        ),
        migrations.AddField(
            model_name="retirementlabel",
            name="worksheet",
            field=models.ForeignKey(
                blank=True,
                null=True,
                on_delete=django.db.models.deletion.SET_NULL,
                related_name="+",
                to="labelling.worksheet",
            ),
        ),
        migrations.AddConstraint(
            model_name="retirement",
            constraint=models.UniqueConstraint(
                fields=("run", "transcript", "turn"), name="retirement_unique"
            ),
        ),
        migrations.AddConstraint(
            model_name="retirement",
            constraint=models.CheckConstraint(
                condition=models.Q(("role__in", ["system", "user", "assistant", "tool"])),
                name="retirement_role",
            ),
        ),
        migrations.AddConstraint(
            model_name="retirementlabel",
            constraint=models.UniqueConstraint(
                fields=("transcript", "schema_name", "turn"), name="retirement_label_unique"
            ),
        ),
        migrations.AddConstraint(
            model_name="retirementlabel",
            constraint=models.CheckConstraint(
                condition=models.Q(("verdict__in", ("safe_to_drop", "still_needed"))),
                name="retirement_label_verdict",
            ),
        ),
        migrations.AddConstraint(
            model_name="retirementlabel",
            constraint=models.CheckConstraint(
                condition=models.Q(("role__in", ["system", "user", "assistant", "tool"])),
                name="retirement_label_role",
            ),
        ),
        migrations.AddConstraint(
            model_name="retirementlabel",
            constraint=models.CheckConstraint(
                condition=models.Q(
                    models.Q(("quote", []), _negated=True), ("quote__isnull", False)
                ),
                name="retirement_label_quote",
            ),
        ),
    ]
