"""Measurement: corpus reports, records scoring, background jobs, charts, report pages.

A Django app of its own inside the labelling folder (app label ``measurement``). It
reads what the labelling app stores (corpora, transcripts, labels) and never the
other way round; the Django-free core it shares with the benchmark is
``labelling.bench``.
"""
