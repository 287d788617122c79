from __future__ import annotations

from django import forms
from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.forms import BaseUserCreationForm

from compiler import list_schemas
from labelling.models import Corpus, VerdictChoice, WorksheetKind
from playground.middleware import size_text


def _schema_choices():
    return [(name, name) for name in list_schemas()]


class CorpusImportForm(forms.Form):
    upload = forms.FileField(label="Corpus file")
    name = forms.CharField(max_length=200, help_text="Defaults to the file name.", required=False)
    provenance = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 3}),
        required=False,
        help_text="Where it came from, who wrote it, its licence, how it was cut.",
    )

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["upload"].help_text = (
            "Any format the compiler reads: role: text, OpenAI messages, JSONL, SWE-agent "
            ".traj, tau-bench records, few-shot display text. Up to "
            f"{size_text(settings.CONTEXTGC_MAX_IMPORT_BYTES)}; a background worker imports it."
        )

    def clean_upload(self):
        upload = self.cleaned_data["upload"]
        limit = settings.CONTEXTGC_MAX_IMPORT_BYTES
        if upload.size > limit:  # a body sent without a length gets past the middleware's check
            raise forms.ValidationError(
                f"The file is {size_text(upload.size)}; the limit is {size_text(limit)}."
            )
        return upload


class WorksheetForm(forms.Form):
    name = forms.CharField(max_length=200)
    kind = forms.ChoiceField(
        choices=WorksheetKind.choices,
        initial=WorksheetKind.EXTRACTION,
        required=False,
        help_text="Extracted values (is this fact right?) or retired turns (safe to drop?); "
        "for retired turns the budget is the number of rows.",
    )
    corpus = forms.ModelChoiceField(queryset=Corpus.objects.all())
    schema = forms.ChoiceField(choices=_schema_choices)
    per_slot_budget = forms.IntegerField(min_value=1, max_value=1000, initial=12)
    limit = forms.IntegerField(
        min_value=1,
        required=False,
        label="Window",
        help_text="Sample only the first N transcripts (empty: the whole corpus).",
    )
    seed = forms.IntegerField(
        required=False, help_text="Shuffle the candidates with this seed (empty: file order)."
    )
    suggest = forms.BooleanField(
        required=False,
        label="Attach mechanical suggestions",
        help_text="Evidence beside each row (value in the turn? role? machine output?). "
        "Never a verdict; verdicts record that it was offered.",
    )
    reviews_per_row = forms.IntegerField(min_value=1, max_value=10, initial=2)
    reviewers = forms.ModelMultipleChoiceField(queryset=None)
    adjudicators = forms.ModelMultipleChoiceField(queryset=None, required=False)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        users = get_user_model().objects.filter(is_active=True).order_by("username")
        self.fields["reviewers"].queryset = users
        self.fields["adjudicators"].queryset = users

    def clean(self):
        data = super().clean()
        reviewers, adjudicators = data.get("reviewers"), data.get("adjudicators")
        if (
            reviewers is not None
            and adjudicators is not None
            and set(reviewers) & set(adjudicators)
        ):
            raise forms.ValidationError("An adjudicator judges disputes, not rows: pick others.")
        needed = data.get("reviews_per_row")
        if reviewers is not None and needed and needed > len(reviewers):
            raise forms.ValidationError(
                f"{needed} reviews per row need at least {needed} reviewers."
            )
        return data


class VerdictForm(forms.Form):
    verdict = forms.ChoiceField(choices=VerdictChoice.choices)
    note = forms.CharField(
        required=False, max_length=4000, widget=forms.Textarea(attrs={"rows": 2})
    )
    version = forms.IntegerField(min_value=0, widget=forms.HiddenInput)

    def __init__(self, *args, verdicts=None, **kwargs):
        """``verdicts``: the worksheet's kind's verdicts (default: every verdict)."""
        super().__init__(*args, **kwargs)
        if verdicts is not None:
            self.fields["verdict"].choices = [(v.value, v.label) for v in verdicts]


class AdjudicationForm(forms.Form):
    verdict = forms.ChoiceField(choices=VerdictChoice.choices, widget=forms.RadioSelect)
    reason = forms.CharField(max_length=4000, widget=forms.Textarea(attrs={"rows": 2}))

    def __init__(self, *args, verdicts=None, **kwargs):
        super().__init__(*args, **kwargs)
        if verdicts is not None:
            self.fields["verdict"].choices = [(v.value, v.label) for v in verdicts]


class LabelImportForm(forms.Form):
    upload = forms.FileField(label="Label file", help_text="A contextgc-labels/1 JSON file.")


class LabelSetForm(forms.Form):
    corpus = forms.ModelChoiceField(queryset=Corpus.objects.all())
    schema = forms.ChoiceField(choices=_schema_choices)
    kind = forms.ChoiceField(choices=WorksheetKind.choices, required=False)


class FirstMaintainerForm(BaseUserCreationForm):
    """The first account's name and password (typed twice)."""


class LabelCorrectionForm(forms.Form):
    verdict = forms.ChoiceField(
        choices=VerdictChoice.choices, widget=forms.RadioSelect, label="Corrected verdict"
    )
    reason = forms.CharField(
        max_length=4000,
        widget=forms.Textarea(attrs={"rows": 2}),
        help_text="Kept with the label, beside who corrected it and when.",
    )
    version = forms.IntegerField(min_value=1, widget=forms.HiddenInput)
