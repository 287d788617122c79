#!/usr/bin/env python3
"""Django's command-line utility for the contextgc site."""

import os
import sys


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "playground.settings")
    from playground.env import development_default

    if development_default():  # a fresh clone: the same development mode as scripts/serve
        os.environ["DJANGO_DEBUG"] = "1"
    from django.core.management import execute_from_command_line

    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()
