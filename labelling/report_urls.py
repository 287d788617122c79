"""The report pages, under ``labelling/reports/`` (namespace ``labelling:reports``)."""

from django.urls import path

from labelling import report_views

app_name = "reports"

urlpatterns = [
    path("", report_views.index, name="index"),
    path("measure", report_views.measure, name="measure"),
    path("import", report_views.import_view, name="import"),
    path("jobs/<int:pk>/", report_views.job, name="job"),
    path("<int:pk>/", report_views.report, name="report"),
    path("<int:pk>/figures.json", report_views.figures_json, name="json"),
    path("<int:pk>/transcripts/<int:index>/", report_views.transcript, name="transcript"),
]
