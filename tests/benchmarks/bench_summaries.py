"""Looking at a value never costs more than a bound: pause time and lesson memory per awkward value.

Run: ``python tests/benchmarks/bench_summaries.py``. One lesson builds each value under a
hidden name, the run continues to the line that shows it, and one step is timed: the
step's round trip is the value's first summary (plus the message there and back). The
lesson process's peak memory is reset before the step (``/proc/PID/clear_refs``) and read
after it (``VmHWM``), so the growth is what the summary cost, not what building the value did.
"""

from __future__ import annotations

import statistics
import sys
import time

from _common import Driver, m, write

#: name → (expression building the value, pause target in seconds)
CASES = {
    "sparse COO 20000x20000, 2 non-zeros": ("sparse(None)", 0.2),
    "sparse CSR": ("sparse(lambda s: s.to_sparse_csr())", 0.2),
    "sparse CSC": ("sparse(lambda s: s.to_sparse_csc())", 0.2),
    "sparse BSR 2x2 blocks": ("sparse(lambda s: s.to_sparse_bsr((2, 2)))", 0.2),
    "torch.ones(1).expand(200_000_000)": ("torch.ones(1).expand(200_000_000)", 0.2),
    "strided view randn(4000, 3000)[:, ::3]": ("torch.randn(4000, 3000)[:, ::3]", 0.2),
    "nested tensor, strided layout": ("torch.nested.nested_tensor([torch.ones(2), torch.ones(3)])", 0.2),
    "nested tensor, jagged layout": (
        "torch.nested.nested_tensor([torch.ones(2), torch.ones(3)], layout=torch.jagged)", 0.2),
    "wrapper subclass (_make_wrapper_subclass)": ("Wrapper(torch.ones(1000, 1000))", 0.2),
    "meta tensor 1e9 elements": ("torch.empty(1_000_000_000, device='meta')", 0.2),
    "fake tensor": ("fake()", 0.2),
    "list of 10,000 tensors": ("[torch.randn(4) for _ in range(10_000)]", 0.2),
    "module with 1,000 parameters": ("torch.nn.Sequential(*[torch.nn.Linear(2, 2) for _ in range(500)])", 0.2),
    "dense tensor, 50M elements": ("torch.randn(50_000_000)", 1.0),
    "__repr__ that never returns": ("Hangs()", 1.0),
    "module: parameters()/children()/modules() loop": ("Loops()", 0.2),
    "module: named_parameters() yields forever": ("Endless(*[torch.nn.Linear(1, 1) for _ in range(300)])", 0.2),
    "subclass of list: __iter__ loops, __len__ lies": ("Forever(range(100))", 0.2),
    "dict subclass: items()/__iter__ loop, __len__ lies": ("Lying(a=1, b=2)", 0.2),
    "MagicMock(spec=torch.Tensor) and three more mocks": (
        "[mock.MagicMock(spec=torch.Tensor), mock.MagicMock(spec=torch.nn.Module), mock.Mock(), "
        "mock.MagicMock(spec=list)]", 0.2),
    "__getattribute__ loops, __bool__/__eq__/__hash__ raise": ("[Attributes(), Raises()]", 0.2),
    "__repr__ that swallows the timeout and loops on": ("Stubborn()", 1.0),
    "__repr__, __str__ and __format__ that sleep 30 s": ("Sleeps()", 1.0),
}
MEMORY_MB = 64
UNCHANGED_STEPS = 300
UNCHANGED_MS = 5.0

PRELUDE = """
import itertools
import time
from unittest import mock

import torch
from torch._subclasses.fake_tensor import FakeTensorMode


class Wrapper(torch.Tensor):
    @staticmethod
    def __new__(cls, elem):
        return torch.Tensor._make_wrapper_subclass(cls, elem.shape, dtype=elem.dtype)

    def __init__(self, elem):
        self.elem = elem

    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
        return func(*[a.elem if isinstance(a, Wrapper) else a for a in args], **(kwargs or {}))


class Hangs:
    def __repr__(self):
        while True:
            pass


class Sleeps:
    def __repr__(self):
        time.sleep(30)
        return "slept"

    __str__ = __repr__

    def __format__(self, spec):
        time.sleep(30)
        return "slept"


class Stubborn:
    def __repr__(self):
        while True:
            try:
                while True:
                    pass
            except BaseException:
                pass


class Loops(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(2, 2)

    def named_parameters(self, *args, **kwargs):
        while True:
            pass

    parameters = children = modules = named_modules = named_parameters


class Endless(torch.nn.Sequential):
    def named_parameters(self, *args, **kwargs):
        for i in itertools.count():
            yield f"p{i}", torch.zeros(1)


class Forever(list):
    def __iter__(self):
        while True:
            pass

    def __len__(self):
        return 10**18


class Lying(dict):
    def items(self):
        while True:
            pass

    __iter__ = items

    def __len__(self):
        return -1


class Attributes:
    def __getattribute__(self, name):
        while True:
            pass


class Raises:
    def __bool__(self):
        raise RuntimeError("bool")

    __eq__ = __hash__ = __len__ = __bool__


def sparse(convert):
    s = torch.sparse_coo_tensor([[0, 19999], [0, 19999]], [1.0, 2.0], (20000, 20000))
    return s if convert is None else convert(s.coalesce())


def fake():
    with FakeTensorMode():
        return torch.ones(1000, 1000)


"""


def lesson() -> tuple[str, dict[str, int]]:
    """The lesson source's path and, per case, the line that puts the value in view."""
    lines = PRELUDE.lstrip("\n").splitlines()  # as write() will store it
    show = {}
    for name, (expression, _) in CASES.items():
        lines.append(f"__made__ = {expression}")
        show[name] = len(lines) + 1
        lines += ["value = __made__", "after = 0"]
        if name.startswith("list"):  # pauses with the list unchanged in scope
            lines += [f"for __i__ in range({UNCHANGED_STEPS}):", "    after = __i__"]
        lines += ["del value", "__made__ = None"]
        if name.startswith("list"):  # the same pauses with nothing in scope: the machine's own jitter
            lines.append(f"for __j__ in range({UNCHANGED_STEPS}):")
            show["control"] = len(lines) + 1
            lines.append("    after = __j__")
    lines.append("print('done')")
    return write("awkward_values.py", "\n".join(lines) + "\n"), show


def memory_kb(pid: int, field: str) -> int:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise KeyError(field)


def reset_peak(pid: int) -> None:
    with open(f"/proc/{pid}/clear_refs", "w") as refs:
        refs.write("5")


def timed_step(driver: Driver) -> tuple[float, dict]:
    start = time.perf_counter()
    driver.session.step_into()
    snapshot = driver.next(m.Paused).snapshot
    return time.perf_counter() - start, snapshot


def unchanged_pauses(driver: Driver, label: str) -> float:
    """Time a run of pauses in a loop; prints them and returns the p99 in ms."""
    times = [timed_step(driver)[0] for _ in range(UNCHANGED_STEPS)]
    p99 = statistics.quantiles(times, n=100)[98] * 1000
    print(f"{label:45s} p99 {p99:6.2f} ms, median {statistics.median(times) * 1000:.2f} ms, "
          f"max {max(times) * 1000:.2f} ms (target p99 <= {UNCHANGED_MS:g} ms)")
    return p99


def main() -> int:
    path, show = lesson()
    driver = Driver()
    ok = True
    try:
        driver.session.start(path)
        driver.next(m.Paused)
        pid = driver.session._process.pid
        print(f"{'case':45s} {'first pause':>12s} {'target':>7s} {'peak growth':>12s}")
        for name, (_, target) in CASES.items():
            driver.session.run_to(show[name])
            driver.next(m.Paused)
            rss = memory_kb(pid, "VmRSS")
            reset_peak(pid)
            seconds, snapshot = timed_step(driver)
            grown = (memory_kb(pid, "VmHWM") - rss) / 1024
            value = snapshot["vars"]["value"]
            fine = seconds <= target and grown <= MEMORY_MB
            ok &= fine
            print(f"{name:45s} {seconds * 1000:9.1f} ms {target * 1000:5.0f} ms {grown:9.1f} MB  {describe(value)}"
                  + ("" if fine else "  <-- over"))
            if name.startswith("list"):
                driver.session.step_into()  # onto the loop
                driver.next(m.Paused)
                p99 = unchanged_pauses(driver, "  ...unchanged, per pause")
                ok &= p99 <= UNCHANGED_MS
                driver.session.run_to(show["control"])
                driver.next(m.Paused)
                unchanged_pauses(driver, "  (control: same loop, nothing in scope)")
            if name.startswith("__repr__"):
                seconds, snapshot = timed_step(driver)
                ok &= seconds <= 0.2
                print(f"{'  ...next pause, same object in view':45s} {seconds * 1000:9.1f} ms (target <= 200 ms, "
                      f"not retried)")
        driver.session.stop()
    finally:
        driver.close()
    print(f"targets: first pause as listed, lesson peak memory growth <= {MEMORY_MB} MB a pause")
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


def describe(summary: dict) -> str:
    """What the pause showed, in a few words."""
    if summary.get("why_no_values"):
        return summary["why_no_values"][:60]
    if "parameter_count" in summary:
        return f"{summary['parameter_count']} parameters, cut: {summary['parameters_cut']}"
    if "length" in summary:
        return f"length {summary['length']}, {len(summary['items'])} items"
    if "repr" in summary:
        return summary["repr"][:60]
    return f"sampled {summary.get('sampled')}, stats from a sample {summary.get('stats_sampled')}"


if __name__ == "__main__":
    sys.exit(main())
