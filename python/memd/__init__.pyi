# Type stubs of the memd package (the C extension memd._memd and its Python parts).
import builtins
import os
from typing import (Any, ContextManager, Dict, Iterable, List, Literal, Mapping, Optional,
                    Sequence, Tuple, Union, overload)

__version__: str
__all__: List[str]

CLASSES: Tuple[str, ...]
SCOPES: Tuple[str, ...]
KINDS: Tuple[str, ...]
DTYPES: Tuple[str, ...]

_Path = Union[str, "os.PathLike[str]"]
# Bytes as an int, or a str as memctl takes sizes: "4096", "64KiB", "1MiB", "0x1000".
_Size = Union[int, str]
# "f16"/"float16"..., a torch.dtype (torch.float16) or a numpy dtype or scalar type.
_DType = Union[str, Any]
# (lower, upper, size[, alignment[, offset]]) or an object/dict with those attributes
PlanBuffer = Union[Tuple[int, int, int], Tuple[int, int, int, int],
                   Tuple[int, int, int, int, Optional[int]], Any]

class Error(Exception):
    errno: int
    message: str

class OutOfMemory(Error, MemoryError):
    requested: int
    size_per_bank: int
    allocated: int
    free: int
    largest_free: int
    device: int
    region: int
    cls: str
    kind: str
    quota: bool
    #: the region's top holders, biggest first: dicts with pid, process, client,
    #: session, uid, bytes ([] for a pool's own refusal)
    holders: List[Dict[str, Any]]
    limit: bool  # a cgroup limit (Client.limits()) refused it
    #: the post-mortem memd saved (Client.postmortem(id), memctl postmortem ID); None
    #: when none was (its rate limit, turned off, or an older daemon)
    postmortem: Optional[int]

class PermissionError(Error, builtins.PermissionError): ...
class ConnectionError(Error, builtins.ConnectionError): ...
class NotFoundError(Error, LookupError): ...

class RevokedError(NotFoundError):
    """An admin freed the buffer (memctl free): the session no longer holds it."""
    handle: int
    time_ns: int
    device: int
    admin_session: int
    admin_pid: int
    admin_uid: int
    admin_process: str
    admin_client: str

class InvalidRequestError(Error, ValueError): ...
class UnsupportedError(Error): ...
class BusyError(Error): ...
class ExistsError(Error): ...

class PlanError(Error, ValueError):
    issue: str
    a: int
    b: Optional[int]
    names: Tuple[Any, Any]

class ModelError(Error, ValueError):
    op: Optional[int]
    tensor: Optional[int]

class TimeoutError(Error, builtins.TimeoutError): ...

def default_socket() -> str: ...

class Buffer:
    handle: int
    address: int
    size_per_bank: int
    page_size: int
    pitch: int
    banks: int
    bank_mode: int  # 0 lockstep, 1 uniform per-core, 2 per bank, 3 range lockstep
    refcount: int
    region: str
    region_index: int
    device: int
    name: Optional[str]
    freed: bool
    #: an admin freed it (a notice came with a reply since; no request)
    revoked: bool
    kind: str
    cls: str
    scope: str
    client: Client
    def free(self) -> None: ...
    def bank_addresses(self) -> List[int]: ...
    def bank_info(self) -> List[Dict[str, Any]]: ...
    @overload
    def locate(self, offset: int) -> Location: ...
    @overload
    def locate(self, offset: Sequence[int]) -> List[Location]: ...
    def __enter__(self) -> Buffer: ...
    def __exit__(self, *exc: Any) -> bool: ...

class PoolBuffer:
    handle: int
    address: int
    size: int
    offset: int
    lease: int
    name: Optional[str]
    freed: bool
    pool: Pool
    def free(self) -> None: ...
    def __enter__(self) -> PoolBuffer: ...
    def __exit__(self, *exc: Any) -> bool: ...

class Pool:
    handle: int
    address: int
    size: int
    used: int
    peak: int
    leases: int
    allocations: int
    unreported: int
    refused_errno: int
    limit: int
    closed: bool
    client: Client
    def alloc(self, size: _Size, alignment: _Size = ..., name: Optional[str] = ...) -> PoolBuffer: ...
    def free(self, buffer: Union[int, PoolBuffer]) -> None: ...
    def flush(self) -> None: ...
    def close(self) -> None: ...
    def __enter__(self) -> Pool: ...
    def __exit__(self, *exc: Any) -> bool: ...

class Plan:
    offsets: List[int]
    arena: int
    lower_bound: int
    strategy: str
    optimal: bool
    iterations: int
    plan_ms: float
    plan_id: Optional[str]
    cached: bool
    precomputed: bool
    tensors: Optional[Dict[str, int]]
    @property
    def gap(self) -> float: ...
    @property
    def gap_pct(self) -> float: ...

def plan(buffers: Iterable[PlanBuffer], budget_ms: int = ..., seed: int = ..., *,
         iterations: Optional[int] = ...) -> Plan: ...
def validate(buffers: Iterable[PlanBuffer], offsets: Sequence[int]) -> int: ...
def lower_bound(buffers: Iterable[PlanBuffer]) -> int: ...
def model_name(text: str, default: str = ...) -> str: ...

# Written once, with their fields' types, in the Python part of the package.
from ._model import Location as Location, Op as Op, Tensor as Tensor

class Model:
    name: str
    device: Optional[int]
    scope: str
    code_bytes: int
    page_size: Optional[int]
    source: Optional[str]
    tensors: List[Tensor]
    ops: List[Op]
    def __init__(self, name: str, tensors: Iterable[Any], ops: Iterable[Any], *,
                 device: Optional[int] = ..., scope: str = ..., code_bytes: int = ...,
                 source: Optional[str] = ..., page_size: Optional[int] = ...) -> None: ...
    @classmethod
    def from_yaml(cls, path: _Path) -> Model: ...
    @classmethod
    def from_yaml_string(cls, text: str, name: str = ...) -> Model: ...
    @classmethod
    def from_onnx(cls, model: Union[_Path, bytes, Any], *,
                  dims: Optional[Mapping[str, int]] = ..., name: Optional[str] = ...) -> Model: ...
    @classmethod
    def from_torch(cls, module: Any, example_inputs: Any, *, training: bool = ...,
                   tracer: str = ..., name: Optional[str] = ...) -> Model: ...
    def tensor(self, name: str) -> Tensor: ...
    def problem(self) -> List[Tuple[int, int, int, int]]: ...
    def problem_tensors(self) -> List[str]: ...
    def plan(self, budget_ms: int = ..., seed: int = ...) -> Plan: ...
    def lower_bound(self) -> int: ...
    @property
    def weight_bytes(self) -> int: ...
    @property
    def activation_bytes(self) -> int: ...
    @property
    def placeholder_bytes(self) -> int: ...
    def summary(self) -> Dict[str, int]: ...
    def to_yaml(self, path: Optional[_Path] = ...) -> str: ...

class Instance:
    model: LoadedModel
    instance_id: int
    arena_handle: int
    arena_address: int
    arena_bytes: int
    reused: bool
    tensors: Dict[str, int]
    handles: Dict[str, int]
    released: bool
    @overload
    def locate(self, tensor: str, offset: int = ...) -> Location: ...
    @overload
    def locate(self, tensor: str, offset: Sequence[int]) -> List[Location]: ...
    def release(self, free: bool = ...) -> None: ...
    def __enter__(self) -> Instance: ...
    def __exit__(self, *exc: Any) -> None: ...

class LoadedModel:
    client: Client
    model: Model
    model_id: int
    name: str
    device: int
    arena: int
    lower_bound: int
    plan_id: str
    strategy: str
    plan_cached: bool
    plan_optimal: bool
    created: bool
    users: int
    code_address: int
    code_bytes: int
    const_address: int
    const_bytes: int
    const_handle: int
    page_size: int
    weights: Dict[str, int]
    offsets: Dict[str, int]
    unloaded: bool
    info: Dict[str, Any]
    @property
    def gap(self) -> float: ...
    @overload
    def locate(self, tensor: str, offset: int = ...) -> Location: ...
    @overload
    def locate(self, tensor: str, offset: Sequence[int]) -> List[Location]: ...
    def create_instance(self) -> Instance: ...
    def set_ready(self) -> None: ...
    def unload(self, force: bool = ...) -> None: ...
    def __enter__(self) -> LoadedModel: ...
    def __exit__(self, *exc: Any) -> None: ...

class Client:
    closed: bool
    socket: Optional[str]
    def __init__(self, socket: Optional[_Path] = ..., name: Optional[str] = ..., *,
                 timeout: Optional[float] = ...) -> None: ...
    def close(self) -> None: ...
    def __enter__(self) -> Client: ...
    def __exit__(self, *exc: Any) -> bool: ...
    def session(self) -> Dict[str, Any]: ...
    def reconnect(self, timeout_ms: int = ...) -> bool: ...
    def alloc(self, device: int, cls: str, size: Optional[_Size] = ..., *, scope: str = ...,
              page_size: _Size = ..., alignment: _Size = ..., banks: int = ...,
              name: Optional[str] = ..., shared: bool = ...,
              shape: Optional[Sequence[int]] = ..., dtype: Optional[_DType] = ...,
              bank_set: Optional[Sequence[int]] = ..., per_bank: bool = ...,
              mode: Optional[Literal["uniform_per_core", "range_lockstep", "per_core"]] = ...,
              address: Optional[int] = ...,
              sizes: Optional[Sequence[_Size]] = ...) -> Buffer: ...
    def alloc_batch(self, requests: Iterable[Mapping[str, Any]]) -> List[Buffer]: ...
    def pool(self, device: int, cls: str, size: _Size, *, scope: str = ...,
             page_size: _Size = ..., alignment: _Size = ..., banks: int = ...,
             name: Optional[str] = ..., grow: bool = ..., limit: _Size = ...) -> Pool: ...
    def free(self, handle: Union[int, Buffer]) -> None: ...
    def free_batch(self, handles: Iterable[Union[int, Buffer]]) -> None: ...
    def query(self, handle: Union[int, Buffer]) -> Dict[str, Any]: ...
    def bank_addresses(self, handle: Union[int, Buffer]) -> List[int]: ...
    def bank_info(self, handle: Union[int, Buffer]) -> List[Dict[str, Any]]: ...
    @overload
    def locate(self, buffer: Union[int, Buffer], offset: int) -> Location: ...
    @overload
    def locate(self, buffer: Union[int, Buffer], offset: Sequence[int]) -> List[Location]: ...
    def lowest_occupied(self, device: int, group: str, bank: int) -> Optional[Tuple[int, int]]: ...
    def region_shrink(self, device: int, group: str, region: int, bytes: int, *,
                      end: str = "bottom") -> Dict[str, Any]: ...
    def region_reset(self, device: int, group: str, region: int, *,
                     ends: str = "both") -> Dict[str, Any]: ...
    def region_ranges(self, device: Optional[int] = None) -> List[Dict[str, Any]]: ...
    def subdev_define(self, name: str, device: int, group: str, banks: Iterable[int], *,
                      budget: int = ..., overlap: Iterable[str] = ...,
                      window: int = ...) -> None: ...
    def subdev_bind(self, name: str) -> None: ...
    def limits(self) -> List[Dict[str, Any]]: ...
    def peaks(self, device: Optional[int] = ...) -> List[Dict[str, Any]]: ...
    def reset_peaks(self, device: Optional[int] = ..., *,
                    session: Union[int, Literal["all"], None] = ...) -> None: ...
    def postmortems(self) -> List[Dict[str, Any]]: ...
    def postmortem(self, id: int, /) -> Dict[str, Any]: ...
    def set_limit(self, cgroup: str, device: int, max: int, *, group: str = ...) -> None: ...
    def clear_limit(self, cgroup: str, device: Optional[int] = ..., *,
                    group: Optional[str] = ...) -> None: ...
    def banks_on_cores(self, device: int, group: str, x: Iterable[int],
                       y: Iterable[int]) -> List[int]: ...
    # sub_devices entries carry window, window_start and window_allocated (0: no window).
    def dump(self, device: Optional[int] = ..., *, detailed: bool = ...) -> Dict[str, Any]: ...
    def plan(self, buffers: Iterable[PlanBuffer], budget_ms: int = ..., seed: int = ...,
             offsets: Optional[Sequence[int]] = ...) -> Plan: ...
    def load_model(self, model: Model, device: Optional[int] = ..., *, budget_ms: int = ...,
                   seed: int = ..., offsets: Optional[Mapping[str, int]] = ...,
                   page_size: Optional[int] = ...,
                   timeout: Optional[float] = ...) -> LoadedModel: ...
    def context(self, name: str) -> ContextManager[None]: ...
    def history(self, *, device: Optional[int] = ..., pid: int = ...,
                client: Optional[str] = ..., since: Optional[float] = ...,
                since_seq: int = ...) -> List[Dict[str, Any]]: ...
    #: the buffers of this session an admin freed, from the notices received so far
    def revoked(self) -> List[Dict[str, Any]]: ...

def record_stacks(enabled: bool = ...) -> None: ...

def connect(socket: Optional[_Path] = ..., name: Optional[str] = ..., *,
            timeout: Optional[float] = ...) -> Client: ...
