"""The measurement core: our compiler beside the peer, the gold scorer, the statistics.

Plain Python, no Django: the benchmark's command line (``tests/bench/measure.py``)
and the schema fit (``tests/bench/fit_schemas.py``) run it without the site's
settings, and the site's measurement app (``labelling.measurement.measure``,
``labelling.bench.records``) imports it from the installed package.

- ``gold``: the one gold scorer (tau-bench ``info.task.actions`` against a register);
- ``stats``: nearest-rank percentile and the Wilson interval;
- ``corpus``: the transcripts read and counted, their clusters, what a compile keeps verbatim;
- ``compare``: the two libraries, warm-up, timing and every figure;
- ``render``: the benchmark's text table and its table helpers;
- ``capture`` (its ``capture_plan``, ``capture_bill``, ``declarations``) asks a model for
  its declarations turn by turn, ``capture_files`` reads any capture back, ``shadow``
  replays one against its corpus (``shadow_render`` prints it, ``captures_summary``
  lists a folder's).
"""
