"""The console's form: a transcript (pasted or uploaded) and the compile options."""

from __future__ import annotations

from django import forms
from django.conf import settings

from compiler import MODES, POLICIES, list_schemas
from playground.loop_bill import DEFAULT_MODEL
from playground.service import DEFAULT_COUNTER, exact_counter

NO_SCHEMA = ""

POLICY_HELP = {
    "declaration_policy": "When the agent declares a key the schema does not define.",
    "value_policy": "When a declared value does not have the slot's shape.",
}


# the options the console folds under "More options" while they hold their defaults
MORE_OPTIONS = (
    "teach_protocol",
    "declaration_policy",
    "value_policy",
    "recall_query",
    "invariants",
)


def _choices(values) -> list[tuple[str, str]]:
    return [(value, value) for value in values]


class CompileForm(forms.Form):
    transcript = forms.CharField(
        required=False,
        strip=False,
        label="Transcript",
        help_text="Plain 'role: text' lines, an OpenAI message array, JSONL, a SWE-agent "
        ".traj or tau-bench records.",
        widget=forms.Textarea(attrs={"rows": 8, "spellcheck": "false", "class": "mono"}),
    )
    upload = forms.FileField(
        required=False,
        label="…or upload a file",
        help_text="UTF-8 text, at most 256 KiB. An uploaded file is used instead of pasted text.",
    )
    entity_schema = forms.ChoiceField(
        required=False,
        label="Schema",
        choices=[(NO_SCHEMA, "none — no state is tracked"), *_choices(list_schemas())],
    )
    mode = forms.ChoiceField(label="Mode", choices=_choices(MODES), initial="compact")
    teach_protocol = forms.BooleanField(
        required=False,
        label="Teach the state protocol",
        help_text="Adds the instruction that asks the agent to declare what changed.",
    )
    invariants = forms.CharField(
        required=False,
        label="Invariants",
        help_text="Rules the model must keep, one a line; each is stated once.",
        widget=forms.Textarea(attrs={"rows": 3}),
    )
    recall_query = forms.CharField(
        required=False,
        max_length=500,
        label="Recall",
        help_text="Words to find a retired turn by; the best match is appended to the last "
        "user turn.",
    )
    declaration_policy = forms.ChoiceField(
        label="Off-schema declarations",
        choices=_choices(POLICIES),
        initial="flag",
        help_text=POLICY_HELP["declaration_policy"],
    )
    value_policy = forms.ChoiceField(
        label="Wrong-shaped values",
        choices=_choices(POLICIES),
        initial="flag",
        help_text=POLICY_HELP["value_policy"],
    )

    token_counter = forms.ChoiceField(
        label="Token counts",
        choices=[
            ("chars/4", "estimated: chars/4, as the API counts by default"),
            ("exact", "exact: o200k_base"),
        ],
        initial=DEFAULT_COUNTER,
        required=False,
    )
    bill_model = forms.ChoiceField(
        label="The loop's bill, priced as",
        choices=[
            ("openai@0.1", "cached tokens at 0.1 of the input price"),
            ("openai@0.25", "cached tokens at 0.25 of the input price"),
            ("openai@0.5", "cached tokens at 0.5 of the input price"),
            ("anthropic", "Anthropic: reads at 0.1, writes at 1.25"),
        ],
        initial=DEFAULT_MODEL,
        required=False,
    )
    changed_only = forms.BooleanField(
        required=False,
        label="Changed turns only",
        help_text="Fold each run of turns the compile left as they were into one line.",
    )

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("label_suffix", "")
        super().__init__(*args, **kwargs)
        if exact_counter() is None:  # offered only where the exact extra is installed
            field = self.fields["token_counter"]
            field.choices = field.choices[:1]
            field.help_text = "Exact counts need the library's 'exact' extra (rs-bpe)."

    def clean_upload(self):
        upload = self.cleaned_data.get("upload")
        if upload is None:
            return None
        if upload.size > settings.CONTEXTGC_MAX_BODY_BYTES:
            raise forms.ValidationError("The file is larger than 256 KiB.")
        try:
            return upload.read().decode("utf-8-sig")
        except UnicodeDecodeError:
            raise forms.ValidationError("The file is not UTF-8 text.") from None

    def clean(self):
        data = super().clean()
        # the upload if it holds anything, else the pasted text: a blank file hides nothing
        given = (data.get("upload"), data.get("transcript"))
        text = next((t for t in given if t and t.strip()), "")
        if not text.strip() and not self.errors:
            raise forms.ValidationError("Paste a transcript or upload a file.")
        data["text"] = text
        return data

    def compile_fields(self) -> dict:
        """Keyword arguments for ``service.run_compile``."""
        data = self.cleaned_data
        return {
            "transcript": data["text"],
            "entity_schema": data["entity_schema"] or None,
            "mode": data["mode"],
            "teach_protocol": data["teach_protocol"],
            "invariants": [
                line.strip() for line in data["invariants"].splitlines() if line.strip()
            ],
            "recall_query": data["recall_query"].strip() or None,
            "declaration_policy": data["declaration_policy"],
            "value_policy": data["value_policy"],
            "token_counter": data["token_counter"] or DEFAULT_COUNTER,
        }

    @property
    def more_options_changed(self) -> bool:
        """Whether an option under "More options" is set or wrong: then it is shown open."""
        if not self.is_bound:
            return False
        return any(name in self.changed_data or name in self.errors for name in MORE_OPTIONS)

    @property
    def source(self) -> str:
        upload = self.files.get("upload")
        if upload is not None and self.cleaned_data["text"] == self.cleaned_data.get("upload"):
            return f"uploaded file {upload.name} ({upload.size:,} bytes)"
        return f"pasted text ({len(self.cleaned_data['text']):,} characters)"
