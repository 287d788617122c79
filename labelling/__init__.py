"""Labelling: corpora, extractions, worksheets, verdicts, label files, precision."""
