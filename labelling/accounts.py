"""Accounts without a shell: the first maintainer, and who may use the admin.

On a fresh database nobody can sign in, so the sign-in page offers to create the
first account — a maintainer who may also use the admin (``is_staff`` and
``is_superuser``, so they can make the reviewers' accounts there). The offer stands
only while no account exists and only to a client on this machine (a loopback
address, not behind a proxy), and two people submitting it at once make exactly
one account: the check and the insert run under a lock on the user table.

Maintainers made later (``create_reviewer --maintainer``) get ``is_staff`` too: the
admin shows them the labelling models their permissions cover.
"""

from __future__ import annotations

import ipaddress

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group, Permission
from django.contrib.auth.views import LoginView
from django.db import connection, transaction

from labelling.access import MAINTAINER_PERMISSIONS

MAINTAINERS = "labelling maintainers"


def maintainers_group() -> Group:
    group, _ = Group.objects.get_or_create(name=MAINTAINERS)
    group.permissions.set(
        Permission.objects.filter(
            content_type__app_label="labelling", codename__in=MAINTAINER_PERMISSIONS
        )
    )
    return group


def make_maintainer(user) -> None:
    """Give ``user`` the maintainers' permissions and the admin (saves the user)."""
    user.is_staff = True
    user.save(update_fields=["is_staff"])
    user.groups.add(maintainers_group())


def is_local(request) -> bool:
    """Whether the request comes from this machine itself, not through a proxy.

    A reverse proxy on the same host would make every client look local, so a
    request carrying ``X-Forwarded-For`` is not local when no proxy is trusted
    (``CONTEXTGC_PROXY_HOPS = 0``); with trusted proxies, the client they name counts.
    """
    from playground.limits import bare_address, client_ip

    if not settings.CONTEXTGC_PROXY_HOPS and request.META.get("HTTP_X_FORWARDED_FOR"):
        return False
    address = bare_address(client_ip(request))
    return address is not None and ipaddress.ip_address(address).is_loopback


def no_account_yet() -> bool:
    return not get_user_model().objects.exists()


def first_run_open(request) -> bool:
    """The first-account offer: no account exists yet and the client is local."""
    return is_local(request) and no_account_yet()


class FirstRunTaken(Exception):
    """An account exists already (perhaps made a moment ago by another request)."""


def create_first_maintainer(username: str, password: str):
    """The first account, a maintainer with the admin; ``FirstRunTaken`` if one exists.

    The existence check and the insert hold a lock that conflicts with itself on the
    user table (PostgreSQL); SQLite's IMMEDIATE transactions take the database's
    write lock at the start, which serialises them the same way.
    """
    User = get_user_model()
    with transaction.atomic():
        if connection.vendor == "postgresql":
            with connection.cursor() as cursor:
                table = connection.ops.quote_name(User._meta.db_table)
                cursor.execute(f"LOCK TABLE {table} IN SHARE ROW EXCLUSIVE MODE")
        if User.objects.exists():
            raise FirstRunTaken("An account exists already: sign in with it.")
        user = User.objects.create_superuser(username, email="", password=password)
        make_maintainer(user)
    return user


class SignInView(LoginView):
    """Django's sign-in page, offering the first account while there is none."""

    template_name = "labelling/login.html"

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        context["first_run"] = first_run_open(self.request)
        return context
