"""Labelling: corpora, extractions, worksheets, verdicts, label files, precision.

Measurement (reports, jobs, records scoring) is its own app in ``labelling.measurement``;
``labelling.bench`` is the Django-free core both apps and the benchmark import.
"""
