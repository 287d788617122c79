from django.apps import AppConfig


class MeasurementConfig(AppConfig):
    name = "labelling.measurement"
    label = "measurement"
    verbose_name = "Measurement"
    default_auto_field = "django.db.models.BigAutoField"
