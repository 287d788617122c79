"""A WSGI app that answers every request with ``{}`` and does nothing else.

``load_api.py`` serves it with the site's gunicorn settings to show what gunicorn
itself costs a request on the machine, beside the same load on the site's
``GET /api/health/live``: the difference is Django's, the rest is gunicorn's.
"""


def application(environ, start_response):
    environ["wsgi.input"].read()
    start_response("200 OK", [("Content-Type", "application/json"), ("Content-Length", "2")])
    return [b"{}"]
