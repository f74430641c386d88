"""Which OS part of the lesson process layer this process uses: POSIX, Windows, or the portable one.

The rest of the code calls :func:`current` and the interface of
:class:`~app.process_portable.PortableOS`; only the chosen part's module is imported, so
nothing POSIX-only is imported where it does not exist. ``GRADSTEP_PORTABLE=1`` in the
environment forces the portable part (a lesson process inherits the choice with the
environment, so both ends of the channel agree).
"""

from __future__ import annotations

import os
from functools import cache

from app.process_portable import PortableOS

#: The environment variable that forces the portable part when it is "1".
PORTABLE_VARIABLE = "GRADSTEP_PORTABLE"


def portable_forced() -> bool:
    """Whether the environment forces the portable part."""
    return os.environ.get(PORTABLE_VARIABLE) == "1"


@cache
def current() -> PortableOS:
    """The OS part of this process (chosen once)."""
    if portable_forced():
        return PortableOS()
    if os.name == "nt":
        from app.process_windows import WindowsOS

        return WindowsOS()
    if os.name == "posix":
        try:
            from app.process_posix import PosixOS
        except ImportError:  # a POSIX without fcntl, termios or resource: what every OS has will do
            return PortableOS()
        return PosixOS()
    return PortableOS()
