"""memd: device memory for accelerator runtimes, from Python.

memd is the daemon that owns the address space of every accelerator on a host. This
package talks to it through libmemclient (a C extension; every call releases the GIL and
a Client may be shared by threads), and plans models offline with memd's own planner.

Allocations::

    import memd
    with memd.connect() as c:                       # $MEMD_SOCKET, then the default socket
        with c.alloc(0, "constant", 64 << 20, page_size=2048, name="w") as buf:
            print(hex(buf.address), buf.size_per_bank, buf.banks, buf.bank_addresses())
        print(c.dump()["devices"][0]["bank_groups"][0]["free"])   # memctl dump --json

Models (from memd's YAML, ONNX or PyTorch), planned offline or loaded into the daemon::

    m = memd.Model.from_onnx("resnet50.onnx", dims={"batch": 1})
    print(m.summary(), m.plan(budget_ms=1000).arena)
    with memd.connect() as c, c.load_model(m, device=0) as lm, lm.create_instance() as inst:
        print(inst.tensors["input"], lm.weights)     # every tensor's absolute address

Plans of any buffers with lifetimes::

    p = memd.plan([(0, 2, 1024), (1, 3, 4096, 256), (2, 4, 512)], budget_ms=100)
    memd.validate(buffers, p.offsets)   # raises memd.PlanError naming two overlapping buffers

Errors are memd.Error and its subclasses: OutOfMemory (also a MemoryError; requested,
free, largest_free), PermissionError, ConnectionError (also the builtins of those names),
NotFoundError (and its RevokedError: an admin freed the buffer), InvalidRequestError,
UnsupportedError, BusyError, ExistsError, PlanError, ModelError.
"""
from __future__ import annotations

import contextlib
import inspect
import os
import sys
import time
from typing import Any, Dict, Iterable, Iterator, List, Optional, Sequence

from . import _memd
from ._memd import (CLASSES, DTYPES, KINDS, SCOPES, Buffer, BusyError, ConnectionError, Error,
                    ExistsError, InvalidRequestError, ModelError, NotFoundError, OutOfMemory,
                    PermissionError, PlanError, Pool, PoolBuffer, RevokedError, TimeoutError,
                    UnsupportedError, default_socket)
from ._model import Instance, LoadedModel, Location, Model, Op, Tensor, model_name

__version__ = _memd.VERSION
__all__ = [
    "connect", "Client", "Buffer", "Pool", "PoolBuffer", "plan", "validate", "lower_bound", "Plan", "Model", "Tensor",
    "Op", "LoadedModel", "Instance", "Location", "model_name", "default_socket", "Error", "OutOfMemory",
    "PermissionError", "ConnectionError", "NotFoundError", "InvalidRequestError",
    "UnsupportedError", "BusyError", "ExistsError", "PlanError", "ModelError", "TimeoutError",
    "RevokedError", "CLASSES", "SCOPES", "KINDS", "DTYPES", "record_stacks",
]

# memd.record_stacks(True): each allocation carries a short stack of its caller.
_record_stacks = False
_STACK_FRAMES = 6
_STACK_MAX = 511        # bytes: the daemon's MEMD_STACK_MAX less its NUL


def record_stacks(enabled: bool = True) -> None:
    """Attach a short Python stack (the innermost frames: "file:line function", one per
    line) to every allocation a Client makes from now on, as PyTorch's
    _record_memory_history(context="all") does; `memctl history` and Client.history()
    show it. Costs a CONTEXT request whenever the stack differs from the last one sent."""
    global _record_stacks
    _record_stacks = bool(enabled)


def _short_stack(depth: int) -> str:
    """The caller's stack depth frames up, innermost first, cut to what memd keeps."""
    lines: List[str] = []
    f = sys._getframe(depth)
    while f is not None and len(lines) < _STACK_FRAMES:
        lines.append(f"{os.path.basename(f.f_code.co_filename)}:{f.f_lineno} {f.f_code.co_name}")
        f = f.f_back
    s = "\n".join(lines).encode()[:_STACK_MAX]
    return s.decode(errors="ignore")


class Plan:
    """A plan: offsets[i] is buffer i's offset in an arena of `arena` bytes.

    lower_bound: no plan can use fewer bytes; gap = (arena - lower_bound) / lower_bound
    (gap_pct in percent); strategy: what produced it; optimal: arena is proven minimal;
    iterations: improvement steps spent; plan_ms: time spent planning. Plans made by the
    daemon (Client.plan) also have plan_id, cached and precomputed. Model.plan() adds
    tensors: tensor name -> offset."""

    __slots__ = ("offsets", "arena", "lower_bound", "strategy", "optimal", "iterations",
                 "plan_ms", "plan_id", "cached", "precomputed", "tensors")

    def __init__(self, offsets: List[int], arena: int, lower_bound: int, strategy: str,
                 optimal: bool, iterations: int, plan_ns: int, plan_id: Optional[str] = None,
                 cached: bool = False, precomputed: bool = False):
        self.offsets = offsets
        self.arena = arena
        self.lower_bound = lower_bound
        self.strategy = strategy
        self.optimal = optimal
        self.iterations = iterations
        self.plan_ms = plan_ns / 1e6
        self.plan_id = plan_id
        self.cached = cached
        self.precomputed = precomputed
        self.tensors: Optional[Dict[str, int]] = None

    @property
    def gap(self) -> float:
        """(arena - lower_bound) / lower_bound; 0 when the lower bound is 0."""
        return (self.arena - self.lower_bound) / self.lower_bound if self.lower_bound else 0.0

    @property
    def gap_pct(self) -> float:
        return 100.0 * self.gap

    def __repr__(self) -> str:
        return (f"<memd.Plan {len(self.offsets)} buffers: arena {self.arena}, lower bound "
                f"{self.lower_bound} (gap {self.gap_pct:.3f}%), {self.strategy}"
                f"{', optimal' if self.optimal else ''}>")


def plan(buffers: Iterable[Any], budget_ms: int = 1000, seed: int = 0, *,
         iterations: Optional[int] = None) -> Plan:
    """Plans buffers offline with memd's planner (no daemon): a Plan whose offsets[i] places
    buffer i so that no two buffers live at the same time share a byte.

    buffers: (lower, upper, size[, alignment[, offset]]) tuples or objects (or dicts) with
    those attributes; lifetimes are half-open [lower, upper) in any unit of time;
    alignment a power of two (0: 1); an offset pins the buffer there. budget_ms bounds
    the improvement search after the first, greedy plans (0: none); it stops earlier
    once a plan is proven optimal. iterations=N replaces the clock by a fixed number of
    improvement steps: the result depends only on the problem and the seed. The GIL is
    released while planning. An invalid problem raises PlanError naming the buffer(s)."""
    return Plan(*_memd.plan_solve(buffers, budget_ms, seed, iterations))


def validate(buffers: Iterable[Any], offsets: Sequence[int]) -> int:
    """Checks a plan (a compiler's, or any): returns the arena size, or raises PlanError
    naming the two buffers that overlap (or the misaligned or moved one). Buffers as in
    plan(); objects' `name` (or `id`) attribute names them in the message."""
    return _memd.plan_validate(buffers, offsets)


def lower_bound(buffers: Iterable[Any]) -> int:
    """The largest sum of sizes of buffers live at the same time: no plan can do better."""
    return _memd.plan_lower_bound(buffers)


class Client(_memd.Client):
    """Client(socket=None, name=None): one connection (session) to memd.

    socket: the daemon's socket; None: $MEMD_SOCKET, then default_socket(). name: shown by
    `memctl sessions`. Everything allocated through the client belongs to its session and
    is released by memd when the connection closes. A context manager; thread-safe.
    Methods: alloc, alloc_batch, pool, free, free_batch, query, bank_addresses, dump,
    session, reconnect, plan, load_model, context, history, close."""

    _context = ""               # what context() set; "" none
    _context_sent = ("", "")    # (context, stack) the daemon has for this session

    def _send_context(self, stack: str = "") -> None:
        want = (self._context, stack)
        if want != self._context_sent:
            self._set_context(*want)
            self._context_sent = want

    @contextlib.contextmanager
    def context(self, name: str) -> Iterator[None]:
        """with client.context("decoder/layer3"): the allocations made inside are recorded
        with this context (nested contexts join with "/"), shown by `memctl history` and
        history(). At most 127 bytes in all."""
        outer = self._context
        self._context = f"{outer}/{name}" if outer else name
        try:
            self._send_context()
            yield
        finally:
            self._context = outer
            if not self.closed:
                self._send_context()

    def _stack_for_alloc(self) -> None:
        # the caller of alloc/alloc_batch is 3 frames up; "" clears a stack sent before
        self._send_context(_short_stack(3) if _record_stacks else "")

    def alloc(self, *args: Any, **kw: Any) -> Buffer:
        self._stack_for_alloc()
        return super().alloc(*args, **kw)
    alloc.__doc__ = _memd.Client.alloc.__doc__
    alloc.__signature__ = inspect.signature(_memd.Client.alloc)  # type: ignore[attr-defined]

    def alloc_batch(self, reqs: Any) -> List[Buffer]:
        self._stack_for_alloc()
        return super().alloc_batch(reqs)
    alloc_batch.__doc__ = _memd.Client.alloc_batch.__doc__
    alloc_batch.__signature__ = inspect.signature(_memd.Client.alloc_batch)  # type: ignore[attr-defined]

    def history(self, *, device: Optional[int] = None, pid: int = 0,
                client: Optional[str] = None, since: Optional[float] = None,
                since_seq: int = 0) -> List[Dict[str, Any]]:
        """The flight recorder's records, oldest first, as dicts (the keys of `memctl
        history --json`, but for actor_session, actor_pid and actor_uid, flat; type
        "alloc", "free", "fail", "release", "revoke", "pool_report", "model_load",
        "model_unload", "instance_create", "instance_release", "subdev_define" or
        "subdev_bind", the last ones with id, model_id, count, added and removed); an admin
        sees all, others their uid's. Filters: device id, pid, client (client or process
        name), since (seconds back from now), since_seq (the first record number). Each
        record has its "seq": pass the last one + 1 as since_seq to read on (a since_seq past
        the recorder's end, from a previous daemon, reads everything again)."""
        since_ns = time.time_ns() - int(since * 1e9) if since else 0
        out: List[Dict[str, Any]] = []
        seq = since_seq
        while True:
            recs, nxt, _lost, _cap, _size = self._history(seq, 0, device, pid, client, since_ns)
            out.extend(recs)
            if not recs or nxt <= seq:
                return out
            seq = nxt

    def plan(self, buffers: Iterable[Any], budget_ms: int = 0, seed: int = 0,
             offsets: Optional[Sequence[int]] = None) -> Plan:
        """Plans buffers in the daemon (its plan cache answers a known problem at once; the
        daemon caps budget_ms at 1000, 0 is its default of 100). With offsets, the daemon
        validates that precomputed plan instead (InvalidRequestError naming two overlapping
        buffers)."""
        r = self._plan(buffers, budget_ms, seed, offsets)
        return Plan(*r)

    def load_model(self, model: Model, device: Optional[int] = None, *, budget_ms: int = 0,
                   seed: int = 0, offsets: Optional[Dict[str, int]] = None,
                   page_size: Optional[int] = None,
                   timeout: Optional[float] = None) -> LoadedModel:
        """Loads a Model: memd plans its activations (or validates offsets, a precomputed
        plan: activation name -> arena offset), allocates its code and weights once per
        device (shared by every session loading the same model) and returns a LoadedModel
        that creates instances. device: default the model's, else 0. page_size: the page
        its constants, arenas and placeholders interleave over the banks with (tensors
        start on page boundaries); None: the model's (YAML page_size), else the device's
        default (memd.yaml); 0: one page each, whole in every bank. A bad page size (not
        a power of two, below the group's alignment, over a bank) is InvalidRequestError.

        Weights are the caller's to write: the first loader gets .created True, writes
        them and calls set_ready(). Other loaders wait here (timeout seconds, None: no
        limit; the daemon and its other clients go on meanwhile) until it is ready and get
        .created False, or memd.TimeoutError (their load is undone). When the filler dies
        or unloads before set_ready, the longest waiting loader gets .created True and
        the job."""
        if not isinstance(model, Model):
            raise TypeError(f"load_model needs a memd.Model, not {type(model).__name__}")
        dev = device if device is not None else (model.device or 0)
        tensors, ops = model._load_args()
        offs = None
        if offsets is not None:
            unknown = set(offsets) - {t.name for t in model.tensors}
            if unknown:
                raise ValueError(f"offsets: no tensor named {sorted(unknown)[0]!r}")
            offs = [offsets.get(t.name) for t in model.tensors]
        page = page_size if page_size is not None else model.page_size
        info, infos = self._model_load(model.name, dev, model.scope, model.code_bytes, tensors,
                                       ops, offs, budget_ms, seed, page)
        if not info["created"]:
            try:
                info["created"] = self._model_wait(info["model_id"], timeout)
            except BaseException:
                # Not ready in time (or interrupted): give the load back, as if never made.
                try:
                    self._model_unload(info["model_id"], True)
                except _memd.Error:
                    pass  # the connection died with the wait: the session holds nothing
                raise
        return LoadedModel(self, model, info, infos)

    def locate(self, buffer: Any, offset: Any) -> Any:
        """Where byte offset of a buffer (a Buffer or a handle) is, to write it with a device
        driver: Location(bank, address, absolute, page, core, noc). Page i of the buffer
        is in bank i % banks at the bank's address + (i // banks) * page_size, as tt-metal
        interleaves pages (libmemclient's memclient_locate, from one QUERY and BANK_ADDRS).
        A one-page buffer is all in its first bank; an offset past the pages the buffer
        reserves raises memd.Error (ERANGE). offset may also be a sequence of offsets (a
        range of page starts, say): a list of Locations from the same two requests, what a
        loader walking a buffer page by page wants."""
        if isinstance(offset, int):
            return Location(*self._locate(buffer, [offset])[0])
        return [Location(*t) for t in self._locate(buffer, list(offset))]

    def banks_on_cores(self, device: int, group: str, x: Iterable[int],
                       y: Iterable[int]) -> List[int]:
        """The ids (increasing) of the banks of device's group ("sram"/"l1" or
        "dram"/"global") whose logical core (cx, cy) has cx in x and cy in y, read from
        memd's per-bank records: what subdev_define needs for a partition of cores on a
        tt-metal device, whose L1 bank ids are shuffled over the grid (memd.yaml's
        `cores:` picks the same). ValueError when the device has no such group or its
        banks have no cores, or no bank lies on those cores."""
        # libmemclient's memclient_banks_on_cores does the work (one implementation for C
        # runtimes, memctl and Python), the group's name included. A coordinate no core
        # can have matches nothing.
        def coords(v: Iterable[int]) -> List[int]:
            return sorted({c for c in v if 0 <= c < 0xffff})
        return self._banks_on_cores(device, group, coords(x), coords(y))

    def __repr__(self) -> str:
        return f"<memd.Client {self.socket!r}{' closed' if self.closed else ''}>"


def connect(socket: "Optional[os.PathLike[str] | str]" = None,
            name: Optional[str] = None, *, timeout: Optional[float] = None) -> Client:
    """Connects to memd: socket, else $MEMD_SOCKET, else default_socket() (as libmemclient
    does). Raises memd.ConnectionError (no daemon there) or memd.PermissionError (the
    socket is not accessible). Use as a context manager to close the session.

    timeout: seconds every call (the connect's own handshake included) waits for the
    daemon's reply; None: $MEMD_TIMEOUT_MS (milliseconds), else no limit. A call that
    runs out raises memd.TimeoutError and closes the connection (the session's memory is
    released, as after close()): connect again."""
    return Client(socket, name, timeout=timeout)
