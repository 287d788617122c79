"""The pages before any worksheet: the home page, the first-run page that makes the
first maintainer, and the corpus import form. Each view: fetch, check access
(``labelling.access``), act, render.

The first account can only be made from the site's own machine, and only while no
account exists; a corpus import is queued as a background job and the view redirects to
it.
"""

from __future__ import annotations

from pathlib import PurePath

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import login as sign_in
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.shortcuts import redirect, render
from django.utils.module_loading import import_string

from labelling import access
from labelling.accounts import FirstRunTaken, create_first_maintainer, is_local, no_account_yet
from labelling.forms import CorpusImportForm, FirstMaintainerForm
from labelling.models import Corpus, Worksheet


@login_required
def home(request):
    sheets = Worksheet.objects.filter(memberships__user=request.user).select_related("run__corpus")
    maintainer = access.is_maintainer(request.user)
    context = {
        "memberships": request.user.memberships.select_related("worksheet__run__corpus"),
        "all_worksheets": Worksheet.objects.exclude(pk__in=sheets) if maintainer else (),
        "corpora": Corpus.objects.all() if maintainer else (),
        "maintainer": maintainer,
    }
    return render(request, "labelling/home.html", context)


def first_run(request):
    """Create the first account, a maintainer, while none exists (from this machine only)."""
    if not is_local(request):
        raise PermissionDenied("The first account can only be made on the site's own machine.")
    form = FirstMaintainerForm(request.POST or None)
    if request.method == "POST" and form.is_valid():  # the account is checked for again below
        try:
            user = create_first_maintainer(
                form.cleaned_data["username"], form.cleaned_data["password1"]
            )
        except FirstRunTaken as taken:
            return render(request, "labelling/first_run.html", {"taken": taken}, status=409)
        sign_in(request, user, backend="django.contrib.auth.backends.ModelBackend")
        messages.success(request, f"Welcome, {user.get_username()}: you are the maintainer.")
        return redirect("labelling:home")
    if request.method != "POST" and not no_account_yet():
        return redirect("login")
    status = 422 if form.errors else 200
    return render(request, "labelling/first_run.html", {"form": form}, status=status)


@login_required
def corpus_import(request):
    access.require_perm(request.user, access.IMPORT_CORPUS)
    form = CorpusImportForm(request.POST or None, request.FILES or None)
    if request.method == "POST" and form.is_valid():
        upload = form.cleaned_data["upload"]
        job = import_string(settings.CONTEXTGC_IMPORT_QUEUE)(
            upload,
            name=form.cleaned_data["name"] or PurePath(upload.name).name,
            provenance=form.cleaned_data["provenance"],
            user=request.user,
        )
        return redirect(job)
    status = 422 if form.errors else 200
    return render(request, "labelling/corpus_import.html", {"form": form}, status=status)
