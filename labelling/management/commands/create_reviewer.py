"""manage.py create_reviewer USERNAME [--maintainer] [--password-env VAR]"""

import getpass
import os

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from labelling.accounts import MAINTAINERS, maintainers_group, make_maintainer

__all__ = ["MAINTAINERS", "Command", "maintainers_group"]


class Command(BaseCommand):
    help = (
        "Create (or update) a reviewer account. --maintainer also lets them import corpora, "
        "build worksheets, merge and import label files and read precision."
    )

    def add_arguments(self, parser):
        parser.add_argument("username")
        parser.add_argument("--email", default="")
        parser.add_argument("--maintainer", action="store_true")
        parser.add_argument(
            "--password-env", metavar="VAR",
            help="Read the password from this environment variable (else asked for).",
        )  # fmt: skip

    def handle(self, *args, username, email, maintainer, password_env, **options):
        password = self._password(password_env)
        User = get_user_model()
        user, created = User.objects.get_or_create(username=username, defaults={"email": email})
        user.set_password(password)
        user.save()
        if maintainer:
            make_maintainer(user)
        role = "maintainer" if maintainer else "reviewer"
        self.stdout.write(f"{'created' if created else 'updated'} {role} {username}")

    def _password(self, variable):
        if variable:
            password = os.environ.get(variable, "")
            if not password:
                raise CommandError(f"${variable} is empty or unset")
            return password
        password = getpass.getpass("Password: ")
        if not password or password != getpass.getpass("Again: "):
            raise CommandError("passwords empty or different")
        return password
