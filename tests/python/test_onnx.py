"""Model.from_onnx on hand-built graphs (onnx.helper), and memctl model import."""
import json
import os
import re
import subprocess

import pytest

import memd
from conftest import MEMCTL

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper  # noqa: E402

pytestmark = pytest.mark.onnx


def vi(name, dtype, shape):
    return helper.make_tensor_value_info(name, dtype, shape)


def init(name, dtype, dims):
    n = 1
    for d in dims:
        n *= d
    vals = [0] * n
    return helper.make_tensor(name, dtype, dims, vals)


def small_net(batch="N"):
    """x[N,3,8,8] -> Conv(w,b) -> Relu -> Reshape(shape) -> MatMul(fw) -> Add(fb) -> Identity -> y"""
    nodes = [
        helper.make_node("Conv", ["x", "w", "b"], ["c"], name="conv", pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c"], ["r"], name="relu"),
        helper.make_node("Constant", [], ["shape"], name="shape_const",
                         value=helper.make_tensor("sv", TensorProto.INT64, [2], [-1, 256])),
        helper.make_node("Reshape", ["r", "shape"], ["flat"], name="reshape"),
        helper.make_node("MatMul", ["flat", "fw"], ["mm"], name="fc"),
        helper.make_node("Add", ["mm", "fb"], ["logits"], name="bias"),
        helper.make_node("Identity", ["logits"], ["y"], name="out"),
    ]
    graph = helper.make_graph(
        nodes, "small-net", [vi("x", TensorProto.FLOAT, [batch, 3, 8, 8])],
        [vi("y", TensorProto.FLOAT, [batch, 10])],
        [init("w", TensorProto.FLOAT, [4, 3, 3, 3]), init("b", TensorProto.FLOAT, [4]),
         init("fw", TensorProto.FLOAT16, [256, 10]), init("fb", TensorProto.FLOAT16, [10])])
    # fp16 weights with fp32 activations would not type-check: make the tail fp16.
    graph.node.insert(4, helper.make_node("Cast", ["flat"], ["flat16"], name="cast", to=10))
    graph.node[5].input[0] = "flat16"
    graph.node.append(helper.make_node("Cast", ["y16"], ["y32"], name="cast_back", to=1))
    graph.node[-2].output[0] = "y16"
    graph.node[-1].output[0] = "y"
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def test_roles_sizes_aliases_and_lifetimes():
    m = memd.Model.from_onnx(small_net(), dims={"N": 2})
    t = {x.name: x for x in m.tensors}
    assert t["x"].role == "input" and t["x"].bytes == 2 * 3 * 8 * 8 * 4
    assert t["w"].role == "weight" and t["w"].bytes == 4 * 27 * 4
    assert t["fw"].bytes == 256 * 10 * 2  # float16
    assert t["shape"].role == "weight" and t["shape"].bytes == 16  # Constant: int64 x 2
    assert t["y"].role == "output" and t["y"].bytes == 2 * 10 * 4
    assert t["c"].role == "activation" and t["c"].bytes == 2 * 4 * 64 * 4
    assert t["flat"].alias_of == "r"  # Reshape: no new buffer
    assert t["y16"].alias_of == "logits"  # Identity
    assert m.tensor("r").lifetime == (1, 4)  # relu (op 1) .. cast (op 3) reads flat
    assert m.tensor("c").lifetime == (0, 2)
    ops = [o.name for o in m.ops]
    assert "shape_const" not in ops and ops[0] == "conv"
    assert [o.inplace for o in m.ops if o.name in ("reshape", "out")] == [True, True]
    p = m.plan(budget_ms=20)
    assert memd.validate(m.problem(), p.offsets) == p.arena
    assert re.fullmatch(r"small-net-[0-9a-f]{8}", m.name) and m.source is None


def test_dynamic_dimensions_need_a_binding(tmp_path):
    model = small_net()
    with pytest.raises(memd.ModelError) as e:
        memd.Model.from_onnx(model)
    assert "'N'" in str(e.value) and "dims=" in str(e.value) and "'x'" in str(e.value)
    with pytest.raises(ValueError):
        memd.Model.from_onnx(model, dims={"batch": 2})  # no such dimension
    with pytest.raises(ValueError):
        memd.Model.from_onnx(model, dims={"N": 0})
    fixed = memd.Model.from_onnx(small_net(batch=4))
    assert fixed.tensor("x").bytes == 4 * 3 * 8 * 8 * 4
    # from a file and from bytes: the same model
    path = tmp_path / "net.onnx"
    onnx.save(model, str(path))
    a = memd.Model.from_onnx(str(path), dims={"N": 3})
    b = memd.Model.from_onnx(path.read_bytes(), dims={"N": 3}, name="from-bytes")
    assert [x[:5] for x in a.tensors] == [x[:5] for x in b.tensors]
    assert re.fullmatch(r"net-[0-9a-f]{8}", a.name) and b.name == "from-bytes"
    assert model.graph.input[0].type.tensor_type.shape.dim[0].dim_param == "N"  # untouched


def shuffle_chain(blocks, batch="N"):
    """blocks x (Conv, then a channel shuffle the way torch.onnx exports ShuffleNetV2's:
    x.size() -> Shape, Gather, Div (channels // groups), Concat -> Reshape targets).
    ONNX's inference leaves each Reshape unsized (its data propagation stops at Div), and
    each block's Shape needs the previous block's output: one more fold round per block."""
    i64 = TensorProto.INT64
    nodes, inits, prev = [], [init("w", TensorProto.FLOAT, [4, 4, 1, 1])], "x"
    for name, vals in (("zero", [0]), ("two", [2]), ("four", [4]), ("eight", [8]),
                       ("sixty4", [64])):
        inits.append(helper.make_tensor(name, i64, [1], vals))
    inits.append(helper.make_tensor("two_s", i64, [], [2]))
    inits.append(helper.make_tensor("one_s", i64, [], [1]))
    inits.append(helper.make_tensor("zero_s", i64, [], [0]))
    for k in range(blocks):
        p = f"b{k}."
        nodes += [
            helper.make_node("Conv", [prev, "w"], [p + "c"], name=p + "conv"),
            helper.make_node("Shape", [p + "c"], [p + "s"], name=p + "shape"),
            helper.make_node("Gather", [p + "s", "zero_s"], [p + "n"], name=p + "n"),
            helper.make_node("Gather", [p + "s", "one_s"], [p + "ch"], name=p + "ch"),
            helper.make_node("Div", [p + "ch", "two_s"], [p + "half"], name=p + "div"),
            helper.make_node("Unsqueeze", [p + "n", "zero"], [p + "n1"], name=p + "un"),
            helper.make_node("Unsqueeze", [p + "half", "zero"], [p + "h1"], name=p + "uh"),
            helper.make_node("Concat", [p + "n1", "two", p + "h1", "sixty4"], [p + "t"],
                             name=p + "cat", axis=0),
            helper.make_node("Reshape", [p + "c", p + "t"], [p + "r"], name=p + "split"),
            helper.make_node("Concat", [p + "n1", "four", "eight", "eight"], [p + "t2"],
                             name=p + "cat2", axis=0),
            helper.make_node("Reshape", [p + "r", p + "t2"], [p + "o"], name=p + "merge"),
        ]
        prev = p + "o"
    nodes.append(helper.make_node("Relu", [prev], ["y"], name="out"))
    graph = helper.make_graph(nodes, "chain", [vi("x", TensorProto.FLOAT, [batch, 4, 8, 8])],
                              [vi("y", TensorProto.FLOAT, [batch, 4, 8, 8])], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def test_shape_subgraphs_fold_round_after_round():
    # 40 blocks: more rounds than any fixed cap would allow, each one inference.
    m = memd.Model.from_onnx(shuffle_chain(40), dims={"N": 3})
    t = {x.name: x for x in m.tensors}
    assert t["b39.r"].bytes == 3 * 2 * 2 * 64 * 4 and t["b39.r"].alias_of == "b39.c"
    assert t["y"].bytes == 3 * 4 * 8 * 8 * 4
    # The shape computations are gone from the ops (folded into tiny weights).
    assert not [o for o in m.ops if o.type in ("Shape", "Gather", "Div", "Concat")]
    assert [o.type for o in m.ops].count("Conv") == 40


def test_large_weights_are_not_parsed(tmp_path):
    # A 300 x 300 weight: its bytes stay out of what is parsed, its size does not.
    import numpy as np
    from onnx import numpy_helper
    from memd.onnx_import import _without_weight_data
    w = numpy_helper.from_array(np.ones((300, 300), np.float32), "w")
    g = helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["y"], name="mm")], "big",
                          [vi("x", TensorProto.FLOAT, ["N", 300])],
                          [vi("y", TensorProto.FLOAT, ["N", 300])], [w])
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    data = model.SerializeToString()
    small = _without_weight_data(data)
    assert len(data) > 360000 > 1000 > len(small)
    parsed = onnx.ModelProto()
    parsed.ParseFromString(small)
    assert list(parsed.graph.initializer[0].dims) == [300, 300]
    path = tmp_path / "big.onnx"
    path.write_bytes(data)
    got = [memd.Model.from_onnx(src, dims={"N": 2}, name="big") for src in (model, data, path)]
    assert got[0].tensor("w").bytes == 300 * 300 * 4
    assert [x[:5] for x in got[0].tensors] == [x[:5] for x in got[1].tensors] == \
        [x[:5] for x in got[2].tensors]
    assert _without_weight_data(b"\xff" * 10) == b"\xff" * 10  # not protobuf: as it is


def test_default_names_are_unique_per_graph():
    a, b = memd.Model.from_onnx(shuffle_chain(2), dims={"N": 1}), \
        memd.Model.from_onnx(shuffle_chain(3), dims={"N": 1})
    assert a.name.startswith("chain-") and b.name.startswith("chain-") and a.name != b.name
    assert memd.Model.from_onnx(shuffle_chain(2), dims={"N": 1}).name == a.name


def test_unknown_shapes_and_bad_files(tmp_path):
    # A value inference cannot size (NonZero: data-dependent length).
    g = helper.make_graph([helper.make_node("NonZero", ["x"], ["nz"], name="nonzero"),
                           helper.make_node("Transpose", ["nz"], ["y"], name="t")],
                          "dyn", [vi("x", TensorProto.FLOAT, [4, 4])],
                          [vi("y", TensorProto.INT64, ["n", 2])])
    with pytest.raises(memd.ModelError) as e:
        memd.Model.from_onnx(helper.make_model(g))
    assert "nz" in str(e.value) and "nonzero" in str(e.value)
    # Strings have no size.
    g = helper.make_graph([helper.make_node("Identity", ["s"], ["t"])], "str",
                          [vi("s", TensorProto.STRING, [2])], [vi("t", TensorProto.STRING, [2])])
    with pytest.raises(memd.ModelError) as e:
        memd.Model.from_onnx(helper.make_model(g))
    assert "string" in str(e.value)
    # Shape inference errors are ModelErrors, not crashes.
    g = helper.make_graph([helper.make_node("Add", ["a", "b"], ["c"])], "bad",
                          [vi("a", TensorProto.FLOAT, [2, 3]), vi("b", TensorProto.FLOAT, [4, 5])],
                          [vi("c", TensorProto.FLOAT, [2, 3])])
    with pytest.raises(memd.ModelError) as e:
        memd.Model.from_onnx(helper.make_model(g))
    assert "shape inference" in str(e.value)
    junk = tmp_path / "junk.onnx"
    junk.write_bytes(os.urandom(4096))
    with pytest.raises(memd.ModelError):
        memd.Model.from_onnx(str(junk))
    empty = tmp_path / "empty.onnx"
    empty.write_bytes(b"")
    with pytest.raises(memd.ModelError):
        memd.Model.from_onnx(str(empty))
    with pytest.raises(FileNotFoundError):
        memd.Model.from_onnx(str(tmp_path / "missing.onnx"))
    with pytest.raises(TypeError):
        memd.Model.from_onnx(42)


def test_unused_outputs_subgraphs_and_io_edge_cases():
    # MaxPool's unused Indices output still takes memory for one step; an input that is
    # also an output is an in-out; an If reads an outer value inside its branches.
    then_g = helper.make_graph([helper.make_node("Add", ["p", "k"], ["o1"])], "then", [],
                               [vi("o1", TensorProto.FLOAT, [1, 1, 2, 2])])
    else_g = helper.make_graph([helper.make_node("Sub", ["p", "k"], ["o2"])], "else", [],
                               [vi("o2", TensorProto.FLOAT, [1, 1, 2, 2])])
    nodes = [
        helper.make_node("MaxPool", ["x"], ["p", "idx"], kernel_shape=[2, 2], strides=[2, 2],
                         name="pool"),
        helper.make_node("Relu", ["x"], ["k0"], name="relu"),
        helper.make_node("MaxPool", ["k0"], ["k"], kernel_shape=[2, 2], strides=[2, 2],
                         name="pool2"),
        helper.make_node("If", ["cond"], ["z"], then_branch=then_g, else_branch=else_g,
                         name="branch"),
    ]
    g = helper.make_graph(nodes, "edges", [vi("x", TensorProto.FLOAT, [1, 1, 4, 4]),
                                           vi("cond", TensorProto.BOOL, [])],
                          [vi("z", TensorProto.FLOAT, [1, 1, 2, 2]),
                           vi("cond", TensorProto.BOOL, [])])
    m = memd.Model.from_onnx(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]))
    t = {x.name: x for x in m.tensors}
    assert t["idx"].bytes == 4 * 8 and t["idx"].lifetime == (0, 1)
    assert t["cond"].role == "inout"
    branch = [o for o in m.ops if o.name == "branch"][0]
    assert set(branch.inputs) == {"cond", "p", "k"}
    assert t["p"].lifetime == (0, 4)  # read inside the If's branches (op 3)


@pytest.mark.parametrize("dims", [None, "batch=2"])
def test_memctl_model_import(tmp_path, daemon, dims):
    model = small_net(batch="batch" if dims else 2)
    src = tmp_path / "net.onnx"
    onnx.save(model, str(src))
    out = tmp_path / "net.yaml"
    args = [MEMCTL, "model", "import", str(src), "-o", str(out)] + (["--dims", dims] if dims else [])
    # Another python3 first on PATH must not matter: memctl runs the one it was built for.
    env = dict(os.environ, PATH=f"{tmp_path}:{os.environ.get('PATH', '')}")
    fake = tmp_path / "python3"
    fake.write_text("#!/bin/sh\necho wrong python >&2\nexit 99\n")
    fake.chmod(0o755)
    r = subprocess.run(args, capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "tensors" in r.stderr and "lower bound" in r.stderr
    via_yaml = memd.Model.from_yaml(out)
    direct = memd.Model.from_onnx(str(src), dims={"batch": 2} if dims else None)
    assert [x[:6] for x in via_yaml.tensors] == [x[:6] for x in direct.tensors]
    check = subprocess.run([MEMCTL, "model", "check", str(out)], capture_output=True, text=True)
    assert check.returncode == 0, check.stderr
    load = daemon.memctl("model", "load", str(out), "--instances", "1")
    assert "arena" in load.stdout
    # --json: the summary as one object on stdout, the figures of the model it wrote.
    r = subprocess.run(args + ["--json"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["schema_version"] == 1 and doc["output"] == str(out)
    assert doc["tensors"] == len(via_yaml.tensors)
    assert doc["lower_bound"] == via_yaml.lower_bound()


def test_memctl_model_import_errors(tmp_path):
    src = tmp_path / "net.onnx"
    onnx.save(small_net(), str(src))
    r = subprocess.run([MEMCTL, "model", "import", str(src)], capture_output=True, text=True)
    assert r.returncode == 1 and "dims" in r.stderr
    r = subprocess.run([MEMCTL, "model", "import", str(src), "--dims", "N=x"],
                       capture_output=True, text=True)
    assert r.returncode == 2
    r = subprocess.run([MEMCTL, "model", "import", str(tmp_path / "none.onnx")],
                       capture_output=True, text=True)
    assert r.returncode == 1 and "none.onnx" in r.stderr
    r = subprocess.run([MEMCTL, "model", "import"], capture_output=True, text=True)
    assert r.returncode == 2
    r = subprocess.run([MEMCTL, "model", "import", str(src), "--dims", "N=2", "--json"],
                       capture_output=True, text=True)
    assert r.returncode == 2 and "--json needs -o" in r.stderr
    r = subprocess.run([MEMCTL, "model", "import", str(src), "--dims", "N=2"],
                       capture_output=True, text=True)
    assert r.returncode == 0 and r.stdout.startswith("# memd model description")


def test_damaged_files_are_model_errors_never_crashes():
    # ONNX's C++ shape inference crashes on some damaged models (a Conv whose input lost
    # dimensions...): the importer runs it in a child process, so every mutation of a
    # valid model either imports or raises ModelError, and this process lives on.
    import random
    data = small_net(batch=2).SerializeToString()
    rng = random.Random(20251124)
    seen = {"ok": 0, "error": 0}
    for _ in range(300):
        b = bytearray(data)
        for _ in range(rng.randint(1, 8)):
            b[rng.randrange(len(b))] = rng.randrange(256)
        try:
            m = memd.Model.from_onnx(bytes(b))
            assert memd.validate(m.problem(), m.plan(budget_ms=0).offsets) >= 0
            seen["ok"] += 1
        except memd.ModelError:
            seen["error"] += 1
    assert seen["ok"] > 10 and seen["error"] > 100, seen
    # the crash case itself: a Conv on a rank-2 input
    model = small_net(batch=2)
    dims = model.graph.input[0].type.tensor_type.shape.dim
    del dims[:2]
    with pytest.raises(memd.ModelError) as e:
        memd.Model.from_onnx(model)
    assert "small-net" in str(e.value)


def test_replay_bench_reads_onnx(tmp_path, daemon):
    """memd-bench-replay takes an ONNX file (through memctl model import) and replays it
    exactly as the YAML that import writes."""
    bench = os.path.join(os.path.dirname(os.path.dirname(MEMCTL)), "..", "tests", "bench",
                         "memd-bench-replay")
    src = tmp_path / "net.onnx"
    onnx.save(small_net(), str(src))
    common = ["--mode", "pool,inproc", "--inferences", "3", "--repeat", "1",
              "--socket", daemon.socket]
    r = subprocess.run([bench, str(src), "--dims", "N=2"] + common, capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    rows = [json.loads(line) for line in r.stdout.splitlines()]
    assert [x["mode"] for x in rows] == ["pool", "inproc"]
    out = tmp_path / "net.yaml"
    imp = subprocess.run([MEMCTL, "model", "import", str(src), "--dims", "N=2", "-o", str(out)],
                         capture_output=True, text=True, timeout=120)
    assert imp.returncode == 0, imp.stderr
    y = subprocess.run([bench, str(out)] + common, capture_output=True, text=True, timeout=60)
    assert y.returncode == 0, y.stderr
    for a, b in zip(rows, (json.loads(line) for line in y.stdout.splitlines())):
        assert (a["pairs"], a["tensors"], a["ops"], a["peak_bytes"]) == \
               (b["pairs"], b["tensors"], b["ops"], b["peak_bytes"])
    # Symbolic dimensions left unbound: the importer's error, exit 1; --dims on YAML: 2.
    r = subprocess.run([bench, str(src), "--mode", "inproc"], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 1 and "dims" in r.stderr
    r = subprocess.run([bench, str(out), "--dims", "N=2", "--mode", "inproc"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2
