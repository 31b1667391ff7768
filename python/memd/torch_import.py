"""Importing PyTorch modules (Debian's python3-torch) into memd models.

import_torch(module, example_inputs, training=False, tracer="auto", name=None) returns
the arguments of memd.Model. A traced graph (a torch.fx GraphModule) is run once on the
example inputs by an fx Interpreter that records, for every node, the shape, dtype and
storage of each tensor it produces (shape propagation):

- a produced tensor that shares storage with a tensor the node reads (a view: view,
  reshape, flatten, permute, slicing, detach, expand...; or an in-place op: relu_,
  add_, ReLU(inplace=True)...) is an alias of it, made by an in-place op: no new buffer;
- parameters and buffers (get_attr nodes, the weights of leaf modules, the parameter
  placeholders of ATen graphs) are weights, named by their qualified name; tied
  parameters are one weight;
- the graph's placeholders are inputs, the tensors it returns outputs; every other tensor
  is an activation living from its node to the last node that reads it.

Tracers: "fx" is torch.fx symbolic tracing (torch.nn modules without submodules, and
MultiheadAttention, stay ops of their own; containers are traced through); "aten" is
make_fx over torch.nn.utils.stateless.functional_call (ATen ops, follows any Python
control flow because it traces one concrete run); "auto" tries fx and falls back to
aten. training=True traces the forward + backward graph with functorch's AOT autograd
(aot_function; the joint graph handed to the partitioner): parameters, buffers and the
example inputs are its primals, the output's gradient ("grad:output.N") an input, and
every gradient an output.
"""
from __future__ import annotations

import operator
from typing import Any, Callable, Dict, List, Optional, Tuple

from ._model import graph_name, model_error, model_name, need_modules

TRACERS = ("auto", "fx", "aten")


def _torch():
    return need_modules(("torch", "torch.fx"), "memd.Model.from_torch needs PyTorch",
                        "python3-torch")


def _storage_key(t: Any) -> Optional[int]:
    """The address of t's storage (views and in-place results share it), or None."""
    try:
        if t.is_meta or t.is_sparse or t.is_quantized:
            return None
        st = t.untyped_storage() if hasattr(t, "untyped_storage") else t.storage()
        p = st.data_ptr()
        return p or None
    except Exception:  # sparse, quantized or otherwise storage-less tensors
        return None


class _Builder:
    """The memd graph under construction."""

    def __init__(self, torch: Any):
        self.torch = torch
        self.tensors: List[Dict[str, Any]] = []
        self.index: Dict[str, int] = {}
        self.ops: List[Dict[str, Any]] = []
        self.names: Dict[Any, List[Optional[str]]] = {}  # fx node -> its tensors' names
        self.weight_ids: Dict[int, str] = {}  # id(parameter or buffer) -> weight name

    def unique(self, base: str) -> str:
        name, k = base, 1
        while name in self.index:
            k += 1
            name = f"{base}#{k}"
        return name

    def declare(self, name: str, role: str, t: Any, limit: Optional[int] = None) -> str:
        size = int(t.numel()) * int(t.element_size())
        if limit is not None:
            size = min(size, limit)
        self.index[name] = len(self.tensors)
        self.tensors.append(dict(name=name, role=role, bytes=size, shape=tuple(t.shape),
                                 dtype=str(t.dtype).replace("torch.", "")))
        return name

    def weight(self, t: Any, qualname: str) -> Optional[str]:
        if t.numel() == 0:
            return None
        key = id(t)
        if key not in self.weight_ids:
            self.weight_ids[key] = self.declare(self.unique(qualname), "weight", t)
        return self.weight_ids[key]

    def leaves(self, value: Any) -> List[Any]:
        from torch.utils._pytree import tree_flatten
        return tree_flatten(value)[0]

    def is_tensor(self, x: Any) -> bool:
        return isinstance(x, self.torch.Tensor)

    def op_node(self, n: Any, result: Any, inputs: List[Tuple[Any, str]], op_type: str) -> None:
        """A computing node: fresh outputs in one op, aliases in in-place ops."""
        by_storage: Dict[int, str] = {}
        readers: List[str] = []
        for v, nm in inputs:
            if nm not in readers:
                readers.append(nm)
            k = _storage_key(v)
            if k is not None:
                by_storage.setdefault(k, nm)
        leaves = self.leaves(result)
        tensor_leaves = [x for x in leaves if self.is_tensor(x)]
        single = len(tensor_leaves) == 1
        fresh: List[str] = []
        groups: Dict[str, List[str]] = {}
        names: List[Optional[str]] = []
        k = 0
        for x in leaves:
            if not self.is_tensor(x) or x.numel() == 0:
                names.append(None)
                continue
            base = n.name if single else f"{n.name}.{k}"
            k += 1
            key = _storage_key(x)
            src = by_storage.get(key) if key is not None else None
            if src is not None:
                nm = self.declare(self.unique(base), "activation", x,
                                  limit=self.tensors[self.index[src]]["bytes"])
                groups.setdefault(src, []).append(nm)
            else:
                nm = self.declare(self.unique(base), "activation", x)
                fresh.append(nm)
                if key is not None:
                    by_storage[key] = nm
            names.append(nm)
        self.names[n] = names
        if fresh or (not groups and readers):
            self.ops.append(dict(name=n.name, type=op_type, inputs=readers, outputs=fresh,
                                 inplace=False))
        for src, outs in groups.items():
            # The op's reads are the alias op's when there is no fresh output.
            extra = [] if fresh else [r for r in readers if r != src]
            self.ops.append(dict(name=n.name if not fresh and len(groups) == 1
                                 else f"{n.name}:{src}",
                                 type=op_type, inputs=[src] + extra, outputs=outs,
                                 inplace=True))

    def outputs(self, n: Any, result: Any, inputs: List[Tuple[Any, str]]) -> None:
        ids = {id(v): nm for v, nm in inputs}
        seen = set()
        for i, x in enumerate(self.leaves(result)):
            if not self.is_tensor(x) or x.numel() == 0:
                continue
            nm = ids.get(id(x))
            if nm is None:
                raise model_error(f"the graph returns a tensor (output {i}) that no node made")
            t = self.tensors[self.index[nm]]
            if t["role"] == "activation" and nm not in seen:
                t["role"] = "output"
            elif nm not in seen or t["role"] != "output":
                # An input or weight returned as it is, or a tensor returned twice: an
                # output of its own that aliases it.
                out = self.declare(self.unique(f"output.{i}"), "output", x)
                self.ops.append(dict(name=f"output.{i}", type="output", inputs=[nm],
                                     outputs=[out], inplace=True))
                nm = out
            seen.add(nm)


def _fx_trace(torch: Any, module: Any) -> Any:
    """torch.fx.symbolic_trace, with tuple unpacking of proxies (`n, c, h, w = x.shape`)
    working on Python 3.11 too: torch 1.13 finds the unpacking instruction by indexing
    the caller's bytecode with f_lasti // 2, which misses on 3.11 (inline caches), and
    then refuses to iterate. This tracer looks the instruction up by its offset."""
    import dis
    import inspect

    def proxy_iter(self: Any) -> Any:
        frame = inspect.currentframe()
        caller = frame.f_back if frame else None
        if caller is not None:
            for inst in dis.get_instructions(caller.f_code):
                if inst.offset == caller.f_lasti:
                    if inst.opname == "UNPACK_SEQUENCE":
                        return (self[i] for i in range(inst.argval))
                    break
        return self.tracer.iter(self)

    # Every proxy class (Attribute proxies of `x.shape` too) iterates through
    # Proxy.__iter__: replaced for the duration of this trace only.
    original = torch.fx.Proxy.__iter__
    torch.fx.Proxy.__iter__ = proxy_iter
    class Tracer(torch.fx.Tracer):
        # torch.nn modules stay single ops only when they hold no other module
        # (Conv2d, ReLU, LayerNorm...) or are MultiheadAttention (functional inside): a
        # container such as TransformerEncoderLayer is traced through, so its tensors
        # are seen (or, if its Python control flow cannot be traced, tracer "auto"
        # falls back to ATen).
        def is_leaf_module(self, m: Any, qualname: str) -> bool:
            if isinstance(m, torch.nn.MultiheadAttention):
                return True
            return super().is_leaf_module(m, qualname) and next(m.children(), None) is None

    try:
        tracer = Tracer()
        graph = tracer.trace(module)
    finally:
        torch.fx.Proxy.__iter__ = original
    name = module.__class__.__name__ if isinstance(module, torch.nn.Module) else module.__name__
    return torch.fx.GraphModule(tracer.root, graph, name)


def _run(torch: Any, gm: Any, args: List[Any], b: _Builder,
         placeholder: Callable[[int, Any, Any], Optional[str]]) -> None:
    """Runs gm on args, recording every node into b."""
    modules = dict(gm.named_modules())

    class Recorder(torch.fx.Interpreter):
        def __init__(self) -> None:
            super().__init__(gm, garbage_collect_values=True)
            self.k = 0

        def inputs(self, n: Any) -> List[Tuple[Any, str]]:
            pairs = []
            for a in n.all_input_nodes:
                vals = b.leaves(self.env[a])
                for v, nm in zip(vals, b.names.get(a, [])):
                    if nm is not None and b.is_tensor(v):
                        pairs.append((v, nm))
            return pairs

        def run_node(self, n: Any) -> Any:
            try:
                result = super().run_node(n)
            except Exception as e:
                raise model_error(f"node '{n.name}' ({n.op} {n.target}) failed on the example "
                                  f"inputs: {type(e).__name__}: {e}") from None
            if n.op == "placeholder":
                i = self.k
                self.k += 1
                b.names[n] = [placeholder(i, n, x) if b.is_tensor(x) and x.numel() else None
                              for x in b.leaves(result)]
            elif n.op == "get_attr":
                b.names[n] = [b.weight(x, str(n.target)) if b.is_tensor(x) else None
                              for x in b.leaves(result)]
            elif n.op == "output":
                b.outputs(n, result, self.inputs(n))
            elif n.op == "call_function" and n.target is operator.getitem and \
                    not b.is_tensor(self.env[n.args[0]]) and self._getitem(n, result):
                pass
            else:
                inputs = self.inputs(n)
                if n.op == "call_module":
                    mod = modules[n.target]
                    for pname, p in list(mod.named_parameters()) + list(mod.named_buffers()):
                        w = b.weight(p, f"{n.target}.{pname}")
                        if w is not None:
                            inputs.append((p, w))
                    op_type = type(mod).__name__
                elif n.op == "call_method":
                    op_type = str(n.target)
                else:
                    op_type = getattr(n.target, "__name__", None) or str(n.target)
                    if hasattr(n.target, "_schema"):
                        op_type = str(n.target)
                b.op_node(n, result, inputs, op_type)
            return result

        def _getitem(self, n: Any, result: Any) -> bool:
            """An element of a tuple another node made: the same tensors, no op."""
            src = n.args[0]
            ids = {id(v): nm for v, nm in zip(b.leaves(self.env[src]), b.names.get(src, []))}
            names = []
            for x in b.leaves(result):
                if not b.is_tensor(x):
                    names.append(None)
                elif id(x) in ids:
                    names.append(ids[id(x)])
                else:
                    return False
            b.names[n] = names
            return True

    with torch.no_grad():
        Recorder().run(*args, enable_io_processing=False)


def _inputs(torch: Any, example_inputs: Any) -> Tuple[Any, ...]:
    xs = (example_inputs,) if isinstance(example_inputs, torch.Tensor) else example_inputs
    if not isinstance(xs, (tuple, list)):
        raise TypeError(f"example_inputs must be a tensor or a tuple of tensors, not "
                        f"{type(example_inputs).__name__}")
    for i, x in enumerate(xs):
        if not isinstance(x, torch.Tensor):
            raise TypeError(f"example input {i} must be a tensor, not {type(x).__name__}")
    return tuple(xs)


def _named(module: Any) -> Tuple[Dict[str, Any], Dict[str, Any]]:
    return dict(module.named_parameters()), dict(module.named_buffers())


def import_torch(module: Any, example_inputs: Any, training: bool = False,
                 tracer: str = "auto", name: Optional[str] = None) -> Dict[str, Any]:
    torch = _torch()
    if not isinstance(module, torch.nn.Module):
        raise TypeError(f"from_torch needs a torch.nn.Module, not {type(module).__name__}")
    if tracer not in TRACERS:
        raise ValueError(f"tracer {tracer!r}: one of {', '.join(TRACERS)}")
    xs = _inputs(torch, example_inputs)
    b = _Builder(torch)
    cls = type(module).__name__
    params, buffers = _named(module)
    qualname = {id(t): qn for qn, t in list(params.items()) + list(buffers.items())}

    def input_name(i: int) -> str:
        return f"input.{i}" if len(xs) > 1 else "input"

    if training:
        gm, args, roles = _aot_joint(torch, module, params, buffers, xs)

        def placeholder(i: int, n: Any, x: Any) -> Optional[str]:
            kind, label = roles[i]
            if kind == "weight":
                return b.weight(x, label)
            return b.declare(b.unique(label), "input", x)
        how = "AOT autograd (forward + backward)"
    else:
        gm, args, how = None, None, ""
        if tracer in ("fx", "auto"):
            try:
                gm = _fx_trace(torch, module)
                args, how = list(xs), "torch.fx"
            except Exception as e:
                if tracer == "fx":
                    raise model_error(f"torch.fx cannot trace {cls}: {type(e).__name__}: "
                                      f"{str(e).splitlines()[0] if str(e) else ''} (tracer='aten' "
                                      f"traces one concrete run instead)") from None
        if gm is None:
            gm, args = _make_fx(torch, module, params, buffers, xs)
            how = "make_fx (ATen)"
        nparams = len(params) + len(buffers) if how.startswith("make_fx") else 0

        def placeholder(i: int, n: Any, x: Any) -> Optional[str]:
            if i < nparams:
                return b.weight(x, qualname.get(id(x), n.name))
            return b.declare(b.unique(input_name(i - nparams)), "input", x)
    if len(args) != sum(1 for n in gm.graph.nodes if n.op == "placeholder"):
        raise model_error(f"{cls}: the traced graph takes "
                          f"{sum(1 for n in gm.graph.nodes if n.op == 'placeholder')} inputs, "
                          f"{len(args)} given")

    # get_attr weights are named by their qualified names in the module.
    orig_weight = b.weight

    def weight(t: Any, label: str) -> Optional[str]:
        return orig_weight(t, qualname.get(id(t), label))
    b.weight = weight  # type: ignore[method-assign]
    _run(torch, gm, args, b, placeholder)
    base = cls.lower() + ("-train" if training else "")
    return dict(name=model_name(name, "torch-model") if name else
                graph_name(base, b.tensors, b.ops, "torch-model"),
                tensors=b.tensors, ops=b.ops, source=f"{cls} via {how}")


def _make_fx(torch: Any, module: Any, params: Dict[str, Any], buffers: Dict[str, Any],
             xs: Tuple[Any, ...]) -> Tuple[Any, List[Any]]:
    from torch.fx.experimental.proxy_tensor import make_fx
    from torch.nn.utils import stateless

    def f(p: Dict[str, Any], bufs: Dict[str, Any], *inputs: Any) -> Any:
        return stateless.functional_call(module, {**p, **bufs}, inputs)
    try:
        # With autograd on: inference fast paths (the fused TransformerEncoderLayer
        # kernel) would hide every tensor of the layer from the graph.
        gm = make_fx(f)(params, buffers, *xs)
    except Exception as e:
        raise model_error(f"make_fx cannot trace {type(module).__name__}: {type(e).__name__}: "
                          f"{e}") from None
    return gm, list(params.values()) + list(buffers.values()) + list(xs)


def _aot_joint(torch: Any, module: Any, params: Dict[str, Any], buffers: Dict[str, Any],
               xs: Tuple[Any, ...]) -> Tuple[Any, List[Any], List[Tuple[str, str]]]:
    """The joint forward + backward graph of module from functorch's AOT autograd."""
    try:
        from functorch.compile import aot_function, default_partition
    except ImportError as e:  # pragma: no cover - torch without functorch
        raise ImportError("training graphs need functorch's AOT autograd "
                          "(Debian's python3-torch ships it)") from e
    from torch.nn.utils import stateless
    captured: Dict[str, Any] = {}

    def partition(joint: Any, joint_inputs: Any, **kw: Any) -> Any:
        captured["graph"], captured["inputs"] = joint, joint_inputs
        return default_partition(joint, joint_inputs, **kw)

    def keep(gm: Any, _inputs: Any) -> Any:
        return gm

    def f(p: Dict[str, Any], bufs: Dict[str, Any], *inputs: Any) -> Any:
        return stateless.functional_call(module, {**p, **bufs}, inputs)
    if not any(p.requires_grad for p in params.values()) and \
            not any(x.requires_grad for x in xs):
        raise model_error(f"{type(module).__name__}: nothing requires grad: no backward graph")
    try:
        compiled = aot_function(f, fw_compiler=keep, bw_compiler=keep, partition_fn=partition)
        compiled(params, buffers, *xs)
    except Exception as e:
        raise model_error(f"AOT autograd cannot trace {type(module).__name__}: "
                          f"{type(e).__name__}: {e}") from None
    if "graph" not in captured:
        raise model_error(f"AOT autograd made no joint graph for {type(module).__name__} "
                          f"(does its output require grad?)")
    primals, tangents = captured["inputs"]
    roles: List[Tuple[str, str]] = []
    names = list(params) + list(buffers)
    for i in range(len(primals)):
        if i < len(names):
            roles.append(("weight", names[i]))
        else:
            k = i - len(names)
            roles.append(("input", f"input.{k}" if len(xs) > 1 else "input"))
    roles += [("input", f"grad:output.{i}") for i in range(len(tangents))]
    return captured["graph"], list(primals) + list(tangents), roles
