"""The lesson process's side of GradStep: everything here runs inside ``python -m app.lesson.runner``.

The runner, the tracer, the snapshot and summary builders, the autograd graph tracker and
the actions the app may ask for live here, next to the lesson's own objects. They import
nothing of the app's side; what both sides share is :mod:`app.messages` (the vocabulary on
the wire), :mod:`app.pause_delta`, :mod:`app.code_lines` and :mod:`app.gc_pause`.
"""
