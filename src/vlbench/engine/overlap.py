"""Two pieces of work side by side: in a forked child process where the work holds the GIL, else in a thread."""

from __future__ import annotations

import contextlib
import os
import pickle
import signal
import sys
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

__all__ = ["overlapped"]

_T = TypeVar("_T")
_U = TypeVar("_U")


def overlapped(first: Callable[[], _T], second: Callable[[], _U], *, fork: bool, thread: bool = False
               ) -> tuple[_T, _U]:
    """``(first(), second())``, overlapped where that is safe and worth it. With ``fork``: ``first()`` in a forked
    child process (its value pickled back through a pipe) while this process runs ``second()``: the way to overlap
    work that holds the GIL (parsing, Python loops). Forks only on Linux, in a process running one thread (a fork
    copies no other thread, so a lock one of them held would stay held in the child). Without a fork, with
    ``thread``: ``second()`` in a worker thread while ``first()`` runs here (work whose numpy calls release the GIL);
    else one after the other.

    Nothing of the child's is trusted: if it fails in any way (an error, a crash, a signal), ``first()`` runs here
    and raises here. An error of ``second()`` is raised after ``first()``'s outcome is known, so the errors come in
    the order of one call after the other. ``first()`` must return all it has to say: what it changes besides (a
    Python warning it issues, a cache it fills) stays in the child."""
    if fork and _may_fork():
        return _forked(first, second)
    if not thread:
        return first(), second()
    with ThreadPoolExecutor(max_workers=1) as pool:
        later = pool.submit(second)
        value_1 = first()           # an error here is raised first; the worker is still waited for
        return value_1, later.result()


def _forked(first: Callable[[], _T], second: Callable[[], _U]) -> tuple[_T, _U]:
    """:func:`overlapped` with a fork: ``first()`` in the child, ``second()`` here."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:                                    # the child: no return, no atexit, no stdio flush
        os.close(read_end)
        code = 1
        try:
            with os.fdopen(write_end, "wb") as out:
                out.write(pickle.dumps(first(), protocol=pickle.HIGHEST_PROTOCOL))
            code = 0
        finally:
            os._exit(code)
    os.close(write_end)
    payload, status = b"", None
    outcome: tuple[_U] | Exception
    with os.fdopen(read_end, "rb") as inbox:
        try:
            try:
                outcome = (second(),)
            except Exception as exc:                    # raised once first()'s own outcome is known
                outcome = exc
            payload = inbox.read()
            status = os.waitpid(pid, 0)[1]
        finally:
            if status is None:                          # interrupted here: the child goes too (never a reaped pid)
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)
                    os.waitpid(pid, 0)
    value_1 = _unpickled(payload) if status == 0 else None
    if value_1 is None:
        value_1 = (first(),)
    if isinstance(outcome, Exception):
        raise outcome
    return value_1[0], outcome[0]


def _unpickled(payload: bytes) -> tuple[Any] | None:
    """The child's value (in a 1-tuple: the value may be None), or None if its bytes do not unpickle."""
    try:
        return (pickle.loads(payload),)
    except Exception:
        return None


def _may_fork() -> bool:
    """Whether :func:`overlapped` may fork: Linux (which has ``os.fork``), in a process running one thread."""
    return sys.platform == "linux" and threading.active_count() == 1
