"""GradStep's engine: the lesson process, the stepping session and everything they exchange.

:mod:`app.lesson` runs inside the lesson process; the other modules run in the app, except
the few both sides import (:mod:`app.messages`, :mod:`app.pause_delta`, :mod:`app.code_lines`,
:mod:`app.gc_pause`). Nothing in this package imports Qt; the widgets observe it.
"""
