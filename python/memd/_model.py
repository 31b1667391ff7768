"""Models: a graph's tensors and ops, the lifetimes memd derives from them, and what a
daemon makes of a loaded model (LoadedModel, Instance).

The rules are libmemclient's (memclient_model_lifetimes), computed by the C extension:
op i runs at time i; an activation lives from the op that writes it to the last op that
reads it; an in-place op (reshape, view, ...) writes no new storage: its outputs are
aliases of its first input, which lives as long as they are used; weights and
placeholders (inputs, outputs, in-outs) have buffers of their own for the whole run.
"""
from __future__ import annotations

import importlib
import os
import re
from typing import Any, Dict, Iterable, List, NamedTuple, Optional, Sequence, Tuple

from . import _memd

ROLES = ("activation", "weight", "input", "output", "inout")
ROLE_ALIASES = {"constant": "weight"}
# Op types that are in place unless said otherwise (the YAML format's list).
INPLACE_TYPES = frozenset(("reshape", "view", "squeeze", "unsqueeze", "flatten", "expand_dims",
                           "bitcast"))
NAME_MAX = 48
_NAME_OK = re.compile(r"[A-Za-z0-9._-]")


class Tensor(NamedTuple):
    """One tensor of a model, with what memd derives for it."""
    name: str
    role: str                   # activation, weight, input, output, inout
    bytes: int                  # size (an alias: the bytes it views, at most its source's)
    lifetime: Tuple[int, int]   # storage lifetime [lower, upper) in op steps
    alias_of: Optional[str]     # the tensor holding its data, or None
    alignment: int = _memd.DEFAULT_ALIGNMENT
    shape: Optional[Tuple[int, ...]] = None
    dtype: Optional[str] = None


class Op(NamedTuple):
    """One op, in execution order (op i runs at time i)."""
    name: Optional[str]
    type: Optional[str]
    inputs: Tuple[str, ...]
    outputs: Tuple[str, ...]
    inplace: bool


def need_modules(names: Sequence[str], what: str, debian: str) -> Any:
    """Imports the modules names (the first is returned), else ImportError: what (a sentence
    start such as "memd.Model.from_onnx needs ...") and the Debian package to install."""
    try:
        mods = [importlib.import_module(n) for n in names]
    except ImportError as e:  # pragma: no cover - depends on the machine
        raise ImportError(f"{what} (Debian: apt-get install {debian})") from e
    return mods[0]


def model_name(text: str, default: str = "model") -> str:
    """A daemon-acceptable model name ([A-Za-z0-9._-], at most 48 bytes) made from text."""
    s = "".join(c if _NAME_OK.fullmatch(c) else "-" for c in str(text))
    s = re.sub(r"-+", "-", s).strip("-")[:NAME_MAX]
    return s or default


def graph_name(base: str, tensors: Iterable[Dict[str, Any]], ops: Iterable[Dict[str, Any]],
               default: str = "model") -> str:
    """An importer's default model name: base (the module's class, the file or the graph)
    and a short digest of the graph (every tensor's name, role and size, every op's type,
    inputs and outputs). Two graphs of one class (regnet_x_400mf and regnet_x_800mf are
    both a RegNet) get two names, as the daemon needs for two models; the same graph
    always gets the same name, so loads of it share one model."""
    import hashlib
    h = hashlib.blake2b(digest_size=4)
    for t in tensors:
        h.update(repr((t["name"], t.get("role"), t["bytes"])).encode())
    for o in ops:
        h.update(repr((o.get("type"), list(o["inputs"]), list(o["outputs"]))).encode())
    tag = h.hexdigest()
    return f"{model_name(base, default)[:NAME_MAX - len(tag) - 1]}-{tag}"


def _check_name(name: Any) -> str:
    if not isinstance(name, str):
        raise TypeError(f"model name must be a str, not {type(name).__name__}")
    if not 1 <= len(name.encode()) <= NAME_MAX or not all(_NAME_OK.fullmatch(c) for c in name):
        raise ValueError(f"model name {name!r}: 1..{NAME_MAX} characters from [A-Za-z0-9._-] "
                         f"(memd.model_name() makes one from any text)")
    return name


def model_error(message: str, op: Optional[int] = None,
                tensor: Optional[int] = None) -> Exception:
    """A memd.ModelError with its documented attributes."""
    e = _memd.ModelError(message)
    e.errno, e.message, e.op, e.tensor = 22, message, op, tensor  # EINVAL
    return e


def _role(r: Any, where: str) -> int:
    if isinstance(r, str):
        r = ROLE_ALIASES.get(r, r)
        if r in ROLES:
            return ROLES.index(r)
    raise ValueError(f"{where}: role {r!r} is not one of {', '.join(ROLES)}")


def _get(spec: Any, key: str, default: Any = None) -> Any:
    if isinstance(spec, dict):
        return spec.get(key, default)
    return getattr(spec, key, default)


class Model:
    """A model graph memd can plan and load.

    Model(name, tensors, ops, *, device=None, scope="dram", code_bytes=0)

    tensors: every tensor once, as dicts (or objects) with name, bytes, and optionally
    role ("activation" by default, "weight", "input", "output", "inout"), alignment
    (a power of two; 0: 64), shape and dtype (informational). ops: in execution order,
    with name, type, inputs and outputs (tensor names) and optionally inplace (default:
    True for reshape, view, squeeze, unsqueeze, flatten, expand_dims, bitcast).

    The graph is checked at once: a tensor read before any op writes it, written twice,
    a weight or input written, an in-place output larger than its source... raise
    memd.ModelError naming the op and tensor. Build one from a file or a framework with
    Model.from_yaml, Model.from_onnx, Model.from_torch.
    """

    def __init__(self, name: str, tensors: Iterable[Any], ops: Iterable[Any], *,
                 device: Optional[int] = None, scope: str = "dram", code_bytes: int = 0,
                 source: Optional[str] = None, page_size: Optional[int] = None):
        self.name = _check_name(name)
        if page_size is not None and (not isinstance(page_size, int) or
                                      isinstance(page_size, bool) or page_size < 0 or
                                      page_size & (page_size - 1)):
            raise ValueError(f"page_size must be None, 0 (one page) or a power of two, not "
                             f"{page_size!r}")
        #: the page load_model interleaves its buffers with; None: the device's default
        self.page_size = page_size
        if device is not None and (not isinstance(device, int) or isinstance(device, bool)
                                   or device < 0):
            raise ValueError(f"device must be a non-negative int or None, not {device!r}")
        if scope not in ("dram", "global", "sram", "l1"):
            raise ValueError(f"scope {scope!r}: a model lives in dram (global) or sram (l1)")
        if not isinstance(code_bytes, int) or isinstance(code_bytes, bool) or code_bytes < 0:
            raise ValueError(f"code_bytes must be a non-negative int, not {code_bytes!r}")
        self.device = device
        self.scope = {"global": "dram", "l1": "sram"}.get(scope, scope)
        self.code_bytes = code_bytes
        self.source = source
        specs: List[Tuple[str, int, int, int]] = []
        extra: List[Tuple[Any, Any]] = []
        index: Dict[str, int] = {}
        for i, t in enumerate(tensors):
            name_i = _get(t, "name")
            if not isinstance(name_i, str) or not name_i:
                raise ValueError(f"tensor #{i}: needs a name (a non-empty str)")
            if name_i in index:
                raise model_error(f"tensor '{name_i}' is declared twice (#{index[name_i]} "
                                  f"and #{i})", tensor=i)
            index[name_i] = i
            role = _role(_get(t, "role", "activation") or "activation", f"tensor '{name_i}'")
            size = _get(t, "bytes")
            align = _get(t, "alignment", 0) or 0
            specs.append((name_i, role, size, align))
            shape = _get(t, "shape")
            extra.append((tuple(shape) if shape is not None else None, _get(t, "dtype")))
        op_specs: List[Tuple[Optional[str], List[int], List[int], bool]] = []
        ops_out: List[Op] = []
        for k, o in enumerate(ops):
            oname, otype = _get(o, "name"), _get(o, "type")
            where = f"op '{oname}' (#{k})" if oname else f"op #{k}"
            lists = []
            for key in ("inputs", "outputs"):
                names = _get(o, key) or ()
                if isinstance(names, str):
                    raise TypeError(f"{where}: {key} must be a list of tensor names")
                idx = []
                for tn in names:
                    if tn not in index:
                        raise model_error(f"{where}: {key[:-1]} '{tn}' is not a tensor of "
                                          f"the model", op=k)
                    idx.append(index[tn])
                lists.append(idx)
            inplace = _get(o, "inplace")
            if inplace is None:
                inplace = isinstance(otype, str) and otype.lower() in INPLACE_TYPES
            op_specs.append((oname, lists[0], lists[1], bool(inplace)))
            ops_out.append(Op(oname, otype, tuple(specs[i][0] for i in lists[0]),
                              tuple(specs[i][0] for i in lists[1]), bool(inplace)))
        life = _memd.model_lifetimes(specs, op_specs)
        self._specs = specs
        self._op_specs = op_specs
        self._life = life
        self.ops: List[Op] = ops_out
        self.tensors: List[Tensor] = [
            Tensor(s[0], ROLES[s[1]], lf[0], (lf[2], lf[3]),
                   specs[lf[4]][0] if lf[4] is not None else None, lf[1], ex[0], ex[1])
            for s, lf, ex in zip(specs, life, extra)]
        self._index = index

    # ---- constructors -------------------------------------------------------------------

    @classmethod
    def from_yaml(cls, path: "os.PathLike[str] | str") -> "Model":
        """Reads a model description in memd's YAML format (README, "Models") with memd's
        own parser. Errors are memd.ModelError with file:line:column."""
        return cls._from_yaml_dict(_memd.model_read_yaml(os.fspath(path)), os.fspath(path))

    @classmethod
    def from_yaml_string(cls, text: str, name: str = "<string>") -> "Model":
        """The same, from a str."""
        return cls._from_yaml_dict(_memd.model_parse_yaml(text, name), name)

    @classmethod
    def _from_yaml_dict(cls, d: Dict[str, Any], source: str) -> "Model":
        tensors = [dict(name=t[0], role=ROLES[t[1]], bytes=t[2], alignment=t[3], dtype=t[4],
                        shape=t[5]) for t in d["tensors"]]
        names = [t[0] for t in d["tensors"]]
        ops = [dict(name=o[0], inputs=[names[i] for i in o[1]], outputs=[names[i] for i in o[2]],
                    inplace=o[3]) for o in d["ops"]]
        return cls(d["name"], tensors, ops, device=d["device"], scope=d["scope"],
                   code_bytes=d["code"], source=source, page_size=d["page_size"])

    @classmethod
    def from_onnx(cls, model: Any, *, dims: Optional[Dict[str, int]] = None,
                  name: Optional[str] = None) -> "Model":
        """Imports an ONNX model (a path, bytes or an onnx.ModelProto): shape inference
        gives every value's size; initializers and Constant nodes are weights, graph
        inputs and outputs placeholders, every other value an activation living from its
        producer to its last consumer; Reshape, Flatten, Squeeze, Unsqueeze and Identity
        are aliases. Dynamic dimensions must be bound: dims={"batch": 8}; shape
        computations (Shape, Gather, Concat, Slice, Div... feeding Reshape targets) are
        folded once they are known. name: default the file's (or the graph's) name plus
        a digest of the graph (graph_name)."""
        from .onnx_import import import_onnx
        return cls(**import_onnx(model, dims=dims, name=name))

    @classmethod
    def from_torch(cls, module: Any, example_inputs: Any, *, training: bool = False,
                   tracer: str = "auto", name: Optional[str] = None) -> "Model":
        """Imports a torch.nn.Module, run on example_inputs (a tensor or a tuple of them).

        tracer "fx": torch.fx symbolic tracing, then a run on the example inputs that
        records every value's shape and dtype (shape propagation) and which outputs
        share storage with an input (views, in-place ops: aliases). "aten": make_fx
        (ATen ops) for modules symbolic tracing cannot follow. "auto": fx, else aten.
        training=True: the forward + backward graph from functorch's AOT autograd
        (gradients are outputs, the output's gradient an input). Parameters and buffers
        are weights. name: default the module's class name plus a digest of the graph
        (graph_name), so two sizes of one family get two names."""
        from .torch_import import import_torch
        return cls(**import_torch(module, example_inputs, training=training, tracer=tracer,
                                  name=name))

    # ---- what memd derives ---------------------------------------------------------------

    def tensor(self, name: str) -> Tensor:
        """The tensor of that name (KeyError if none)."""
        return self.tensors[self._index[name]]

    def problem(self) -> List[Tuple[int, int, int, int]]:
        """The plan problem memd solves for this model: (lower, upper, size, alignment) of
        every activation that holds data (aliases have none), in tensor order."""
        return [(t.lifetime[0], t.lifetime[1], t.bytes, t.alignment) for t in self.tensors
                if t.role == "activation" and t.alias_of is None]

    def problem_tensors(self) -> List[str]:
        """The names of problem()'s buffers, in the same order."""
        return [t.name for t in self.tensors if t.role == "activation" and t.alias_of is None]

    def plan(self, budget_ms: int = 1000, seed: int = 0) -> "Any":
        """Plans the activations offline (no daemon): a memd.Plan whose .tensors maps every
        activation (aliases too) to its offset in the arena."""
        from . import plan as _plan
        p = _plan(self.problem(), budget_ms=budget_ms, seed=seed)
        p.tensors = self._offsets_by_name(p.offsets)
        return p

    def _offsets_by_name(self, offsets: Sequence[int]) -> Dict[str, int]:
        own = dict(zip(self.problem_tensors(), offsets))
        out = {}
        for t in self.tensors:
            src = t.alias_of or t.name
            if src in own:
                out[t.name] = own[src]
        return out

    def lower_bound(self) -> int:
        """No plan of the activations can use fewer bytes."""
        return _memd.plan_lower_bound(self.problem())

    @property
    def weight_bytes(self) -> int:
        """Bytes of every weight (the model's shared constants, before alignment)."""
        return sum(t.bytes for t in self.tensors if t.role == "weight")

    @property
    def activation_bytes(self) -> int:
        """Bytes of every activation that holds data: the arena with no reuse at all."""
        return sum(b[2] for b in self.problem())

    @property
    def placeholder_bytes(self) -> int:
        """Bytes of the inputs, outputs and in-outs that hold data (one buffer each per
        instance)."""
        return sum(t.bytes for t in self.tensors
                   if t.role in ("input", "output", "inout") and t.alias_of is None)

    def summary(self) -> Dict[str, int]:
        """Counts and sizes: tensors, ops, weights, activations (planned buffers), aliases,
        weight_bytes, activation_bytes, placeholder_bytes, lower_bound."""
        return dict(tensors=len(self.tensors), ops=len(self.ops),
                    weights=sum(t.role == "weight" for t in self.tensors),
                    activations=len(self.problem()),
                    aliases=sum(t.alias_of is not None for t in self.tensors),
                    weight_bytes=self.weight_bytes, activation_bytes=self.activation_bytes,
                    placeholder_bytes=self.placeholder_bytes, lower_bound=self.lower_bound())

    # ---- YAML ----------------------------------------------------------------------------

    def to_yaml(self, path: "Optional[os.PathLike[str] | str]" = None) -> str:
        """The model in memd's YAML format (what `memctl model check/load` read); written to
        path too when given. Sizes are exact bytes; every op says whether it is in place."""
        q = _yaml_str
        lines = [f"# memd model description{f' imported from {self.source}' if self.source else ''}",
                 f"model: {q(self.name)}"]
        if self.device is not None:
            lines.append(f"device: {self.device}")
        lines.append(f"scope: {self.scope}")
        if self.code_bytes:
            lines.append(f"code: {self.code_bytes}")
        if self.page_size is not None:
            lines.append(f"page_size: {self.page_size}")
        lines.append("tensors:")
        for t in self.tensors:
            role = "" if t.role == "activation" else f", role: {t.role}"
            align = "" if t.alignment == _memd.DEFAULT_ALIGNMENT else f", align: {t.alignment}"
            lines.append(f"  - {{name: {q(t.name)}{role}, size: {t.bytes}{align}}}")
        lines.append("ops:" if self.ops else "ops: []")
        for o in self.ops:
            name = f"name: {q(o.name)}, " if o.name else ""
            typ = f"type: {q(o.type)}, " if o.type else ""
            ins = ", ".join(q(x) for x in o.inputs)
            outs = ", ".join(q(x) for x in o.outputs)
            lines.append(f"  - {{{name}{typ}inputs: [{ins}], outputs: [{outs}], "
                         f"inplace: {'true' if o.inplace else 'false'}}}")
        text = "\n".join(lines) + "\n"
        if path is not None:
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
        return text

    def _load_args(self) -> Tuple[List[Any], List[Any]]:
        return self._specs, self._op_specs

    def __repr__(self) -> str:
        s = self.summary()
        return (f"<memd.Model {self.name!r}: {s['tensors']} tensors ({s['weights']} weights, "
                f"{s['activations']} planned activations, {s['aliases']} aliases), "
                f"{s['ops']} ops>")


def _yaml_str(s: str) -> str:
    """A YAML double-quoted scalar."""
    out = ['"']
    for c in s:
        o = ord(c)
        if c == '"' or c == "\\":
            out.append("\\" + c)
        elif o < 0x20 or o == 0x7f:
            out.append(f"\\x{o:02x}")
        else:
            out.append(c)
    out.append('"')
    return "".join(out)


def _shift(offset: Any, base: int) -> Any:
    """offset (an int or a sequence of ints) moved by base: the buffer's offsets of a
    tensor's."""
    return offset + base if isinstance(offset, int) else [o + base for o in offset]


class Location(NamedTuple):
    """Where one byte of a buffer is (Client.locate): bank id, address in the bank (the bank
    group's address map), absolute address (plus the bank's offset), the buffer's page
    holding it, and the bank's core as bank_info gives it: (x, y) logical and NOC
    coordinates, None when the device names none (tt-metal: the DRAM channel's core, or
    the L1 bank's worker)."""
    bank: int
    address: int
    absolute: int
    page: int
    core: Optional[Tuple[int, int]]
    noc: Optional[Tuple[int, int]]


class LoadedModel:
    """A model loaded into the daemon by Client.load_model(): its code and weights are
    allocated once per device and shared (reference counted) by every session that loads
    the same model; its plan gives each instance's arena. A context manager: leaving the
    block unloads it."""

    def __init__(self, client: Any, model: Model, info: Dict[str, Any],
                 tensors: List[Tuple[str, Optional[int], int, int]]):
        self.client = client
        self.model = model
        self.model_id: int = info["model_id"]
        self.name: str = info["name"]
        self.device: int = info["device"]
        self.arena: int = info["arena"]
        self.lower_bound: int = info["lower_bound"]
        self.plan_id: str = info["plan_id"]
        self.strategy: str = info["strategy"]
        self.plan_cached: bool = info["plan_cached"]
        self.plan_optimal: bool = info["plan_optimal"]
        self.created: bool = info["created"]
        self.users: int = info["users"]
        self.code_address: int = info["code_address"]
        self.code_bytes: int = info["code_bytes"]
        self.const_address: int = info["const_address"]
        self.const_bytes: int = info["const_bytes"]
        self.const_handle: int = info["const_handle"]
        #: the page its constants, arenas and placeholders interleave with (0: one page)
        self.page_size: int = info["page_size"]
        self.info = info
        #: weight name -> absolute address (in the model's shared constants buffer)
        self.weights: Dict[str, int] = {}
        #: activation name -> offset in an instance's arena (aliases: their source's)
        self.offsets: Dict[str, int] = {}
        for t, (role, alias_of, _size, value) in zip(model.tensors, tensors):
            src_role = model.tensor(t.alias_of).role if t.alias_of else t.role
            if src_role == "weight":
                self.weights[t.name] = value
            elif src_role == "activation":
                self.offsets[t.name] = value
        self.unloaded = False

    @property
    def gap(self) -> float:
        """(arena - lower_bound) / lower_bound: how far the plan is from the best possible."""
        return (self.arena - self.lower_bound) / self.lower_bound if self.lower_bound else 0.0

    def locate(self, tensor: str, offset: Any = 0) -> Any:
        """Where byte offset of weight `tensor` is in the shared constants buffer: (bank,
        address, ...) as Client.locate; a sequence of offsets gives a list in one go. For
        activations and placeholders, ask an Instance."""
        if tensor not in self.weights:
            raise KeyError(f"{tensor!r} is not a weight of model {self.name!r} (activations "
                           f"and placeholders: Instance.locate)")
        return self.client.locate(self.const_handle,
                                  _shift(offset, self.weights[tensor] - self.const_address))

    def create_instance(self) -> "Instance":
        """A new (or reused) instance: an arena sized by the plan and one buffer per input,
        output and in-out; Instance.tensors maps every tensor name to its address."""
        if self.unloaded:
            raise _memd.Error(f"model {self.name!r} is unloaded")
        info, addrs = self.client._instance_create(self.model_id, len(self.model.tensors))
        return Instance(self, info, addrs)

    def set_ready(self) -> None:
        """Says the weights are written: the loaders waiting in load_model() go on. Only
        the loader that got .created True may (memd.PermissionError otherwise); again is
        a no-op."""
        if self.unloaded:
            raise _memd.Error(f"model {self.name!r} is unloaded")
        self.client._model_set_ready(self.model_id)

    def unload(self, force: bool = False) -> None:
        """Releases this session's load of the model with all its instances (BusyError
        while an instance is in use, unless force). Idempotent."""
        if not self.unloaded:
            self.client._model_unload(self.model_id, force)
            self.unloaded = True

    def __enter__(self) -> "LoadedModel":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.unload(force=True)

    def __repr__(self) -> str:
        return (f"<memd.LoadedModel {self.name!r} id={self.model_id} device={self.device} "
                f"arena={self.arena} lower_bound={self.lower_bound} weights=0x"
                f"{self.const_address:x}+{self.const_bytes}{' unloaded' if self.unloaded else ''}>")


class Instance:
    """One inference in flight: .tensors maps every tensor name to its absolute address
    (activations inside the arena, aliases at their source, weights in the shared
    constants, placeholders in buffers of their own). A context manager: leaving the
    block releases it (kept on the session's free list for the next create_instance)."""

    def __init__(self, model: LoadedModel, info: Dict[str, Any], addrs: List[Tuple[int, int]]):
        self.model = model
        self.instance_id: int = info["instance_id"]
        self.arena_handle: int = info["arena_handle"]
        self.arena_address: int = info["arena_address"]
        self.arena_bytes: int = info["arena_bytes"]
        self.reused: bool = info["reused"]
        names = [t.name for t in model.model.tensors]
        self.tensors: Dict[str, int] = {n: a for n, (a, _h) in zip(names, addrs)}
        #: tensor name -> handle of the allocation holding it
        self.handles: Dict[str, int] = {n: h for n, (_a, h) in zip(names, addrs)}
        self.released = False

    def locate(self, tensor: str, offset: Any = 0) -> Any:
        """Where byte offset of `tensor` (any tensor of the model: weights, activations in
        the arena, placeholders) is: (bank, address, ...) as Client.locate; a sequence of
        offsets gives a list in one go."""
        if tensor not in self.tensors:
            raise KeyError(f"{tensor!r} is not a tensor of model {self.model.name!r}")
        handle = self.handles[tensor]
        if handle == self.model.const_handle:
            start = self.model.const_address
        elif handle == self.arena_handle:
            start = self.arena_address
        else:  # a placeholder: a buffer of its own
            start = self.tensors[tensor]
        return self.model.client.locate(handle, _shift(offset, self.tensors[tensor] - start))

    def release(self, free: bool = False) -> None:
        """Releases the instance: kept allocated for the next create_instance() unless
        free=True. Idempotent."""
        if not self.released:
            self.model.client._instance_release(self.instance_id, free)
            self.released = True

    def __enter__(self) -> "Instance":
        return self

    def __exit__(self, *exc: Any) -> None:
        if not self.model.unloaded:
            self.release()

    def __repr__(self) -> str:
        return (f"<memd.Instance {self.instance_id} of {self.model.name!r}: arena 0x"
                f"{self.arena_address:x}+{self.arena_bytes}{' released' if self.released else ''}>")
