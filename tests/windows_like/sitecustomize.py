"""Makes an interpreter on Linux look to GradStep as Windows does: what is POSIX-only is withheld.

Put this folder first on ``PYTHONPATH`` (the lesson processes inherit it) and Python imports
this module at start-up (``site``): the modules ``fcntl``, ``termios``, ``resource``, ``pty``
and ``tty`` cannot be imported; ``os.fork``, ``os.setsid``, ``os.killpg``, ``os.getpgid``,
``os.mkfifo``, ``os.pidfd_open``, ``signal.SIGSTOP``, ``signal.SIGCONT``, ``signal.SIGRTMIN``
and ``signal.pidfd_send_signal`` are gone; :class:`subprocess.Popen` refuses ``pass_fds`` and
``preexec_fn`` as it does on Windows. The libraries keep working: psutil is imported first,
with the signals its Linux backend sends (on Windows it has a backend of its own).
"""

import os
import signal
import subprocess
import sys
import types

import psutil

psutil.signal = types.SimpleNamespace(**vars(signal))  # psutil's suspend and resume send SIGSTOP and SIGCONT here

WITHHELD_MODULES = ("fcntl", "termios", "resource", "pty", "tty")
WITHHELD_CALLS = {os: ("fork", "setsid", "killpg", "getpgid", "mkfifo", "pidfd_open"),
                  signal: ("SIGSTOP", "SIGCONT", "SIGRTMIN", "pidfd_send_signal")}

for _name in WITHHELD_MODULES:
    sys.modules[_name] = None
for _module, _names in WITHHELD_CALLS.items():
    for _name in _names:
        if hasattr(_module, _name):
            delattr(_module, _name)

_popen_init = subprocess.Popen.__init__


def _windows_popen_init(self, *args, pass_fds=(), preexec_fn=None, **kwargs):
    if preexec_fn is not None:
        raise ValueError("preexec_fn is not supported on Windows platforms")
    if pass_fds:
        raise ValueError("pass_fds not supported on Windows.")
    _popen_init(self, *args, **kwargs)


subprocess.Popen.__init__ = _windows_popen_init
