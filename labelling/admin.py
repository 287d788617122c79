"""The admin: accounts, corpora and worksheets for maintainers. Verdicts are read-only
here — a reviewer's verdict is changed only by that reviewer, through the worksheet —
and so are labels and their corrections: a label is corrected on its own page
(``/labelling/labels/<id>/correct``), which keeps the audit trail."""

from django.contrib import admin

from labelling.models import (
    Adjudication,
    CompileRun,
    Corpus,
    Label,
    LabelCorrection,
    Membership,
    Verdict,
    Worksheet,
)


@admin.register(Corpus)
class CorpusAdmin(admin.ModelAdmin):
    list_display = ("name", "format", "source", "size_bytes", "created_at")
    readonly_fields = ("digest", "size_bytes", "warnings", "imported_by", "created_at")
    search_fields = ("name", "source")


@admin.register(CompileRun)
class CompileRunAdmin(admin.ModelAdmin):
    list_display = ("corpus", "schema_name", "schema_digest", "compiler_version", "created_at")
    list_filter = ("schema_name",)


class MembershipInline(admin.TabularInline):
    model = Membership
    extra = 1
    autocomplete_fields = ("user",)


@admin.register(Worksheet)
class WorksheetAdmin(admin.ModelAdmin):
    list_display = ("name", "schema_name", "per_slot_budget", "reviews_per_row", "created_at")
    readonly_fields = ("run", "schema_name", "schema_digest", "sampling", "shortfalls")
    inlines = (MembershipInline,)


class ReadOnlyAdmin(admin.ModelAdmin):
    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False


@admin.register(Verdict)
class VerdictAdmin(ReadOnlyAdmin):
    list_display = ("row", "reviewer", "verdict", "version", "suggestion_offered", "updated_at")
    list_filter = ("verdict",)


@admin.register(Adjudication)
class AdjudicationAdmin(ReadOnlyAdmin):
    list_display = ("row", "adjudicator", "verdict", "updated_at")


@admin.register(Label)
class LabelAdmin(ReadOnlyAdmin):
    list_display = ("transcript", "schema_name", "slot", "turn", "value", "verdict")
    list_filter = ("schema_name", "slot", "verdict")


@admin.register(LabelCorrection)
class LabelCorrectionAdmin(ReadOnlyAdmin):
    list_display = (
        "label",
        "version",
        "old_verdict",
        "new_verdict",
        "corrected_by",
        "corrected_at",
    )
    list_filter = ("new_verdict",)
