"""Maintainers made before they were given the admin get it now (``is_staff``)."""

from django.conf import settings
from django.db import migrations

MAINTAINERS = "labelling maintainers"


def give_the_admin(apps, schema_editor):
    User = apps.get_model(*settings.AUTH_USER_MODEL.split("."))
    User.objects.filter(groups__name=MAINTAINERS, is_staff=False).update(is_staff=True)


class Migration(migrations.Migration):
    dependencies = [  # noqa: RUF012 (generated)
        ("labelling", "0003_measurement_moves_out"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [migrations.RunPython(give_the_admin, migrations.RunPython.noop)]  # noqa: RUF012
