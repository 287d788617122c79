"""The report pages, under ``/labelling/reports/`` (namespace ``measurement``)."""

from django.urls import path

from labelling.measurement import views

app_name = "measurement"

urlpatterns = [
    path("", views.index, name="index"),
    path("measure", views.measure, name="measure"),
    path("import", views.import_view, name="import"),
    path("captures/", views.captures, name="captures"),
    path("jobs/<int:pk>/", views.job, name="job"),
    path("<int:pk>/", views.report, name="report"),
    path("<int:pk>/figures.json", views.figures_json, name="json"),
    path("<int:pk>/transcripts/<int:index>/", views.transcript, name="transcript"),
]
