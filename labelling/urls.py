from django.urls import path

from labelling import label_views, start_views, views

app_name = "labelling"

urlpatterns = [
    path("", start_views.home, name="home"),
    path("first-run", start_views.first_run, name="first-run"),
    path("corpora/import", start_views.corpus_import, name="corpus-import"),
    path("worksheets/new", views.worksheet_new, name="worksheet-new"),
    path("worksheets/<int:pk>/", views.worksheet, name="worksheet"),
    path("worksheets/<int:pk>/rows/<int:position>/", views.row, name="row"),
    path(
        "worksheets/<int:pk>/rows/<int:position>/adjudicate",
        views.adjudicate_view,
        name="adjudicate",
    ),
    path(
        "worksheets/<int:pk>/rows/<int:position>/transcript",
        views.transcript,
        name="transcript",
    ),
    path("worksheets/<int:pk>/verdicts", views.my_verdicts, name="my-verdicts"),
    path("worksheets/<int:pk>/agreement", views.agreement_view, name="agreement"),
    path("worksheets/<int:pk>/disagreements", views.disagreements, name="disagreements"),
    path("worksheets/<int:pk>/export.json", views.export, name="export"),
    path("worksheets/<int:pk>/merge", views.merge, name="merge"),
    path("labels/", label_views.labels_list, name="labels"),
    path("labels/<int:pk>/correct", label_views.label_correct, name="label-correct"),
    path("labels/import", label_views.labels_import, name="labels-import"),
    path("labels/export.json", label_views.labels_export, name="labels-export"),
    path("precision", label_views.precision, name="precision"),
]
