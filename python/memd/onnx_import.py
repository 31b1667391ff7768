"""Importing ONNX models (Debian's python3-onnx) into memd models.

import_onnx(model, dims=None, name=None) returns the arguments of memd.Model:

- ONNX shape inference (strict) gives every value's element type and shape; sizes are
  element size x element count. A dimension that stays symbolic (a graph input's
  dim_param, or one inference cannot resolve) is an error naming the value and the
  dimension, unless dims={"batch": 8} binds it.
- Initializers and the outputs of Constant nodes are weights; graph inputs (that are not
  initializers) are inputs, graph outputs outputs (a graph input that is also an output
  is an in-out); every other value is an activation living from the node that produces
  it to the last node that reads it (values a subgraph of If/Loop/Scan reads count as
  read by that node).
- Reshape, Flatten, Squeeze, Unsqueeze and Identity are in place: their output is an
  alias of their data input, not a new buffer.
- Values with no elements hold nothing and are left out.
- Shape computations (Shape, Gather, Concat, Slice, arithmetic... on shapes that are
  known) are folded into constants before sizes are read, the way ONNX simplifiers do:
  exporters such as torch.onnx emit them for every `x.shape` a model reads, and ONNX's
  own inference leaves the values they feed (Pad amounts, Reshape targets) unknown.
  What they fold to is a (tiny) weight. dims= is bound in the declared types first, so
  a dynamic batch folds like a fixed one; folding repeats, one shape inference per
  round, until nothing more folds (_fold_shapes).
- The default name is the file's (else the graph's) name plus a digest of the graph.
"""
from __future__ import annotations

import os
from typing import Any, Dict, List, Optional, Set, Tuple

from ._model import graph_name, model_error, model_name, need_modules

# TensorProto.DataType -> bytes per element (STRING and UNDEFINED have none).
ELEM_BYTES = {1: 4, 2: 1, 3: 1, 4: 2, 5: 2, 6: 4, 7: 8, 9: 1, 10: 2, 11: 8, 12: 4, 13: 8,
              14: 8, 15: 16, 16: 2, 17: 1, 18: 1, 19: 1, 20: 1}
ELEM_NAMES = {0: "undefined", 1: "float", 2: "uint8", 3: "int8", 4: "uint16", 5: "int16",
              6: "int32", 7: "int64", 8: "string", 9: "bool", 10: "float16", 11: "double",
              12: "uint32", 13: "uint64", 14: "complex64", 15: "complex128", 16: "bfloat16"}
ALIAS_OPS = frozenset(("Reshape", "Flatten", "Squeeze", "Unsqueeze", "Identity"))


def _onnx():
    return need_modules(("onnx", "onnx.shape_inference"),
                        "memd.Model.from_onnx needs the onnx package", "python3-onnx")


def _load(model: Any) -> Tuple[Any, str]:
    onnx = _onnx()
    if isinstance(model, onnx.ModelProto):
        m = onnx.ModelProto()
        m.CopyFrom(model)
        return m, ""
    if isinstance(model, (bytes, bytearray)):
        data, source = _without_weight_data(bytes(model)), "<bytes>"
    elif isinstance(model, (str, os.PathLike)):
        source = os.fspath(model)
        with open(source, "rb") as f:  # FileNotFoundError etc. as they are
            data = _read(f)
    else:
        raise TypeError(f"from_onnx needs a path, bytes or an onnx.ModelProto, not "
                        f"{type(model).__name__}")
    m = onnx.ModelProto()
    try:
        m.ParseFromString(data)
    except Exception as e:  # protobuf's DecodeError, or worse on garbage
        raise model_error(f"{source}: not an ONNX model ({type(e).__name__}: {e})") from None
    if not m.HasField("graph") or not m.graph.node and not m.graph.output:
        raise model_error(f"{source}: not an ONNX model (no graph)")
    return m, source


def _varint(b: Any, i: int) -> Tuple[int, int]:
    v = shift = 0
    while True:
        c = b[i]
        i += 1
        v |= (c & 0x7F) << shift
        shift += 7
        if c < 0x80:
            return v, i


def _field(num: int, payload: Any) -> bytes:
    """A length-delimited protobuf field."""
    out, v = bytearray(), num << 3 | 2
    for x in (v, len(payload)):
        while x >= 0x80:
            out.append(x & 0x7F | 0x80)
            x >>= 7
        out.append(x)
    return bytes(out) + bytes(payload)


def _message(b: Any, keep: Any) -> bytes:
    """The protobuf message b with each field passed through keep(number, wire type,
    whole field, payload): what it returns (bytes) replaces the field."""
    out, i = [], 0
    while i < len(b):
        start, payload = i, None
        key, i = _varint(b, i)
        num, wire = key >> 3, key & 7
        if wire == 0:
            i = _varint(b, i)[1]
        elif wire in (1, 5):
            i += 8 if wire == 1 else 4
        elif wire == 2:
            n, i = _varint(b, i)
            payload, i = b[i:i + n], i + n
        else:
            raise ValueError(f"protobuf wire type {wire}")
        if i > len(b):
            raise ValueError("truncated")
        out.append(keep(num, wire, b[start:i], payload))
    return b"".join(out)


# Fields of onnx.proto: ModelProto.graph, GraphProto.initializer, TensorProto.raw_data.
MODEL_GRAPH, GRAPH_INITIALIZER, TENSOR_RAW_DATA = 7, 5, 9


def _without_weight_data(data: bytes) -> bytes:
    """The serialized model with the bytes of its large initializers left out (their
    names, types and dims stay): sizes need only those, and protobuf takes seconds to
    parse the hundreds of MiB of a VGG's weights. Tensors of up to FOLD_MAX elements
    keep their data (shape computations fold them). Bytes that do not scan as protobuf
    are returned as they are, for the parser to refuse with its own message."""
    big = FOLD_MAX * 16  # bytes: more than any tensor of FOLD_MAX elements holds

    def tensor(num: int, wire: int, whole: Any, payload: Any) -> bytes:
        return b"" if num == TENSOR_RAW_DATA and wire == 2 and len(payload) > big \
            else bytes(whole)

    def graph(num: int, wire: int, whole: Any, payload: Any) -> bytes:
        if num == GRAPH_INITIALIZER and wire == 2 and len(payload) > big:
            return _field(num, _message(payload, tensor))
        return bytes(whole)

    def model(num: int, wire: int, whole: Any, payload: Any) -> bytes:
        return _field(num, _message(payload, graph)) if num == MODEL_GRAPH and wire == 2 \
            else bytes(whole)
    try:
        return _message(memoryview(data), model)
    except (ValueError, IndexError):
        return bytes(data)


def _read(f: Any) -> bytes:
    """A model file, mapped rather than read: the pages of the weights that
    _without_weight_data leaves out are never read from the disk."""
    import mmap
    try:
        mapped = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    except (ValueError, OSError):  # empty, or not a regular file
        return _without_weight_data(f.read())
    return _without_weight_data(mapped)


def _bind(graph: Any, dims: Dict[str, int], used: Set[str]) -> None:
    """Replaces every bound dim_param in the graph's declared types by its value."""
    for vi in list(graph.input) + list(graph.output) + list(graph.value_info):
        t = vi.type
        if not t.HasField("tensor_type") or not t.tensor_type.HasField("shape"):
            continue
        for d in t.tensor_type.shape.dim:
            if d.HasField("dim_param") and d.dim_param in dims:
                used.add(d.dim_param)
                d.dim_value = dims[d.dim_param]  # clears dim_param (a oneof)


def _check_inputs(graph: Any, inits: Set[str], source: str) -> None:
    for vi in graph.input:
        if vi.name in inits:
            continue
        t = vi.type
        if not t.HasField("tensor_type"):
            raise model_error(f"{source}: graph input '{vi.name}' is not a tensor")
        if not t.tensor_type.HasField("shape"):
            raise model_error(f"{source}: graph input '{vi.name}' has no shape")
        for axis, d in enumerate(t.tensor_type.shape.dim):
            if d.HasField("dim_value") and d.dim_value > 0:
                continue
            what = f"dynamic dimension '{d.dim_param}'" if d.HasField("dim_param") \
                else "a dimension of unknown size"
            key = d.dim_param or "NAME"
            raise model_error(f"{source}: graph input '{vi.name}' has {what} (axis {axis}): "
                              f"bind it with dims={{'{key}': N}}")


def _subgraph_reads(node: Any) -> List[str]:
    """Outer values the subgraphs of node (If, Loop, Scan) read."""
    out: List[str] = []
    for a in node.attribute:
        graphs = list(a.graphs) + ([a.g] if a.HasField("g") else [])
        for g in graphs:
            defined = {i.name for i in g.input} | {i.name for i in g.initializer}
            for n in g.node:
                for x in list(n.input) + _subgraph_reads(n):
                    if x and x not in defined:
                        out.append(x)
                defined.update(o for o in n.output if o)
    return out


FOLD_MAX = 4096  # elements: only shape-sized values are folded


def _attr(node: Any, name: str, default: Any = None) -> Any:
    from onnx import helper
    for a in node.attribute:
        if a.name == name:
            return helper.get_attribute_value(a)
    return default


def _eval(node: Any, ins: List[Any]) -> Optional[List[Any]]:
    """node's outputs from constant inputs with numpy, or None for an op not folded."""
    import numpy as np
    from onnx import numpy_helper
    from onnx.mapping import TENSOR_TYPE_TO_NP_TYPE
    op = node.op_type
    a = ins[0] if ins else None

    def axes_of(k: int) -> Optional[List[int]]:
        if len(ins) > k and ins[k] is not None:
            return [int(x) for x in ins[k].reshape(-1)]
        v = _attr(node, "axes")
        return list(v) if v is not None else None
    if op == "Identity":
        return [a]
    if op == "Cast":
        return [a.astype(TENSOR_TYPE_TO_NP_TYPE[_attr(node, "to")])]
    if op == "Gather":
        return [np.take(a, ins[1].astype(np.int64), axis=_attr(node, "axis", 0))]
    if op == "Unsqueeze":
        out = a
        axes = axes_of(1) or []
        rank = a.ndim + len(axes)
        for ax in sorted(x % rank for x in axes):
            out = np.expand_dims(out, ax)
        return [out]
    if op == "Squeeze":
        axes = axes_of(1)
        return [np.squeeze(a, axis=tuple(axes)) if axes else np.squeeze(a)]
    if op == "Concat":
        return [np.concatenate([x for x in ins], axis=_attr(node, "axis"))]
    if op == "Slice":
        starts, ends = ins[1].reshape(-1), ins[2].reshape(-1)
        axes = ins[3].reshape(-1) if len(ins) > 3 and ins[3] is not None else range(len(starts))
        steps = ins[4].reshape(-1) if len(ins) > 4 and ins[4] is not None else [1] * len(starts)
        sl = [slice(None)] * a.ndim
        for st, en, ax, sp in zip(starts, ends, axes, steps):
            sl[int(ax)] = slice(int(st), int(en), int(sp))
        return [a[tuple(sl)]]
    if op == "Reshape":
        shape = [int(x) for x in ins[1]]
        if not _attr(node, "allowzero", 0):
            shape = [a.shape[i] if x == 0 else x for i, x in enumerate(shape)]
        return [a.reshape(shape)]
    if op in ("Add", "Sub", "Mul", "Div", "Mod", "Pow", "Max", "Min", "Equal", "Less",
              "Greater", "LessOrEqual", "GreaterOrEqual", "And", "Or", "Xor"):
        b = ins[1]
        if op == "Div" and np.issubdtype(a.dtype, np.integer):
            r = np.trunc(a / b).astype(a.dtype)  # ONNX integer division truncates
        elif op == "Mod":
            r = np.fmod(a, b) if _attr(node, "fmod", 0) else np.mod(a, b)
        elif op in ("Max", "Min"):
            r = ins[0]
            for x in ins[1:]:
                r = np.maximum(r, x) if op == "Max" else np.minimum(r, x)
        else:
            f = {"Add": np.add, "Sub": np.subtract, "Mul": np.multiply, "Div": np.divide,
                 "Pow": np.power, "Equal": np.equal, "Less": np.less,
                 "Greater": np.greater, "LessOrEqual": np.less_equal,
                 "GreaterOrEqual": np.greater_equal, "And": np.logical_and,
                 "Or": np.logical_or, "Xor": np.logical_xor}[op]
            r = f(a, b)
        if op in ("Add", "Sub", "Mul", "Div", "Mod", "Pow", "Max", "Min"):
            r = np.asarray(r).astype(a.dtype)
        return [np.asarray(r)]
    if op in ("Neg", "Abs", "Not", "Floor", "Ceil", "Sqrt", "Sign", "Reciprocal"):
        f = {"Neg": np.negative, "Abs": np.abs, "Not": np.logical_not, "Floor": np.floor,
             "Ceil": np.ceil, "Sqrt": np.sqrt, "Sign": np.sign, "Reciprocal": np.reciprocal}[op]
        return [np.asarray(f(a)).astype(a.dtype)]
    if op == "Transpose":
        perm = _attr(node, "perm")
        return [np.transpose(a, perm)]
    if op == "Flatten":
        ax = _attr(node, "axis", 1) % max(a.ndim, 1)
        return [a.reshape(int(np.prod(a.shape[:ax], dtype=np.int64)), -1)]
    if op == "Tile":
        return [np.tile(a, [int(x) for x in ins[1]])]
    if op == "Where":
        return [np.where(ins[0], ins[1], ins[2])]
    if op == "Range":
        return [np.arange(a.item(), ins[1].item(), ins[2].item()).astype(a.dtype)]
    if op == "ConstantOfShape":
        v = _attr(node, "value")
        fill = numpy_helper.to_array(v) if v is not None else np.zeros(1, np.float32)
        return [np.full([int(x) for x in a], fill.reshape(-1)[0], dtype=fill.dtype)]
    if op == "Expand":
        return [a * np.ones([int(x) for x in ins[1]], dtype=a.dtype)]
    if op in ("ReduceProd", "ReduceSum", "ReduceMax", "ReduceMin"):
        axes = axes_of(1)
        f = {"ReduceProd": np.prod, "ReduceSum": np.sum, "ReduceMax": np.max,
             "ReduceMin": np.min}[op]
        return [np.asarray(f(a, axis=tuple(axes) if axes else None,
                             keepdims=bool(_attr(node, "keepdims", 1)))).astype(a.dtype)]
    return None


def _weights_to_inputs(m: Any) -> None:
    """Turns every initializer too large to be a shape into a typed graph input of the
    same name, type and dims: sizes need only those, while the checker and shape
    inference serialise the whole model each time they run (hundreds of MiB for a VGG).
    The caller remembers which names were initializers."""
    from onnx import helper
    g = m.graph
    declared = {i.name for i in g.input}
    keep, moved = [], []
    for t in g.initializer:
        n = 1
        for d in t.dims:
            n *= d
        (moved if n > FOLD_MAX else keep).append(t)
    if not moved:
        return
    for t in moved:
        if t.name not in declared:  # IR < 4 models list initializers as inputs too
            g.input.append(helper.make_tensor_value_info(t.name, t.data_type, list(t.dims)))
    del g.initializer[:]
    g.initializer.extend(keep)


def _dims_of(vi: Any) -> Optional[List[int]]:
    """A value's dims when inference knows them all, else None."""
    tt = vi.type.tensor_type
    if not vi.type.HasField("tensor_type") or not tt.HasField("shape"):
        return None
    dims = [d.dim_value if d.HasField("dim_value") else None for d in tt.shape.dim]
    return None if None in dims else dims


def _fold_shapes(m: Any, label: str) -> Any:
    """Folds shape computations into initializers until nothing more folds.

    Each round runs ONNX's shape inference once, then folds in topological order every
    node whose inputs are known, so a chain of Shape, Gather, Concat... folds in one
    round. A round ends where a shape needs inference again (ShuffleNet: the Shape of
    each block's input depends on the previous block's folded Reshape target, through
    convolutions), so rounds are as many as such steps. What is known carries over, and
    nodes that read a value that can never be known (an activation, a large weight) are
    set aside once: a round costs one inference and a scan of the nodes that may fold."""
    import numpy as np
    onnx = _onnx()
    from onnx import numpy_helper
    known: Dict[str, Any] = {}
    for init in m.graph.initializer:
        if np.prod(list(init.dims), dtype=np.int64) <= FOLD_MAX:
            known[init.name] = numpy_helper.to_array(init)
    outputs = {o.name for o in m.graph.output}
    never: Set[str] = {i.name for i in m.graph.input}  # values no fold can compute
    while True:
        try:
            m = onnx.shape_inference.infer_shapes(m, strict_mode=True, data_prop=True)
        except Exception as e:  # InferenceError, ValidationError, RuntimeError...
            raise model_error(f"{label}: ONNX shape inference failed: {e}") from None
        g = m.graph
        infos = {vi.name: vi for vi in list(g.value_info) + list(g.input) + list(g.output)}
        folded: List[int] = []
        for k, node in enumerate(g.node):
            first = node.output[0] if node.output else ""
            if not first or first in never or first in known:
                continue  # settled in an earlier round (a Constant's value is known)
            outs = [o for o in node.output if o]
            op = node.op_type
            vals = None
            if node.domain not in ("", "ai.onnx") or any(o in outputs for o in outs):
                pass
            elif op == "Constant":
                v = _attr(node, "value")
                if v is not None and np.prod(list(v.dims), dtype=np.int64) <= FOLD_MAX:
                    known[outs[0]] = numpy_helper.to_array(v)
                continue  # read where it is; stays a node
            elif op in ("Shape", "Size"):
                x = node.input[0]  # a folded value's shape is its own; else inference's
                dims = list(known[x].shape) if x in known else \
                    _dims_of(infos[x]) if x in infos else None
                if dims is None:
                    continue  # perhaps after the next inference
                if op == "Size":
                    vals = [np.array(int(np.prod(dims, dtype=np.int64)), dtype=np.int64)]
                else:
                    st, en = _attr(node, "start", 0), _attr(node, "end", None)
                    vals = [np.array(dims[st:en], dtype=np.int64)]
            elif any(x in never for x in node.input if x):
                pass
            elif all(not x or x in known for x in node.input):
                try:
                    vals = _eval(node, [known.get(x) if x else None for x in node.input])
                except Exception:
                    vals = None  # not folded: inference has its say
                if vals is None or any(v is None or np.asarray(v).size > FOLD_MAX
                                       for v in vals):
                    vals = None
            else:
                continue  # an input may become known in a later round
            if vals is None:
                never.update(outs)
                continue
            for o, v in zip(node.output, vals):
                known[o] = np.asarray(v)
            folded.append(k)
        if not folded:
            return m
        names = set()
        for k in reversed(folded):
            names.update(o for o in g.node[k].output if o)
            del g.node[k]
        g.initializer.extend(numpy_helper.from_array(known[o], o) for o in names)
        for k in reversed(range(len(g.value_info))):
            if g.value_info[k].name in names:
                del g.value_info[k]


def _isolated(fn: Any, *args: Any) -> Any:
    """fn(*args) in a forked child: ONNX's C++ shape inference trusts its input and can
    crash the process on a damaged model (a Conv whose input has too few dimensions,
    ...); a crash becomes a ModelError here. The result (or the error) comes back
    pickled through a pipe."""
    import pickle
    import signal
    if not hasattr(os, "fork"):  # pragma: no cover - not on Linux
        return fn(*args)
    rfd, wfd = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns
        code = 0
        try:
            import faulthandler
            faulthandler.disable()  # a crash here is reported by the parent, once
            os.close(rfd)
            try:
                out = ("ok", fn(*args))
            except _memd_error() as e:
                out = ("err", str(e))
            except Exception as e:  # onnx, protobuf or numpy on a damaged model
                out = ("err", f"{args[1]}: not a valid ONNX model ({type(e).__name__}: {e})")
            data = pickle.dumps(out)
            view = memoryview(data)
            while view:
                view = view[os.write(wfd, view):]
        except BaseException:
            code = 1
        finally:
            os._exit(code)
    os.close(wfd)
    chunks = []
    with os.fdopen(rfd, "rb") as r:
        while True:
            b = r.read(1 << 20)
            if not b:
                break
            chunks.append(b)
    _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        raise model_error(f"{args[1] if len(args) > 1 else 'the model'}: ONNX shape inference "
                          f"crashed ({signal.Signals(sig).name}): the model is malformed")
    if not chunks:
        raise model_error(f"the ONNX importer's worker exited with status "
                          f"{os.WEXITSTATUS(status)} and no result")
    out = pickle.loads(b"".join(chunks))
    if out[0] == "ok":
        return out[1]
    raise model_error(out[1])


def _memd_error() -> Any:
    from . import _memd
    return _memd.Error


def import_onnx(model: Any, dims: Optional[Dict[str, int]] = None,
                name: Optional[str] = None) -> Dict[str, Any]:
    _onnx()
    m, source = _load(model)
    label = source or m.graph.name or "<model>"
    dims = dict(dims or {})
    for k, v in dims.items():
        if not isinstance(k, str) or not isinstance(v, int) or isinstance(v, bool) or v <= 0:
            raise ValueError(f"dims: {k!r}: {v!r} (names map to positive ints)")
    return _isolated(_import, m, label, source, dims, name)


def _import(m: Any, label: str, source: str, dims: Dict[str, int],
            name: Optional[str]) -> Dict[str, Any]:
    """The import proper (in a child process: see _isolated)."""
    onnx = _onnx()
    graph = m.graph
    inits = {t.name for t in graph.initializer} | {t.values.name for t in
                                                   graph.sparse_initializer}
    used: Set[str] = set()
    _bind(graph, dims, used)
    unused = sorted(set(dims) - used)
    if unused:
        raise ValueError(f"dims: {unused[0]!r} is not a dimension of any input or output of "
                         f"{label}")
    _check_inputs(graph, inits, label)
    weight_names = [t.name for t in graph.initializer] + [t.values.name for t in
                                                          graph.sparse_initializer]
    _weights_to_inputs(m)
    # ONNX's checker refuses what is not a well-formed model (unknown ops, bad tensors)
    # with a clear message, before shape inference sees it.
    try:
        onnx.checker.check_model(m)
    except Exception as e:  # ValidationError, or worse on garbage
        raise model_error(f"{label}: not a valid ONNX model: {str(e).strip().splitlines()[0]}"
                          ) from None
    m = _fold_shapes(m, label)
    graph = m.graph
    known_weights = set(weight_names)  # and the shape computations folded into constants:
    weight_names += [t.name for t in graph.initializer if t.name not in known_weights]

    # Every value's (element type, dims) from what inference and the file declare.
    types: Dict[str, Tuple[int, List[Any]]] = {}
    for vi in list(graph.value_info) + list(graph.input) + list(graph.output):
        t = vi.type
        if t.HasField("tensor_type") and t.tensor_type.HasField("shape"):
            types[vi.name] = (t.tensor_type.elem_type, list(t.tensor_type.shape.dim))
        elif t.HasField("tensor_type") and vi.name not in types:
            types[vi.name] = (t.tensor_type.elem_type, None)
        elif vi.name not in types:
            types[vi.name] = (-1, None)  # a sequence, map or optional
    for init in graph.initializer:
        types[init.name] = (init.data_type, list(init.dims))
    for sp in graph.sparse_initializer:
        types[sp.values.name] = (sp.values.data_type, list(sp.dims))

    producer: Dict[str, str] = {}
    for k, node in enumerate(graph.node):
        for o in node.output:
            if o:
                producer[o] = f"node '{node.name or node.op_type + '_' + str(k)}' ({node.op_type})"

    def nbytes(value: str) -> int:
        if value not in types:
            raise model_error(f"{label}: value '{value}' ({producer.get(value, 'no producer')}) "
                              f"has no type after shape inference")
        elem, shape = types[value]
        where = producer.get(value, "a graph input or initializer")
        if elem == -1:
            raise model_error(f"{label}: value '{value}' ({where}) is not a tensor "
                              f"(sequences, maps and optionals are not supported)")
        if elem not in ELEM_BYTES:
            raise model_error(f"{label}: value '{value}' ({where}) has element type "
                              f"{ELEM_NAMES.get(elem, elem)}, which has no fixed size")
        if shape is None:
            raise model_error(f"{label}: value '{value}' ({where}) has no shape after shape "
                              f"inference")
        n = ELEM_BYTES[elem]
        for axis, d in enumerate(shape):
            if isinstance(d, int):
                v = d
            elif d.HasField("dim_value"):
                v = d.dim_value
            else:
                sym = f"'{d.dim_param}'" if d.HasField("dim_param") else "of unknown size"
                hint = f" (bind it: dims={{'{d.dim_param}': N}})" if d.HasField("dim_param") else ""
                raise model_error(f"{label}: value '{value}' ({where}) has dimension {sym} on "
                                  f"axis {axis} after shape inference{hint}")
            if v < 0:
                raise model_error(f"{label}: value '{value}' ({where}) has a negative dimension")
            n *= v
        return n

    tensors: List[Dict[str, Any]] = []
    index: Dict[str, int] = {}

    def declare(value: str, role: str) -> Optional[str]:
        if value in index:
            return value
        size = nbytes(value)
        if size == 0:
            return None  # no elements: holds nothing
        index[value] = len(tensors)
        tensors.append(dict(name=value, role=role, bytes=size))
        return value

    outputs = [o.name for o in graph.output]
    out_set = set(outputs)
    for vi in graph.input:
        if vi.name not in inits:
            declare(vi.name, "inout" if vi.name in out_set else "input")
    for w in weight_names:
        declare(w, "weight")

    ops: List[Dict[str, Any]] = []
    for k, node in enumerate(graph.node):
        op_name = node.name or f"{node.op_type}_{k}"
        if node.op_type == "Constant" and node.domain in ("", "ai.onnx") and not node.input:
            for o in node.output:
                if o:
                    declare(o, "output" if o in out_set else "weight")
            continue
        ins: List[str] = []
        for x in list(node.input) + _subgraph_reads(node):
            if not x or x in ins:
                continue  # an optional input left out, or read twice
            if x in index:
                ins.append(x)
            elif x not in producer and x not in types:
                raise model_error(f"{label}: node '{op_name}' ({node.op_type}) reads '{x}', "
                                  f"which no node produces and is neither a graph input nor "
                                  f"an initializer")
            elif nbytes(x) and x in producer:
                raise model_error(f"{label}: node '{op_name}' ({node.op_type}) reads '{x}' "
                                  f"before {producer[x]} produces it (nodes are not in "
                                  f"topological order)")
            elif nbytes(x):
                raise model_error(f"{label}: node '{op_name}' ({node.op_type}) reads '{x}', "
                                  f"which no node produces")
        outs = [declare(o, "output" if o in out_set else "activation")
                for o in node.output if o]
        outs = [o for o in outs if o]
        data = node.input[0] if node.input else ""
        inplace = (node.op_type in ALIAS_OPS and node.domain in ("", "ai.onnx")
                   and data in index and len(outs) == 1)
        if inplace:
            ins.remove(data)
            ins.insert(0, data)
        if not ins and not outs:
            continue
        ops.append(dict(name=op_name, type=node.op_type, inputs=ins, outputs=outs,
                        inplace=inplace))

    for o in outputs:
        if o not in index and nbytes(o):
            raise model_error(f"{label}: graph output '{o}' is produced by no node")
    # A weight that is also a graph output: copied into an output buffer of its own.
    for o in outputs:
        if o in index and tensors[index[o]]["role"] == "weight":
            copy = f"{o}:output"
            index[copy] = len(tensors)
            tensors.append(dict(name=copy, role="output", bytes=tensors[index[o]]["bytes"]))
            ops.append(dict(name=f"copy {o}", type="Identity", inputs=[o], outputs=[copy],
                            inplace=False))
    stem = os.path.splitext(os.path.basename(source))[0] if source and \
        not source.startswith("<") else ""
    base = stem or _text(m.graph.name)
    for t in tensors:
        t["name"] = _text(t["name"])
    for o in ops:
        o.update(name=_text(o["name"]), type=_text(o["type"]),
                 inputs=[_text(x) for x in o["inputs"]], outputs=[_text(x) for x in o["outputs"]])
    return dict(name=model_name(name) if name else graph_name(base, tensors, ops, "onnx-model"),
                tensors=tensors, ops=ops, source=source or None)


def _text(s: Any) -> str:
    """A name from the file: protobuf hands out bytes for strings that are not UTF-8."""
    return s.decode("utf-8", "replace") if isinstance(s, bytes) else s
