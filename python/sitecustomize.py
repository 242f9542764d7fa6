# sitecustomize.py - put on PYTHONPATH by 'memprof record' (memprof-record(1)) so that every
# Python process of a recorded job keeps PyTorch's own allocator history: once torch is imported
# and CUDA initialised it calls torch.cuda.memory._record_memory_history (unless the program
# already records it: the program's own settings are never changed or turned off) and writes
# torch.cuda.memory._snapshot() to $MEMPROF_SPOOL_DIR/torch-PID.pickle at exit, on SIGTERM,
# when PyTorch reports an out-of-memory error, and at each 'memprof attach PID mark LABEL' (which
# leaves $MEMPROF_SPOOL_DIR/torch-mark-PID holding LABEL: a daemon thread looks for it four times
# a second, removes it and writes the snapshot, so a job killed later keeps what it had then).  memprof merges it with the CUPTI spool of the
# same pid.  It then runs the sitecustomize it hides (the next one on sys.path), if any.
# Never raises into the program: a failure is written to stderr once, prefixed "memprof:".
import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))
_DIR = os.environ.get("MEMPROF_SPOOL_DIR", "")
_ON = os.environ.get("MEMPROF_TORCH_HISTORY", "1") == "1" and _DIR != ""
_STACKS = os.environ.get("MEMPROF_STACKS", "all")
try:
    _ENTRIES = max(1, int(os.environ.get("MEMPROF_TORCH_ENTRIES", "100000")))
except ValueError:
    _ENTRIES = 100000

_state = {"ours": False, "user": False, "started": False, "torch": None, "dumps": 0,
          "reason": "", "pid": os.getpid()}


def _warn(what, exc):
    sys.stderr.write("memprof: PyTorch history %s: %s: %s\n" % (what, type(exc).__name__, exc))


def _chain():
    """Run the sitecustomize this one hides (site imports only the first on the path)."""
    mine = sys.modules.pop("sitecustomize", None)
    saved = sys.path[:]
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != _HERE]
    try:
        import importlib.util
        spec = importlib.util.find_spec("sitecustomize")
        if spec is not None and spec.loader is not None:
            module = importlib.util.module_from_spec(spec)
            sys.modules["sitecustomize"] = module
            spec.loader.exec_module(module)
    except Exception as exc:  # as site.py does: report, go on
        _warn("could not run the next sitecustomize", exc)
    finally:
        sys.path[:] = saved
        if mine is not None:
            sys.modules["memprof_sitecustomize"] = mine
            sys.modules.setdefault("sitecustomize", mine)


def _history_kwargs():
    """_record_memory_history's arguments for --stacks (off, sampled or all)."""
    if _STACKS == "off":
        return {"enabled": "all", "context": None, "max_entries": _ENTRIES}
    if _STACKS == "sampled":
        return {"enabled": "all", "context": "alloc", "stacks": "python", "max_entries": _ENTRIES}
    return {"enabled": "all", "context": "all", "stacks": "python", "max_entries": _ENTRIES}


def _start():
    """At CUDA's initialisation: history on, unless the program turned it on itself."""
    if _state["started"]:
        return
    _state["started"] = True
    _start_mark_watcher()
    if _state["user"]:
        return
    try:
        try:
            _state["record"](**_history_kwargs())
        except TypeError:  # PyTorch before 2.1: the older signature
            _state["record"](True, trace_alloc_max_entries=_ENTRIES,
                             trace_alloc_record_context=_STACKS != "off")
        _state["ours"] = True
    except Exception as exc:  # never into CUDA's initialisation
        _warn("not turned on", exc)
        return
    try:
        _state["torch"]._C._cuda_attach_out_of_memory_observer(_on_oom)
    except Exception as exc:
        _warn("no out-of-memory observer", exc)


def _watch_marks():
    """'memprof attach PID mark LABEL' leaves torch-mark-PID: a snapshot then, reason 'mark: LABEL'."""
    import time
    pid = os.getpid()
    path = os.path.join(_DIR, "torch-mark-%d" % pid)
    while os.getpid() == pid:
        time.sleep(0.25)
        try:
            with open(path, "rb") as f:
                label = f.read(512).decode("utf-8", "replace").strip()
            os.unlink(path)
        except OSError:
            continue
        _dump("mark: " + label)


def _start_mark_watcher():
    import threading
    try:
        threading.Thread(target=_watch_marks, name="memprof-marks", daemon=True).start()
    except Exception as exc:
        _warn("no snapshot at marks", exc)


def _dump(reason):
    """The snapshot, into the spool directory (written whole, then renamed)."""
    torch = _state["torch"]
    if torch is None or not _state["started"] or os.getpid() != _state["pid"]:
        return
    try:
        import pickle
        snap = torch.cuda.memory._snapshot()
        if isinstance(snap, dict):
            snap = dict(snap)
            snap["memprof_history"] = {"max_entries": _ENTRIES, "stacks": _STACKS,
                                       "ours": _state["ours"], "user": _state["user"],
                                       "reason": reason, "pid": os.getpid()}
        path = os.path.join(_DIR, "torch-%d.pickle" % os.getpid())
        tmp = path + ".tmp"
        with open(tmp, "wb") as f:
            pickle.dump(snap, f, protocol=4)
        os.replace(tmp, path)
        _state["dumps"] += 1
    except Exception as exc:
        _warn("snapshot at %s not written" % reason, exc)


def _on_oom(device, alloc, device_allocated, device_free):
    _dump("oom")


def _on_term(signum, frame):
    import signal
    _dump("sigterm")
    prev = _state.get("prev_term")
    if callable(prev):
        return prev(signum, frame)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    os.kill(os.getpid(), signal.SIGTERM)


def _wrap_record(torch):
    """Note a program that records history itself: its settings win, ours step aside."""
    memory = torch.cuda.memory
    original = memory._record_memory_history
    _state["record"] = original

    def _record_memory_history(*args, **kwargs):
        _state["user"] = True
        return original(*args, **kwargs)

    memory._record_memory_history = _record_memory_history
    if getattr(torch.cuda, "_record_memory_history", None) is original:
        torch.cuda._record_memory_history = _record_memory_history


def _torch_imported(torch):
    _state["torch"] = torch
    try:
        import torch.cuda.memory  # noqa: F401 (a submodule the call needs)
        _wrap_record(torch)
        torch.cuda._lazy_call(_start)  # now when CUDA is up, else at its initialisation
    except Exception as exc:
        _warn("not turned on", exc)


class _Finder:
    """Runs _torch_imported once the module 'torch' has executed."""

    def find_spec(self, name, path=None, target=None):
        if name != "torch":
            return None
        import importlib.util
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec("torch")
        if spec is None or spec.loader is None:
            return spec
        run = spec.loader.exec_module

        def exec_module(module):
            run(module)
            _torch_imported(module)

        spec.loader.exec_module = exec_module
        return spec


def _install():
    import atexit
    import signal
    atexit.register(_dump, "exit")
    try:
        prev = signal.getsignal(signal.SIGTERM)
        if prev in (signal.SIG_DFL, None) or callable(prev):
            _state["prev_term"] = prev
            signal.signal(signal.SIGTERM, _on_term)
    except (ValueError, OSError):  # not the main thread
        pass
    if hasattr(os, "register_at_fork"):
        # a forked child cannot use its parent's CUDA: it writes no snapshot of its own
        os.register_at_fork(after_in_child=lambda: _state.update(pid=os.getpid(), started=False))
    if "torch" in sys.modules:
        _torch_imported(sys.modules["torch"])
    else:
        sys.meta_path.insert(0, _Finder())


if _ON:
    try:
        _install()
    except Exception as exc:
        _warn("not set up", exc)
_chain()
