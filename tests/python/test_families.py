"""torchvision models of every family (ResNet, MobileNet, EfficientNet, DenseNet, ViT,
Swin, ConvNeXt) and a Transformer encoder, through both importers: PyTorch (torch.fx or
ATen) and ONNX (torch.onnx.export, then Model.from_onnx). Built with weights=None
(nothing downloaded) at small input sizes so the whole family set runs in CI; the
closing-note figures at full size come from tests/bench/model_table.py.

For every model and path: the plan is valid; loaded by two sessions, the weights are
allocated once (same address, two users); every instance's activations lie inside its
arena, aliases at their source, weights in the shared constants. Training graphs
(forward + backward through AOT autograd) give problems of thousands of buffers: they
are planned and validated too."""
import io
import subprocess
import time

import pytest

import memd
from conftest import MEMCTL
from test_model import check_instance

torch = pytest.importorskip("torch")
tv = pytest.importorskip("torchvision")
onnx = pytest.importorskip("onnx")
from torchvision import models as tvm  # noqa: E402

pytestmark = [pytest.mark.families, pytest.mark.torch, pytest.mark.onnx]
torch.set_num_threads(1)


def vit():
    from torchvision.models.vision_transformer import VisionTransformer
    return VisionTransformer(image_size=32, patch_size=8, num_layers=2, num_heads=4,
                             hidden_dim=64, mlp_dim=128, num_classes=10)


def swin():
    from torchvision.models.swin_transformer import SwinTransformer
    return SwinTransformer(patch_size=[4, 4], embed_dim=32, depths=[2, 2], num_heads=[2, 4],
                           window_size=[4, 4], num_classes=10)


def convnext():
    from torchvision.models.convnext import CNBlockConfig, ConvNeXt
    return ConvNeXt([CNBlockConfig(32, 64, 2), CNBlockConfig(64, None, 2)], num_classes=10)


def encoder():
    layer = torch.nn.TransformerEncoderLayer(d_model=64, nhead=4, dim_feedforward=128,
                                             batch_first=True)
    return torch.nn.TransformerEncoder(layer, num_layers=2)


# family, constructor, example input shape
FAMILIES = [
    ("resnet", lambda: tvm.resnet18(weights=None, num_classes=10), (1, 3, 64, 64)),
    ("mobilenet", lambda: tvm.mobilenet_v3_small(weights=None, num_classes=10), (1, 3, 64, 64)),
    ("efficientnet", lambda: tvm.efficientnet_b0(weights=None, num_classes=10), (1, 3, 64, 64)),
    ("densenet", lambda: tvm.densenet121(weights=None, num_classes=10), (1, 3, 64, 64)),
    ("vit", vit, (1, 3, 32, 32)),
    ("swin", swin, (1, 3, 32, 32)),
    ("convnext", convnext, (1, 3, 32, 32)),
    ("transformer-encoder", encoder, (2, 16, 64)),
]


def torch_model(name, make, shape):
    torch.manual_seed(0)
    return memd.Model.from_torch(make().eval(), torch.randn(*shape), name=f"{name}-torch")


def onnx_model(name, make, shape):
    torch.manual_seed(0)
    buf = io.BytesIO()
    # Not under torch.no_grad(): inference fast paths (fused attention and encoder
    # layers) have no ONNX form.
    torch.onnx.export(make().eval(), torch.randn(*shape), buf, opset_version=14,
                      input_names=["input"], do_constant_folding=True)
    return memd.Model.from_onnx(buf.getvalue(), name=f"{name}-onnx")


def check_model(daemon, m):
    p = m.plan(budget_ms=200)
    assert memd.validate(m.problem(), p.offsets) == p.arena
    assert p.arena >= p.lower_bound == m.lower_bound() > 0
    s = m.summary()
    assert s["weights"] > 0 and s["activations"] > 0
    with memd.connect(daemon.socket) as a, memd.connect(daemon.socket) as b:
        la = a.load_model(m, device=0, budget_ms=200)
        la.set_ready()
        lb = b.load_model(m, device=0)
        assert la.created and not lb.created and lb.users == 2
        assert la.const_address == lb.const_address and la.plan_id == lb.plan_id
        assert la.const_bytes >= m.weight_bytes
        with la.create_instance() as i1, la.create_instance() as i2, \
                lb.create_instance() as i3:
            for lm, inst in ((la, i1), (la, i2), (lb, i3)):
                check_instance(lm, inst)
            w = next(t.name for t in m.tensors if t.role == "weight")
            assert i1.tensors[w] == i2.tensors[w] == i3.tensors[w] == la.weights[w]
            assert len({i.arena_address for i in (i1, i2, i3)}) == 3
        la.unload()
        lb.unload()
    return p


@pytest.mark.parametrize("name,make,shape", FAMILIES, ids=[f[0] for f in FAMILIES])
def test_family_through_pytorch(daemon, name, make, shape):
    m = torch_model(name, make, shape)
    p = check_model(daemon, m)
    assert any(t.alias_of for t in m.tensors), "no view became an alias"
    assert p.gap <= 0.05


@pytest.mark.parametrize("name,make,shape", FAMILIES, ids=[f[0] for f in FAMILIES])
def test_family_through_onnx(daemon, name, make, shape):
    m = onnx_model(name, make, shape)
    check_model(daemon, m)
    ref = torch_model(name, make, shape)
    # Same network, two importers: the input and the outputs agree in size.
    assert sorted(t.bytes for t in m.tensors if t.role == "input") == \
        sorted(t.bytes for t in ref.tensors if t.role == "input")
    assert sum(t.bytes for t in m.tensors if t.role == "output") == \
        sum(t.bytes for t in ref.tensors if t.role == "output")


TRAINING = [  # name, model, input, at least this many planned buffers
    ("resnet18", lambda: tvm.resnet18(weights=None, num_classes=10), (2, 3, 32, 32), 150),
    ("densenet201", lambda: tvm.densenet201(weights=None, num_classes=10), (2, 3, 32, 32), 2500),
    ("transformer-encoder", encoder, (2, 16, 64), 120),
]


@pytest.mark.parametrize("name,make,shape,least", TRAINING, ids=[t[0] for t in TRAINING])
def test_training_graph_plans(name, make, shape, least):
    torch.manual_seed(0)
    m = memd.Model.from_torch(make().train(), torch.randn(*shape), training=True)
    n = len(m.problem())
    assert n >= least, f"{n} planned buffers"
    t0 = time.monotonic()
    p = m.plan(budget_ms=500, seed=1)
    assert time.monotonic() - t0 < 5
    assert memd.validate(m.problem(), p.offsets) == p.arena
    assert p.lower_bound <= p.arena <= 1.10 * p.lower_bound
    # Every gradient is an output of the graph, every parameter a weight.
    net_params = sum(1 for _ in make().parameters())
    assert sum(t.role == "output" for t in m.tensors) >= net_params


# Exported as runtimes ask for them (ONNX Runtime): the batch axis dynamic, bound at import.
# ShuffleNetV2's channel shuffles need one shape-inference round per block; the full
# sweep over the families and opsets 13 and 17 is tests/bench/onnx_dynamic.py.
DYNAMIC = [
    ("shufflenet_v2", lambda: tvm.shufflenet_v2_x0_5(weights=None, num_classes=10), 17),
    ("mobilenet_v3", lambda: tvm.mobilenet_v3_small(weights=None, num_classes=10), 13),
]


@pytest.mark.parametrize("name,make,opset", DYNAMIC, ids=[f"{d[0]}-{d[2]}" for d in DYNAMIC])
def test_dynamic_batch_export(daemon, tmp_path, name, make, opset):
    torch.manual_seed(0)
    path = str(tmp_path / f"{name}.onnx")
    torch.onnx.export(make().eval(), torch.randn(1, 3, 64, 64), path, opset_version=opset,
                      input_names=["input"], output_names=["output"], do_constant_folding=True,
                      dynamic_axes={"input": {0: "batch"}, "output": {0: "batch"}})
    with pytest.raises(memd.ModelError, match="dims="):
        memd.Model.from_onnx(path)  # the batch must be bound
    one = memd.Model.from_onnx(path, dims={"batch": 1})
    four = memd.Model.from_onnx(path, dims={"batch": 4})
    assert four.tensor("input").bytes == 4 * one.tensor("input").bytes == 4 * 3 * 64 * 64 * 4
    assert four.tensor("output").bytes == 4 * 10 * 4
    assert four.lower_bound() > one.lower_bound() and four.weight_bytes == one.weight_bytes
    check_model(daemon, one)
    if name == "shufflenet_v2":  # the command too
        out = tmp_path / "m.yaml"
        r = subprocess.run([MEMCTL, "model", "import", path, "--dims", "batch=1", "-o", str(out)],
                           capture_output=True, text=True, timeout=600)
        assert r.returncode == 0, r.stderr
        assert memd.Model.from_yaml(out).lower_bound() == one.lower_bound()


def test_one_family_two_sizes_load_side_by_side(daemon):
    # regnet_x_400mf and regnet_x_800mf are both a RegNet: default names differ by digest.
    x = torch.randn(1, 3, 32, 32)
    a = memd.Model.from_torch(tvm.regnet_x_400mf(weights=None).eval(), x)
    b = memd.Model.from_torch(tvm.regnet_x_800mf(weights=None).eval(), x)
    assert a.name.startswith("regnet-") and b.name.startswith("regnet-") and a.name != b.name
    with memd.connect(daemon.socket) as c, c.load_model(a) as la, c.load_model(b) as lb:
        assert la.created and lb.created and la.const_address != lb.const_address
