"""Settings of the contextgc site, read from the environment (see ``playground.env``).

``DATABASE_URL`` picks the database (PostgreSQL through psycopg 3); unset, an
embedded SQLite file under ``var/`` so one command starts the site. With
``DJANGO_DEBUG`` off, ``DJANGO_SECRET_KEY`` is required and cookies, HSTS and
static files are set up for production.
"""

from pathlib import Path

import dj_database_url
from csp.constants import NONE, SELF
from django.core.exceptions import ImproperlyConfigured

from playground.env import env_bool, env_float, env_int, env_list, env_str, env_url

BASE_DIR = Path(__file__).resolve().parent.parent

DEBUG = env_bool("DJANGO_DEBUG", False)
SECRET_KEY = env_str("DJANGO_SECRET_KEY")
if SECRET_KEY is None:
    if not DEBUG:
        raise ImproperlyConfigured(
            "DJANGO_SECRET_KEY must be set when DJANGO_DEBUG is off; for a local "
            "try-out set DJANGO_DEBUG=1 (`bash scripts/serve` and `python3 manage.py` do "
            "that themselves when none of DJANGO_DEBUG, DJANGO_SECRET_KEY, DATABASE_URL is set)"
        )
    SECRET_KEY = "django-insecure-local-development-only"

ALLOWED_HOSTS = env_list("DJANGO_ALLOWED_HOSTS", ("127.0.0.1", "localhost", "[::1]"))
CSRF_TRUSTED_ORIGINS = env_list("DJANGO_CSRF_TRUSTED_ORIGINS")

INSTALLED_APPS = [
    "whitenoise.runserver_nostatic",
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "corsheaders",
    "csp",
    "django_htmx",
    "template_partials",
    "ninja",
    "django_ratelimit",
    "playground",
    "labelling",
    "labelling.measurement",
    "django_tasks",
    "django_tasks_db",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "corsheaders.middleware.CorsMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "playground.middleware.PageAuthenticationMiddleware",
    "playground.middleware.PageMessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "playground.middleware.ContentSecurityPolicyMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    # Last, so a 413 carries every header above; it still refuses before any body is read.
    "playground.middleware.BodyLimitMiddleware",
]

ROOT_URLCONF = "playground.urls"

# Reviewers log in with Django's own auth (labelling/); the admin or
# `manage.py create_reviewer` makes their accounts.
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "labelling:home"
LOGOUT_REDIRECT_URL = "login"
WSGI_APPLICATION = "playground.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.template.context_processors.csrf",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

# Database: PostgreSQL from DATABASE_URL, else an embedded SQLite file.
DATABASE_URL = env_str("DATABASE_URL")
SQLITE_PATH = Path(env_str("CONTEXTGC_SQLITE_PATH", str(BASE_DIR / "var" / "contextgc.sqlite3")))
if DATABASE_URL:
    DATABASES = {
        "default": dj_database_url.parse(
            DATABASE_URL,
            conn_max_age=env_int("CONTEXTGC_DB_CONN_MAX_AGE", 600),
            conn_health_checks=env_bool("CONTEXTGC_DB_HEALTH_CHECKS", True),
        )
    }
else:
    SQLITE_PATH.parent.mkdir(parents=True, exist_ok=True)
    DATABASES = {
        "default": {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": SQLITE_PATH,
            "CONN_MAX_AGE": env_int("CONTEXTGC_DB_CONN_MAX_AGE", 600),
            # Several gunicorn workers write rate-limit counters: WAL lets readers go on,
            # IMMEDIATE takes the write lock up front instead of failing on upgrade.
            "OPTIONS": {
                "timeout": 20,
                "transaction_mode": "IMMEDIATE",
                "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
            },
            # A file, so processes other than the test runner (gunicorn) can share it.
            "TEST": {"NAME": str(SQLITE_PATH.with_name(f"test-{SQLITE_PATH.name}"))},
        }
    }
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# Background jobs (importing and measuring corpora): Django's tasks framework through
# the django-tasks backport, queued in the database (django-tasks-db), so every
# `manage.py db_worker` process on any machine shares one queue through PostgreSQL.
TASKS = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend"}}

# The rate limit (django-ratelimit) counts requests in the "ratelimit" cache, which every
# worker process must share: memcached when CONTEXTGC_MEMCACHED names one (host:port),
# else counters in the site's database (playground.ratecache: one statement per call,
# atomic; Django's DatabaseCache increments by get-then-set). "default" is per process.
CONTEXTGC_MEMCACHED = env_str("CONTEXTGC_MEMCACHED")
# pymemcache marks an unreachable server dead at its first failure (retrying it would
# answer "no count" in between) and tries it again 5 s later, so every refusal while it
# is down says it cannot be reached.
CONTEXTGC_MEMCACHED_OPTIONS = {
    "no_delay": True,
    "connect_timeout": 2,
    "timeout": 2,
    "retry_attempts": 0,
    "dead_timeout": 5,
}
CACHES = {
    "default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"},
    "ratelimit": (
        {
            "BACKEND": "django.core.cache.backends.memcached.PyMemcacheCache",
            "LOCATION": CONTEXTGC_MEMCACHED,
            "OPTIONS": CONTEXTGC_MEMCACHED_OPTIONS,
        }
        if CONTEXTGC_MEMCACHED
        else {"BACKEND": "playground.ratecache.CounterCache"}
    ),
}
RATELIMIT_USE_CACHE = "ratelimit"
# django-ratelimit warns (W001) about cache backends it does not know to be atomic;
# CounterCache is (each call is one SQL statement; tests/site/test_site_ratelimit.py).
SILENCED_SYSTEM_CHECKS = ["django_ratelimit.W001"]
CONTEXTGC_RATE_LIMIT = env_int("CONTEXTGC_RATE_LIMIT", 60, minimum=1)  # per minute per client
# Sign-in attempts (the reviewers' login and the admin's), counted in the same cache: per
# user name tried, and per client whatever the names (django-ratelimit's rate syntax).
CONTEXTGC_LOGIN_RATE_ACCOUNT = env_str("CONTEXTGC_LOGIN_RATE_ACCOUNT", "10/15m")
CONTEXTGC_LOGIN_RATE_CLIENT = env_str("CONTEXTGC_LOGIN_RATE_CLIENT", "30/15m")
# How many reverse proxies in front append to X-Forwarded-For; 0 trusts only REMOTE_ADDR.
CONTEXTGC_PROXY_HOPS = env_int("CONTEXTGC_PROXY_HOPS", 0)

# Request bodies: one cap for the API, the proxy and the console.
CONTEXTGC_MAX_BODY_BYTES = 256 * 1024
DATA_UPLOAD_MAX_MEMORY_SIZE = CONTEXTGC_MAX_BODY_BYTES
FILE_UPLOAD_MAX_MEMORY_SIZE = CONTEXTGC_MAX_BODY_BYTES

# The optional chat-completions proxy: off unless the operator sets a key.
CONTEXTGC_UPSTREAM_KEY = env_str("CONTEXTGC_UPSTREAM_KEY")
CONTEXTGC_UPSTREAM_BASE = env_url("CONTEXTGC_UPSTREAM_BASE", "https://api.openai.com/v1")
CONTEXTGC_UPSTREAM_MODEL = env_str("CONTEXTGC_UPSTREAM_MODEL", "gpt-4o-mini")
CONTEXTGC_UPSTREAM_TIMEOUT = env_float("CONTEXTGC_UPSTREAM_TIMEOUT", 60.0, minimum=1.0)

# The captures report page (/labelling/reports/captures/): every capture file in
# CONTEXTGC_CAPTURES_DIR, replayed by shadow against the corpus they were made over and,
# where an environment's records score the capture's schema, against the corpora folder's
# records. Unset corpus: the page lists the captures without their replay.
CONTEXTGC_CAPTURES_DIR = Path(env_str("CONTEXTGC_CAPTURES_DIR", str(BASE_DIR / "captures")))
CONTEXTGC_CAPTURES_CORPUS = env_str("CONTEXTGC_CAPTURES_CORPUS")
CONTEXTGC_CAPTURES_RECORDS = env_str("CONTEXTGC_CAPTURES_RECORDS")

# CORS: only for origins the operator lists, only on the API and the proxy.
CORS_ALLOWED_ORIGINS = env_list("CONTEXTGC_ALLOWED_ORIGINS")
CORS_URLS_REGEX = r"^/(api|v1)/"
CORS_ALLOW_METHODS = ("GET", "POST", "OPTIONS")
CORS_ALLOW_HEADERS = ("accept", "content-type")  # never authorization: no caller keys
CORS_EXPOSE_HEADERS = ("X-ContextGC-Telemetry", "Retry-After")

# Static files through whitenoise; hashed and compressed names outside debug.
STATIC_URL = "/static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = Path(env_str("DJANGO_STATIC_ROOT", str(BASE_DIR / "var" / "static")))
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"
        if DEBUG
        else "whitenoise.storage.CompressedManifestStaticFilesStorage"
    },
}

# Security headers. The policy allows nothing inline: htmx comes from django-htmx's
# static file and every page script is a file under static/.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": [SELF],
        "script-src": [SELF],
        "style-src": [SELF],
        "img-src": [SELF, "data:"],
        "font-src": [SELF],
        "connect-src": [SELF],
        "form-action": [SELF],
        "frame-ancestors": [NONE],
        "base-uri": [NONE],
        "object-src": [NONE],
    }
}
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"
if not DEBUG:
    SESSION_COOKIE_SECURE = CSRF_COOKIE_SECURE = env_bool("DJANGO_SECURE_COOKIES", True)
    SECURE_HSTS_SECONDS = env_int("DJANGO_HSTS_SECONDS", 31_536_000)
    SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("DJANGO_HSTS_INCLUDE_SUBDOMAINS", False)
    SECURE_SSL_REDIRECT = env_bool("DJANGO_SSL_REDIRECT", False)
    if env_bool("DJANGO_BEHIND_TLS_PROXY", False):
        SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")

LANGUAGE_CODE = "en"
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env_str("DJANGO_LOG_LEVEL", "WARNING")},
}

# Corpus imports from the browser (labelling): a file up to CONTEXTGC_MAX_IMPORT_BYTES,
# on the two import forms only, is streamed to disk under CONTEXTGC_UPLOAD_DIR and
# imported there by a background worker (so the worker must see the same directory).
# Other form fields stay under DATA_UPLOAD_MAX_MEMORY_SIZE; a file over
# FILE_UPLOAD_MAX_MEMORY_SIZE is written to FILE_UPLOAD_TEMP_DIR while it arrives,
# never held in memory whole.
CONTEXTGC_MAX_IMPORT_BYTES = env_int("CONTEXTGC_MAX_IMPORT_BYTES", 64 * 1024 * 1024, minimum=1)
CONTEXTGC_UPLOAD_DIR = Path(env_str("CONTEXTGC_UPLOAD_DIR", str(BASE_DIR / "var" / "uploads")))
CONTEXTGC_IMPORT_PATHS = ("/labelling/corpora/import", "/labelling/reports/import")
# What queues an uploaded corpus for import: the measurement app's jobs, which the
# labelling app does not import (measurement reads labelling, never the other way round).
CONTEXTGC_IMPORT_QUEUE = "labelling.measurement.uploads.start_upload_import"
FILE_UPLOAD_TEMP_DIR = CONTEXTGC_UPLOAD_DIR / "partial"
try:
    FILE_UPLOAD_TEMP_DIR.mkdir(parents=True, exist_ok=True)
except OSError as exc:
    raise ImproperlyConfigured(
        f"CONTEXTGC_UPLOAD_DIR={str(CONTEXTGC_UPLOAD_DIR)!r} cannot be written ({exc}); "
        "point it at a writable directory every job worker can read"
    ) from None
