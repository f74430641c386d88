"""GradStep's engine: the lesson process, the stepping session and everything they exchange.

Nothing in this package imports Qt; the widgets observe it.
"""
