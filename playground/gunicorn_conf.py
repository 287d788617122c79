"""gunicorn's settings for the site's web process.

    gunicorn playground.wsgi -c python:playground.gunicorn_conf --bind 0.0.0.0:8000

``tests/bench/load_api.py`` runs gunicorn with these, says whether the Procfile does, and
reports how the requests split across the worker processes.

Threaded workers keep a client's connection open between requests (HTTP keep-alive);
gunicorn's sync workers close it after every answer, so each request paid for a new
TCP connection and its teardown on both sides. One thread per worker: a compile is CPU
work under the GIL, so a second thread in the same process would only wait;
``WEB_CONCURRENCY`` worker processes (default 2) share the load. The rate limit counts
in a cache all workers share (memcached when ``CONTEXTGC_MEMCACHED`` is set, else the
database), so it holds across them.

A kept-open connection stays with the worker that accepted it, and a gthread worker
accepts up to ``worker_connections`` (gunicorn's default: 1,000) whatever its threads can
serve: with four keep-alive clients one worker could hold all four while the other sat
idle. ``worker_connections = threads + 1`` lets a worker hold the connection its thread
serves and one more kept open (gunicorn keeps ``worker_connections - threads`` idle);
the next client is accepted by a worker with room. Past that, gunicorn answers with
``Connection: close`` and the client reconnects wherever there is room, so no client
waits on a full worker.
"""

import os

worker_class = "gthread"
threads = 1
worker_connections = threads + 1
keepalive = 5  # seconds an idle client connection stays open
workers = int(os.environ.get("WEB_CONCURRENCY") or 2)
# A threaded worker's main loop reports in while a request runs, so this stops a hung
# worker, not one long request; a compile is bounded by the 256 KiB body cap.
timeout = 120
