"""The lesson process layer on Windows: an inherited pipe handle for the channel, a Job Object for Stop.

Each lesson process is put in a Job Object of its own with
``JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE``, as debugpy's launcher does with its debuggee
(``src/debugpy/launcher/debuggee.py``): what the lesson starts joins the job, however it
detaches, and ``TerminateJobObject`` ends them all at once; should the app itself die, the
system closes the job's handle and ends them too. The lesson gets no console window of its
own, and its own process group, so that Ctrl+C in the app's console reaches only the app.

Only imported on Windows (:mod:`app.process_os`).
"""

from __future__ import annotations

import ctypes
import msvcrt
import os
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from ctypes import wintypes
from typing import Any

from app.process_portable import PortableOS, Process, ProcessTree

_JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE = 0x2000
_JOB_OBJECT_EXTENDED_LIMIT_INFORMATION = 9


class _BasicLimits(ctypes.Structure):
    _fields_ = [("PerProcessUserTimeLimit", wintypes.LARGE_INTEGER), ("PerJobUserTimeLimit", wintypes.LARGE_INTEGER),
                ("LimitFlags", wintypes.DWORD), ("MinimumWorkingSetSize", ctypes.c_size_t),
                ("MaximumWorkingSetSize", ctypes.c_size_t), ("ActiveProcessLimit", wintypes.DWORD),
                ("Affinity", ctypes.c_size_t), ("PriorityClass", wintypes.DWORD), ("SchedulingClass", wintypes.DWORD)]


class _IoCounters(ctypes.Structure):
    _fields_ = [(name, ctypes.c_ulonglong) for name in (
        "ReadOperationCount", "WriteOperationCount", "OtherOperationCount",
        "ReadTransferCount", "WriteTransferCount", "OtherTransferCount")]


class _ExtendedLimits(ctypes.Structure):
    _fields_ = [("BasicLimitInformation", _BasicLimits), ("IoInfo", _IoCounters),
                ("ProcessMemoryLimit", ctypes.c_size_t), ("JobMemoryLimit", ctypes.c_size_t),
                ("PeakProcessMemoryUsed", ctypes.c_size_t), ("PeakJobMemoryUsed", ctypes.c_size_t)]


_kernel32 = ctypes.WinDLL("kernel32", use_last_error=True)
_kernel32.CreateJobObjectW.restype = wintypes.HANDLE
_kernel32.CreateJobObjectW.argtypes = (ctypes.c_void_p, wintypes.LPCWSTR)
_kernel32.SetInformationJobObject.argtypes = (wintypes.HANDLE, ctypes.c_int, ctypes.c_void_p, wintypes.DWORD)
_kernel32.AssignProcessToJobObject.argtypes = (wintypes.HANDLE, wintypes.HANDLE)
_kernel32.TerminateJobObject.argtypes = (wintypes.HANDLE, wintypes.UINT)
_kernel32.CloseHandle.argtypes = (wintypes.HANDLE,)


def _job_for(process: Process) -> int | None:
    """A new Job Object holding ``process`` that ends all it holds when closed; None if the system refuses."""
    handle = getattr(process, "_handle", None)
    job = _kernel32.CreateJobObjectW(None, None)
    if not job or handle is None:
        return None
    limits = _ExtendedLimits()
    limits.BasicLimitInformation.LimitFlags = _JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE
    if not (_kernel32.SetInformationJobObject(job, _JOB_OBJECT_EXTENDED_LIMIT_INFORMATION, ctypes.byref(limits),
                                              ctypes.sizeof(limits))
            and _kernel32.AssignProcessToJobObject(job, int(handle))):
        _kernel32.CloseHandle(job)
        return None
    return job


class WindowsTree(ProcessTree):
    """A lesson process in a Job Object of its own: ending the job ends all it started."""

    def __init__(self, process: Process) -> None:
        super().__init__(process)
        self._job = _job_for(process)

    def end(self) -> None:
        super().end()
        if self._job is not None:
            _kernel32.CloseHandle(self._job)
            self._job = None

    def end_rest(self) -> None:
        if self._job is not None:
            _kernel32.TerminateJobObject(self._job, 1)
        else:
            super().end_rest()


class WindowsOS(PortableOS):
    """Windows."""

    name = "windows"

    @contextmanager
    def hand_over(self, channel: int) -> Iterator[tuple[str, dict[str, Any]]]:
        """The channel's handle, inherited by the lesson process alone (``handle_list``), named by its value."""
        handle = msvcrt.get_osfhandle(channel)
        os.set_handle_inheritable(handle, True)
        try:
            startup = subprocess.STARTUPINFO(lpAttributeList={"handle_list": [handle]})
            yield str(handle), {"startupinfo": startup,
                                "creationflags": subprocess.CREATE_NO_WINDOW | subprocess.CREATE_NEW_PROCESS_GROUP}
        finally:
            os.set_handle_inheritable(handle, False)

    def tree(self, process: Process) -> ProcessTree:
        return WindowsTree(process)

    def open_channel(self, name: str) -> int:
        return msvcrt.open_osfhandle(int(name), os.O_WRONLY)
