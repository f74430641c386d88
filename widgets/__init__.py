"""Qt widgets that render the engine's state; they observe ``app/`` and never own the truth."""
