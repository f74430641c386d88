"""The lesson process: runs one lesson as ``__main__`` under the tracer and answers the app.

Started by :class:`app.lesson_process.LessonProcess` as ``python -m app.lesson.runner``.
Messages arrive on stdin and leave on a pipe of their own; the lesson's fd 1 and fd 2 are
plain pipes to the app, and its ``sys.stdout`` / ``sys.stderr`` real text files on them
that write through at once, so ``print``, ``sys.__stdout__`` and C-level writes arrive in
the order they were written.
"""

from __future__ import annotations

import atexit
import builtins
import faulthandler
import gc
import io
import linecache
import os
import queue
import signal
import sys
import threading
import traceback
import types
import warnings
from collections.abc import Callable
from types import FrameType
from typing import Any

from app import messages as m
from app.code_lines import executable_lines
from app.i18n import N_
from app.lesson import hooks as lesson_hooks
from app.lesson.autograd_actions import AutogradActions
from app.lesson.autograd_graph import GraphBasis, GraphTracker
from app.lesson.bounded_repr import timed
from app.lesson.engine_reads import engine_reads, learner_code
from app.lesson.frame_lines import line_of
from app.lesson.lesson_io import Channel, NoInput, lesson_stream, no_input, open_channel, wait_until_text_is_read
from app.lesson.op_recorder import SEQUENCES, OpRecorder
from app.lesson.origins import OriginBook, forward_log, sequence_peek
from app.lesson.predictions import check, judge, shown
from app.lesson.snapshot import SnapshotBuilder, bounded_message, frame_entry, frame_locals, raised
from app.lesson.tracer import STEPPING, Tracer, canonical, set_local, untrace_imports
from app.pause_delta import PauseCompressor
from app.process_os import current as os_part
from app.process_tree import end_descendants
from app.value_fingerprint import value_fingerprint

#: Watch states before an expression has a value: not evaluated yet, and failed when the run continued.
_UNSEEN, _UNDEFINED = object(), object()

#: The signal number the command reader hands to ``_thread.interrupt_main``: a real-time
#: signal no lesson plausibly touches, so a lesson's own SIGUSR1 handling stays its own (SIGUSR2 where there
#: are none, SIGBREAK on Windows, whose process group is its own: Ctrl+Break never reaches it).
_INTERRUPT = (signal.SIGRTMIN + 3 if hasattr(signal, "SIGRTMIN")
              else getattr(signal, "SIGUSR2", getattr(signal, "SIGBREAK", signal.SIGINT)))
#: How long a pause may take to land before the app hears that the lesson is inside a long call.
PAUSE_LANDING_SECONDS = 0.3

#: Resume actions under which the operations of the running line are logged (not record mode: its
#: pauses pass unread, and the history it fills stays as small as without the log).
_LOGGED = STEPPING | {"step_expression"}


#: What the app is told while the lesson is inside one long call (formatted there, in the learner's language).
BUSY_AT_LINE = N_("The lesson is inside a call that cannot be interrupted (line {line}{code}); the pause lands "
                  "when it returns. Stop ends it now.")
BUSY_IN_CALL = N_("The lesson is inside a call that cannot be interrupted ({function}() of {file}, called from "
                  "line {line}{code}); the pause lands when it returns. Stop ends it now.")
BUSY_OUTSIDE = N_("The lesson is inside a call that cannot be interrupted ({function}() of {file}); the pause "
                  "lands when it returns. Stop ends it now.")
EXITING_THREADS = N_("The lesson's last line has run; the program waits for its threads to end ({threads}).")
EXITING_HANDLERS = N_("The lesson's last line has run; the program runs its exit handlers (atexit, weakref.finalize).")


def _exception_lines(exc: BaseException) -> str:
    """The last lines of a traceback, as Python prints them for ``exc`` (its ``__str__`` is the lesson's code)."""
    return "".join(traceback.format_exception_only(type(exc), exc))


class LessonRunner:
    """Runs one lesson; the main thread executes it, a reader thread takes the app's messages."""

    def __init__(self, channel: Channel) -> None:
        self.channel = channel
        self.inbox: queue.Queue[Any] = queue.Queue()
        self.paused = False
        self.step = 0
        self.snapshots = SnapshotBuilder()
        self.pause_wire = PauseCompressor()
        self.origins = OriginBook(sequence_peek())
        self.graph = GraphTracker(self.snapshots.summarizer.tensors, self.origins.origin)
        self._graph_basis = GraphBasis()
        self._frame_actions: dict[int, AutogradActions] = {}
        self.recording = 0
        self.watching: dict[str, Any] | None = None
        self.tracer: Tracer | None = None
        self.ops: OpRecorder | None = None
        self._after_line: m.Resume | None = None
        self.frames: list[tuple[FrameType, int]] = []
        self.selected = 0
        self.namespace: dict[str, Any] = {}
        self.streams: list[io.TextIOBase] = [sys.stdout, sys.stderr]
        self.forked = False
        self.request_handlers: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
            name.removeprefix("_cmd_"): getattr(self, name) for name in dir(self) if name.startswith("_cmd_")
        }
        threading.Thread(target=self._read_commands, name="gradstep-commands", daemon=True).start()
        if hasattr(os, "register_at_fork"):  # POSIX only
            os.register_at_fork(after_in_child=self._after_fork_in_child)

    def _after_fork_in_child(self) -> None:
        """The lesson called ``os.fork()``: the child runs on untraced, as in plain Python.

        It keeps fd 1 and fd 2 (its output reaches the app as the parent's does) but never
        touches the message pipes, and it ends as a script ends, without a pause.
        """
        self._stop_tracing()
        threading.settrace(None)
        self.forked = True
        self.tracer = None
        self.channel.detach()

    # ---- the reader thread --------------------------------------------------------------

    def _read_commands(self) -> None:
        import _thread

        while True:
            message = self.channel.receive()
            if message is None:  # the app went away: nothing left to serve, nothing the lesson started may stay
                end_descendants(os.getpid())
                os._exit(0)
            self.inbox.put(message)
            if isinstance(message, (m.Pause, m.SetBreakpoints)) and not self.paused and self.tracer:
                _thread.interrupt_main(_INTERRUPT)
                if isinstance(message, m.Pause):
                    timer = threading.Timer(PAUSE_LANDING_SECONDS, self._check_pause_landed, (self.step,))
                    timer.daemon = True  # the engine's, not one that Python's exit waits for
                    timer.start()

    def _check_pause_landed(self, step: int) -> None:
        """Tell the app when a pause has not landed in time: the lesson is inside one long call."""
        if self.paused or self.step != step or self.tracer is None:
            return
        frame = sys._current_frames().get(threading.main_thread().ident)
        if frame is None:
            return
        user = self.tracer.user_frames(frame)
        inner = user[0] if user else None
        code = linecache.getline(inner.f_code.co_filename, inner.f_lineno).strip() if inner is not None else ""
        fields = {"function": frame.f_code.co_name, "file": os.path.basename(frame.f_code.co_filename),
                  "line": inner.f_lineno if inner is not None else None, "code": f": {code}" if code else ""}
        if inner is None:
            template = BUSY_OUTSIDE
        else:
            template = BUSY_AT_LINE if frame is inner else BUSY_IN_CALL
        self.channel.send(m.Notice.of("busy", template, fields["line"], **fields))

    def _on_interrupt(self, signum: int, frame: FrameType | None) -> None:
        """Apply breakpoints and pause requests that arrived while the lesson runs."""
        if self.paused or self.tracer is None:
            return
        pause = False
        while True:
            try:
                message = self.inbox.get_nowait()
            except queue.Empty:
                break
            if isinstance(message, m.Pause):
                pause = True
                self.recording = 0
            elif isinstance(message, m.SetBreakpoints):
                self.tracer.set_breakpoints(message.file, message.lines)
            elif isinstance(message, m.Request):
                self.channel.send(m.Reply(message.id, message.kind, {"ok": False, "error": {
                    "type": "NotPaused", "message": "the lesson is running; pause it first"}}))
        self.tracer.arm(frame, "step_into" if pause else self.tracer.action)
        if pause and frame is not None and self.tracer.is_user_code(frame.f_code):
            # A loop on one line (``while True: pass``) jumps onto its own line and raises no
            # line event: let the interrupted frame pause at its next opcode instead.
            frame.f_trace_opcodes = True

    # ---- running ------------------------------------------------------------------------

    def wait_for_run(self) -> m.RunLesson | None:
        """Block until the app asks for a run."""
        while True:
            message = self.inbox.get()
            if isinstance(message, m.RunLesson):
                return message

    def run(self, command: m.RunLesson) -> m.Ended:
        """Compile and run the lesson; the return value says how it ended."""
        try:
            code = compile(command.source, command.path, "exec")
        except SyntaxError as exc:
            return m.Ended("error", {"type": type(exc).__name__, "message": exc.msg,
                                     "line": exc.lineno, "column": exc.offset,
                                     "text": (exc.text or "").rstrip("\n"), "traceback": []})
        if not any(line > 0 for line in executable_lines(code)):
            return m.Ended("empty")
        self._prepare_main(command)
        untrace_imports()
        self.tracer = Tracer({command.path}, self._pause, forward_log())
        self.ops = OpRecorder(self.tracer.is_user_code, self.snapshots.summarizer, self._op_pause)
        self.ops.values = command.op_values
        for file, lines in command.breakpoints.items():
            self.tracer.set_breakpoints(file, lines)
        lesson_hooks.chain_settrace(self.tracer)
        lesson_hooks.watch_other_threads(self.tracer.is_user_code, self.tracer.breakpoint_lines, self._notify)
        signal.signal(_INTERRUPT, self._on_interrupt)
        if command.watches and not command.stop_on_entry:  # every line is looked at, as in a continue with watches
            self.watching = {expression: _UNSEEN for expression in command.watches}
        self.tracer.start(command.stop_on_entry or self.watching is not None)
        if not self.inbox.empty():  # a pause or breakpoint that came before the tracer existed
            self._on_interrupt(_INTERRUPT, None)
        self.channel.send(m.Started(command.path))
        try:
            exec(code, self.namespace)
        except SystemExit as exc:
            self._stop_tracing()
            if self.forked:
                raise
            return self._exited(exc)
        except BaseException as exc:  # everything the lesson raises is the learner's to see
            self._stop_tracing()
            if self.forked:
                raise
            return self._post_mortem(exc)
        finally:
            self._stop_tracing()
            self._flush()
        with engine_reads():
            variables = self.snapshots.module_variables(self.namespace)
        return m.Ended("ok", checks=self._run_checks(command.checks) if command.checks else None,
                       variables=variables)

    def _run_checks(self, checks: list[str]) -> list[dict[str, Any]]:
        """Evaluate the lesson's exercise checks in its module, as the engine reads (the lesson sees nothing)."""
        lesson_hooks.unchain_settrace()  # a check that runs the lesson again traces it itself
        with engine_reads():
            return [check(expression, self.namespace) for expression in checks]

    def _stop_tracing(self) -> None:
        """No trace function and no breakpoint monitoring any more: the run is over (or forked)."""
        if self.tracer is not None:
            self.tracer.stop()
        else:
            sys.settrace(None)

    def shut_down(self) -> None:
        """After the last line, what Python does before it exits: wait for the lesson's threads, then run
        its exit handlers (``atexit``, ``weakref.finalize``), telling the app before each so that it can
        say when one never ends (:data:`app.session.EXIT_STALLED`)."""
        waiting = [thread.name for thread in threading.enumerate()
                   if not thread.daemon and thread is not threading.current_thread()]
        if waiting:
            self._notify("exiting", EXITING_THREADS, None, phase="threads", threads=", ".join(waiting))
            threading._shutdown()  # noqa: SLF001 - the very call Python's exit makes
        self._notify("exiting", EXITING_HANDLERS, None, phase="handlers")
        atexit._run_exitfuncs()  # noqa: SLF001 - prints a failing handler's traceback, as Python does
        self._flush()

    def _notify(self, kind: str, template: str, at_line: int | None = None, /, **fields: Any) -> None:
        if not self.forked:  # a forked child has no app to tell (and the channel's lock may be held)
            self.channel.send(m.Notice.of(kind, template, at_line, **fields))

    def _prepare_main(self, command: m.RunLesson) -> None:
        module = types.ModuleType("__main__")
        module.__file__ = command.path
        module.__builtins__ = builtins
        sys.modules["__main__"] = module
        self.namespace = module.__dict__
        sys.argv = [command.path]
        sys.path[0] = os.path.dirname(os.path.abspath(command.path))
        lines = command.source.splitlines(keepends=True)
        # Source as it was run, so tracebacks and inspect.getsource match even unsaved edits.
        linecache.cache[command.path] = (len(command.source), None, lines, command.path)
        builtins.input = no_input
        sys.stdin = NoInput()
        lesson_hooks.hide_engine(sys.path[0])
        lesson_hooks.refuse_shadowed(sys.path[0])
        lesson_hooks.hide_engine_frames(self.namespace)

    def _flush(self) -> None:
        for stream in self.streams:
            try:
                stream.flush()
            except (OSError, ValueError):  # closed by the lesson, or its reader is gone
                pass

    def _exited(self, exc: SystemExit) -> m.Ended:
        code = exc.code
        if code is None:
            code = 0
        elif not isinstance(code, int):
            print(code, file=sys.stderr)
            code = 1
        self._flush()
        return m.Ended("exited", exit_code=code)

    def _post_mortem(self, exc: BaseException) -> m.Ended:
        tb = exc.__traceback__
        user_tb = []
        while tb is not None:
            if self.tracer.is_user_code(tb.tb_frame.f_code):
                user_tb.append((tb.tb_frame, tb.tb_lineno))
            tb = tb.tb_next
        summary = traceback.extract_tb(exc.__traceback__)
        message = bounded_message(timed(str, exc))  # the lesson's __str__: bounded in time as a repr is
        error = {
            "type": type(exc).__name__,
            "message": message,
            "line": user_tb[-1][1] if user_tb else None,
            "traceback": [{"file": s.filename, "line": s.lineno, "function": s.name, "text": s.line}
                          for s in summary if self.tracer.is_user_code_file(s.filename)],
        }
        sys.stderr.write(timed(_exception_lines, exc))
        self._flush()
        if user_tb:
            self.frames = list(reversed(user_tb))
            # The grad mode at the raising line: a ``with torch.no_grad():`` around it has exited by now.
            error["grad_mode"] = lesson_hooks.grad_mode_at_raise(exc)
            self._serve_pause("exception", None, post_mortem=error)
        return m.Ended("error", error)

    # ---- pausing ------------------------------------------------------------------------

    def _pause(self, frame: FrameType, event: str, arg: Any) -> tuple[str, str | None, int | None]:
        pending, self._after_line = self._after_line, None
        if pending is not None and not self.tracer.hit_breakpoint and not self._at_target(frame, pending):
            self.ops.detach()
            return self._resumed(frame, pending)  # the line an op-level pause continued from is done
        changed: list[str] = []
        if self.watching is not None and not self.tracer.hit_breakpoint:
            changed = self._watch_changes(frame)
            if not changed:
                return "step_into", None, None  # keep watching without stopping
        self.watching = None
        self.frames = [(f, line_of(f)) for f in self.tracer.user_frames(frame)]
        for user_frame, _ in self.frames:
            user_frame.f_trace_opcodes = False  # set by a pause request; one pause is all it was for
        resume = self._serve_pause(event, arg, watch_changed=changed)
        return self._resumed(frame, resume)

    def _resumed(self, frame: FrameType, resume: m.Resume) -> tuple[str, str | None, int | None]:
        """Apply ``resume`` at a line pause of ``frame``: the tracer's action, and the op log on or off."""
        if resume.action in _LOGGED and self.recording <= 0:  # a record pass resumes with step_into
            self.ops.attach()
        else:
            self.ops.detach()
        if resume.action == "step_expression":
            self.ops.pause_in(frame)
            return "step_over", None, None
        if resume.action == "record":
            self.recording = resume.limit if resume.limit is not None else 10**9
            return "step_into", None, None
        if resume.action == "continue" and resume.watches:
            self.watching = {expression: _UNSEEN for expression in resume.watches}
            self._watch_changes(frame)
            return "step_into", None, None
        return resume.action, resume.file, resume.line

    @staticmethod
    def _at_target(frame: FrameType, resume: m.Resume) -> bool:
        return (resume.action == "run_to" and resume.file is not None
                and (canonical(resume.file), resume.line) == (canonical(frame.f_code.co_filename), frame.f_lineno))

    def _op_pause(self, frame: FrameType, entry: dict[str, Any]) -> None:
        """Pause right after an operation of the line stepped by expression, inside the op recorder.

        No trace function runs meanwhile (this is not a trace callback, so the engine's own
        calls would otherwise be traced). Torch keeps every mode off the stack while the
        recorder's runs, so requests such as ``evaluate`` are not logged, and the lesson's
        tensor subclasses are not consulted while the pause reads their tensors.
        """
        with self.tracer.untraced():
            self.frames = [(f, line_of(f)) for f in self.tracer.user_frames(frame)]
            with sys.modules["torch"]._C.DisableTorchFunctionSubclass():
                resume = self._serve_pause("op", None, op=entry)
        if resume.action == "step_expression":
            return
        self.ops.pause_in(None)
        if resume.action in ("continue", "run_to"):
            self.ops.active = False  # the mode is stashed by torch right now: it leaves the stack at the next line
            self._after_line = resume
            return
        action, file, line = self._resumed(frame, resume)
        set_local(frame, self.tracer.resume(frame, action, file, line))

    def _watch_changes(self, frame: FrameType) -> list[str]:
        """The watched expressions whose value differs from the last one seen.

        An expression that could not be evaluated yet is not changed when it first gets a
        value (it was not there to change); one that fails later (a name out of scope in a
        called function) is not compared at that line.
        """
        with engine_reads():
            changed = []
            for expression, before in self.watching.items():
                try:
                    value = eval(expression, frame.f_globals, frame_locals(frame))
                except Exception:
                    if before is _UNSEEN:
                        self.watching[expression] = _UNDEFINED
                    continue
                now = value_fingerprint(self.snapshots.summarizer.summarize(value))
                if before is not _UNSEEN and before is not _UNDEFINED and now != before:
                    changed.append(expression)
                self.watching[expression] = now
            return changed

    def _keep_recording(self) -> bool:
        """In record mode, whether this pause is reported and passed at once (no Pause arrived)."""
        if self.recording <= 0:
            return False
        self.recording -= 1
        if self.inbox.empty():  # the common case at every recorded step: no lock taken twice, no exception
            return True
        try:
            message = self.inbox.get_nowait()
        except queue.Empty:
            return True
        self.inbox.put(message)  # the command loop answers it; any command ends the recording
        self.recording = 0
        return False

    def _serve_pause(self, event: str, arg: Any, post_mortem: dict[str, Any] | None = None,
                     watch_changed: list[str] | None = None, op: dict[str, Any] | None = None) -> m.Resume:
        self.paused = True
        self.origins.paused([frame for frame, _ in self.frames], event, self.tracer.lines, self.tracer.forwards)
        try:
            with engine_reads():
                self._flush()
                if op is None and self.ops is not None:
                    self.ops.detach()
                    self.ops.pause_in(None)  # a line stepped by expression is over, with or without operations
                self.step += 1
                self.selected = 0
                cut = self.tracer.more_frames(len(self.frames), self.frames[-1][0])
                snapshot = self.snapshots.build(self.frames, event, self.step, 0, arg, cut)
                if self.tracer.returned is not None and op is None:  # a step out landed: what the function gave back
                    function, value = self.tracer.returned
                    snapshot["returned"] = {"function": function, "value": self.snapshots.summarizer.summarize(value)}
                self.tracer.returned = None
                unwinding, self.tracer.unwinding = self.tracer.unwinding, None
                if snapshot.get("return_kind") == "raise" and unwinding and unwinding[0] is self.frames[0][0]:
                    snapshot["exception"] = raised(unwinding[1])  # the frame leaves with this exception
                del unwinding
                frame = self.frames[0][0]
                extra = self._add_ops(snapshot, op)
                same = extra is None and self._graph_basis.unchanged(frame, snapshot["vars"])
                snapshot["graph"] = self._graph_update(frame, extra, same_tensors=same,
                                                       summaries=snapshot["vars"] if extra is None else None)
                self._graph_basis.seen(frame, snapshot["vars"])
                del frame
                for entry in snapshot.get("ops", ()):
                    if SEQUENCES in entry:  # numbered now the graph has seen them: ids as the graph gives them
                        entry["nodes"] = self.graph.ids_of(entry.pop(SEQUENCES))
                if post_mortem is not None:
                    snapshot.update(post_mortem.pop("grad_mode", {}), exception=post_mortem, post_mortem=True)
                if self.tracer.condition_error is not None:
                    snapshot["condition_error"] = self.tracer.condition_error
                    self.tracer.condition_error = None
                snapshot["watch_changed"] = watch_changed or []
                snapshot["breakpoint"] = self.tracer.hit_breakpoint
                snapshot["recording"] = self._keep_recording()
                if snapshot["recording"]:
                    wait_until_text_is_read()
                self.channel.send(m.Paused(self.pause_wire.compress(snapshot)))
                if snapshot["recording"]:
                    return m.Resume("step_into")
                return self._command_loop()
        finally:
            self._flush()
            self._frame_actions.clear()
            self.paused = False
            self.origins.resumed()

    def _add_ops(self, snapshot: dict[str, Any], op: dict[str, Any] | None) -> dict[str, Any] | None:
        """Put the op log in ``snapshot``; at an operation, also its result, and the line's live results
        for the graph (so the nodes of the operations before stay drawn)."""
        if self.ops is None:
            return None
        if op is not None:
            snapshot.update(ops=list(self.ops.entries), op=op)
            snapshot["vars"][op["variable"]] = op["output"]
            return self.ops.live_outputs()
        dropped = self.ops.dropped
        ops = self.ops.take()
        if ops:  # the key only when there are some: a record-mode pause stays as small as before
            snapshot["ops"] = ops
        if dropped:
            snapshot["ops_dropped"] = dropped
        return None

    def _command_loop(self) -> m.Resume:
        while True:
            message = self.inbox.get()
            if isinstance(message, m.Resume):
                return message
            if isinstance(message, m.SetBreakpoints):
                self.tracer.set_breakpoints(message.file, message.lines)
            elif isinstance(message, m.Request):
                result = self._answer(message)
                if isinstance(result.get("graph"), dict):
                    result["graph"] = self.pause_wire.graph.compress(result["graph"])
                self.channel.send(m.Reply(message.id, message.kind, result))

    def _answer(self, request: m.Request) -> dict[str, Any]:
        handler = self.request_handlers.get(request.kind)
        if handler is None:
            return {"ok": False, "error": {"type": "UnknownRequest", "message": request.kind}}
        self.origins.request(request.kind, self.frames[self.selected][0])
        try:
            result = self.tracer.lines.watch_call(handler, request.params)
        except Exception as exc:  # a failing request is an answer, never a dead lesson
            result = {"ok": False, "error": {"type": type(exc).__name__, "message": str(exc)}}
        finally:
            self._flush()
        return result

    def _frame(self, params: dict[str, Any]) -> FrameType:
        index = params.get("frame", self.selected)
        return self.frames[index][0]

    def _graph_update(self, frame: FrameType, extra: dict[str, Any] | None = None,
                      same_tensors: bool = False, summaries: dict[str, Any] | None = None) -> dict[str, Any]:
        """The change of the autograd graph of ``frame``'s tensors (and ``extra`` ones) since the last look.

        ``same_tensors`` and ``summaries``: see :meth:`GraphTracker.update`. The graph is an extra:
        if reading it fails, the pause goes on without it.
        """
        if not same_tensors:
            self._graph_basis.forget()  # a look from a request, or at other tensors
        try:
            variables = frame_locals(frame)
            return self.graph.update({**variables, **extra} if extra else variables, same_tensors, summaries)
        except Exception as exc:
            return {"changed": False, "added": [], "updated": [], "removed": [], "edges_added": [],
                    "roots": {}, "leaves": {}, "error": f"{type(exc).__name__}: {exc}"}

    def _actions(self, frame: FrameType) -> AutogradActions:
        """The frame's autograd actions, kept for the pause (``_grads`` of one request serves the next)."""
        actions = self._frame_actions.get(id(frame))
        if actions is None:
            actions = AutogradActions(frame.f_globals, frame_locals(frame), self.snapshots.summarizer)
            self._frame_actions[id(frame)] = actions
        return actions

    def _after_change(self, frame: FrameType, result: dict[str, Any]) -> dict[str, Any]:
        """Add the frame's variables and graph as they are after an action that may change them."""
        result.update(self.snapshots.variables(frame))
        result["graph"] = self._graph_update(frame)
        return result

    # ---- requests while paused ----------------------------------------------------------

    def _cmd_frame(self, params: dict[str, Any]) -> dict[str, Any]:
        """Select a frame of the stack: its variables and its autograd graph."""
        self.selected = int(params["index"])
        frame, line = self.frames[self.selected]
        result = {"ok": True, "index": self.selected, **frame_entry(frame, line)}
        result.update(self.snapshots.variables(frame, params.get("show_hidden", False)))
        result["graph"] = self._graph_update(frame)
        return result

    def _cmd_graph(self, params: dict[str, Any]) -> dict[str, Any]:
        """The whole autograd graph of the selected frame, as it stands."""
        self._graph_update(self._frame(params))
        return {"ok": True, "graph": self.graph.full()}

    def _cmd_evaluate(self, params: dict[str, Any]) -> dict[str, Any]:
        """Evaluate an expression (or run a statement) in the selected frame."""
        frame = self._frame(params)
        source = params["expression"]
        try:
            compile(source, "<console>", "eval")
        except SyntaxError:
            with learner_code():
                exec(compile(source, "<console>", "exec"), frame.f_globals, frame_locals(frame))
            return self._after_change(frame, {"ok": True, "value": None})
        result = self._actions(frame).evaluate(source)
        result["value"] = result.pop("summary", None)
        return result

    def _cmd_predict(self, params: dict[str, Any]) -> dict[str, Any]:
        """Whether the learner's answer says what an expression is now, in the selected frame."""
        frame = self._frame(params)
        try:
            with engine_reads(), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                value = eval(params["expression"], frame.f_globals, frame_locals(frame))  # noqa: S307
        except Exception as exc:
            return {"ok": False, "error": {"type": type(exc).__name__, "message": str(exc)}}
        return {"ok": True, "right": judge(value, str(params["answer"])), "shown": shown(value)}

    def _cmd_preview_gradients(self, params: dict[str, Any]) -> dict[str, Any]:
        """Gradients a backward would produce, without changing the lesson."""
        frame = self._frame(params)
        return self._actions(frame).preview_gradients(params["root"], params.get("inputs"), params.get("gradient"))

    def _cmd_run_backward(self, params: dict[str, Any]) -> dict[str, Any]:
        """A real ``backward()``, as if the line were in the lesson."""
        frame = self._frame(params)
        result = self._actions(frame).run_backward(
            params["root"], params.get("gradient"), params.get("retain_graph"), params.get("create_graph", False),
            params.get("inputs"))
        return self._after_change(frame, result)

    def _cmd_autograd_grad(self, params: dict[str, Any]) -> dict[str, Any]:
        """``torch.autograd.grad`` with the learner's arguments."""
        frame = self._frame(params)
        result = self._actions(frame).autograd_grad(
            params["outputs"], params["inputs"], params.get("grad_outputs"), params.get("retain_graph"),
            params.get("create_graph", False), params.get("allow_unused", False))
        return self._after_change(frame, result)

    def _cmd_zero_grad(self, params: dict[str, Any]) -> dict[str, Any]:
        """Zero the ``.grad`` of the named tensors."""
        frame = self._frame(params)
        return self._after_change(frame, self._actions(frame).zero_grad(params["names"]))

    def _cmd_clear_grad(self, params: dict[str, Any]) -> dict[str, Any]:
        """Set the ``.grad`` of the named tensors to None."""
        frame = self._frame(params)
        return self._after_change(frame, self._actions(frame).clear_grad(params["names"]))

    def _cmd_retain_grad(self, params: dict[str, Any]) -> dict[str, Any]:
        """``retain_grad()`` on a non-leaf."""
        frame = self._frame(params)
        return self._after_change(frame, self._actions(frame).retain_grad(params["name"]))

    def _cmd_values(self, params: dict[str, Any]) -> dict[str, Any]:
        """All values of a tensor given by an expression (at an op-level pause also by a ``⟨…⟩`` name), as one
        numpy array."""
        from app.lesson.summaries import tensor_values

        frame = self._frame(params)
        expression = params["expression"]
        if expression.startswith("⟨"):  # an operation's result at an op-level pause: the frame has no such name
            tensor = self.ops.live_outputs().get(expression) if self.ops is not None else None
            if tensor is None:
                return {"ok": False, "error": {"type": "NameError", "message": f"{expression} is no longer alive"}}
        else:
            tensor = eval(expression, frame.f_globals, frame_locals(frame))
        if params.get("grad"):
            tensor = tensor.grad
        return {"ok": True, "values": None if tensor is None else tensor_values(tensor)}


def main() -> None:
    """Entry point of the lesson process."""
    app = os.environ.pop(m.APP_PID_VARIABLE, None)  # a fresh interpreter's: a forked one's server ends it
    if app is not None:
        os_part().end_with_parent(int(app))  # not left spinning by an app killed outright
    channel = open_channel()
    os_part().become_subreaper()  # a lesson's detached grandchildren stay ours to end (app.process_posix)
    sys.stdout = sys.__stdout__ = lesson_stream(1, "<stdout>", "surrogateescape")
    sys.stderr = sys.__stderr__ = lesson_stream(2, "<stderr>", "backslashreplace")
    faulthandler.enable(file=sys.__stderr__)
    try:
        import torch

        torch_version = str(torch.__version__)
    except ImportError:
        torch_version = None
    lesson_hooks.record_grad_mode_at_raise()
    lesson_hooks.import_engine()
    # torch's module objects live as long as the process: keep them out of the collector's
    # scans so a full collection during a pause does not walk them all.
    gc.freeze()
    channel.send(m.Ready(os.getpid(), torch_version))
    runner = LessonRunner(channel)
    lesson_hooks.guard_fds(channel.fds())
    command = runner.wait_for_run()
    ended = runner.run(command)
    if runner.forked:  # a forked child that ran to the end of the lesson: it has no app to tell
        runner._flush()
        os._exit(0)
    if ended.status != "empty" and not (ended.status == "error" and ended.error.get("type") == "SyntaxError"):
        runner.shut_down()
    end_descendants(os.getpid())  # before the app hears of the end: once we exit, the detached ones are init's
    channel.send(ended)
    channel.outbound.flush()
    # Skip the rest of interpreter teardown: the lesson's threads and exit handlers have had their turn.
    os._exit(0)


if __name__ == "__main__":
    main()
