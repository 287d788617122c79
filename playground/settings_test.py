"""Settings for the test suite: production settings with a throwaway key.

Static files use plain storage so templates render without ``collectstatic``.
Everything else — the database from ``DATABASE_URL``, the rate limit, the
security headers — is what production runs.
"""

import os

os.environ.setdefault("DJANGO_SECRET_KEY", "test-only-key-that-signs-nothing-real")

from playground.settings import *  # noqa: F403

STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}

# Serve static files from the finders, as in development: nothing is collected for tests.
WHITENOISE_USE_FINDERS = True
WHITENOISE_AUTOREFRESH = True
