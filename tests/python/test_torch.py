"""Model.from_torch on small modules: fx and ATen tracing, aliases, weights, training."""
import re

import pytest

import memd
from test_model import check_instance

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch
torch.manual_seed(0)


class Net(torch.nn.Module):
    """Views, an in-place ReLU, a split into a tuple, tied weights and BatchNorm buffers."""

    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.bn = torch.nn.BatchNorm2d(8)
        self.relu = torch.nn.ReLU(inplace=True)
        self.fc1 = torch.nn.Linear(256, 256, bias=False)
        self.fc2 = torch.nn.Linear(256, 256, bias=False)
        self.fc2.weight = self.fc1.weight  # tied
        self.head = torch.nn.Linear(512, 10)

    def forward(self, x):
        y = self.relu(self.bn(self.conv(x)))
        z = y.flatten(1)
        parts = z.split(256, dim=1)
        a = self.fc1(parts[0])
        b = self.fc2(parts[1])
        return self.head(torch.cat([a, b], 1)), y


def by_name(m):
    return {t.name: t for t in m.tensors}


def test_fx_roles_aliases_and_weights():
    m = memd.Model.from_torch(Net().eval(), torch.randn(2, 3, 8, 8), tracer="fx")
    assert "torch.fx" in m.source and re.fullmatch(r"net-[0-9a-f]{8}", m.name)
    t = by_name(m)
    weights = {n for n, x in t.items() if x.role == "weight"}
    assert {"conv.weight", "conv.bias", "bn.weight", "bn.bias", "bn.running_mean", "bn.running_var",
            "bn.num_batches_tracked", "fc1.weight", "head.weight", "head.bias"} == weights
    assert "fc2.weight" not in t  # tied to fc1.weight: one weight
    fc2 = [o for o in m.ops if o.name == "fc2"][0]
    assert "fc1.weight" in fc2.inputs
    assert t["input"].role == "input" and t["input"].bytes == 2 * 3 * 64 * 4
    assert t["relu"].alias_of == "bn" and t["relu"].role == "output"  # ReLU(inplace=True)
    assert t["flatten"].alias_of == "bn"
    assert t["split.0"].alias_of == "bn" and t["split.1"].bytes == 2 * 256 * 4
    assert t["head"].role == "output" and t["head"].bytes == 2 * 10 * 4
    assert t["bn"].lifetime[1] == len(m.ops)  # aliased by an output: lives to the end
    assert t["conv"].lifetime == (0, 2)
    # parameters() lists the tied weight once; plus BN's statistics and int64 counter
    assert m.weight_bytes == sum(p.numel() * 4 for p in Net().parameters()) + 2 * 8 * 4 + 8
    p = m.plan(budget_ms=50)
    assert memd.validate(m.problem(), p.offsets) == p.arena


def test_aten_tracer_agrees_on_weights_and_outputs():
    net = Net().eval()
    x = torch.randn(2, 3, 8, 8)
    fx = memd.Model.from_torch(net, x, tracer="fx")
    aten = memd.Model.from_torch(net, x, tracer="aten")
    assert "make_fx" in aten.source
    assert aten.weight_bytes == fx.weight_bytes
    assert sorted(t.bytes for t in aten.tensors if t.role == "output") == \
        sorted(t.bytes for t in fx.tensors if t.role == "output")
    t = by_name(aten)
    # aten.t of a weight is an alias of the weight, not a new buffer
    assert any(x.alias_of == "fc1.weight" for x in aten.tensors)
    assert t["input"].role == "input"
    p = aten.plan(budget_ms=50)
    assert memd.validate(aten.problem(), p.offsets) == p.arena


class Branchy(torch.nn.Module):
    """Control flow on a shape: torch.fx cannot trace it, one concrete run can."""

    def __init__(self, data_dependent=False):
        super().__init__()
        self.lin = torch.nn.Linear(16, 16)
        self.data_dependent = data_dependent

    def forward(self, x):
        y = self.lin(x)
        if (y.sum() > 0) if self.data_dependent else (x.shape[0] > 2):
            return torch.relu(y)
        return -y


def test_auto_falls_back_to_aten_and_fx_says_why():
    x = torch.randn(4, 16)
    m = memd.Model.from_torch(Branchy(), x)
    assert "make_fx" in m.source
    assert "aten.relu.default" in [o.type for o in m.ops]  # the branch the run took
    with pytest.raises(memd.ModelError) as e:
        memd.Model.from_torch(Branchy(), x, tracer="fx")
    assert "tracer='aten'" in str(e.value)
    with pytest.raises(memd.ModelError) as e:  # on the values: neither can
        memd.Model.from_torch(Branchy(data_dependent=True), x)
    assert "make_fx" in str(e.value)


def test_bad_arguments():
    with pytest.raises(TypeError):
        memd.Model.from_torch(lambda x: x, torch.randn(2))
    with pytest.raises(TypeError):
        memd.Model.from_torch(Net(), [1, 2, 3])
    with pytest.raises(TypeError):
        memd.Model.from_torch(Net(), "x")
    with pytest.raises(ValueError):
        memd.Model.from_torch(Net(), torch.randn(2, 3, 8, 8), tracer="jit")
    with pytest.raises(memd.ModelError) as e:  # wrong shape: the run fails, named
        memd.Model.from_torch(Net(), torch.randn(2, 3, 4, 4), tracer="fx")
    assert "example inputs" in str(e.value)


def test_training_graph_from_aot_autograd():
    net = Net().train()
    m = memd.Model.from_torch(net, torch.randn(2, 3, 8, 8), training=True)
    assert "AOT autograd" in m.source and re.fullmatch(r"net-train-[0-9a-f]{8}", m.name)
    t = by_name(m)
    assert t["grad:output.0"].role == "input"
    outputs = [x for x in m.tensors if x.role == "output"]
    # forward outputs + a gradient per parameter (tied fc1/fc2 counted once)
    assert len(outputs) >= len(list(net.parameters())) + 1
    s = m.summary()
    fwd = memd.Model.from_torch(Net().eval(), torch.randn(2, 3, 8, 8))
    assert s["activations"] > fwd.summary()["activations"]
    p = m.plan(budget_ms=100)
    assert memd.validate(m.problem(), p.offsets) == p.arena
    with pytest.raises(memd.ModelError):
        frozen = Net()
        for q in frozen.parameters():
            q.requires_grad_(False)
        memd.Model.from_torch(frozen, torch.randn(2, 3, 8, 8), training=True)


def test_torch_model_in_the_daemon(daemon):
    m = memd.Model.from_torch(Net().eval(), torch.randn(1, 3, 8, 8))
    with memd.connect(daemon.socket) as a, memd.connect(daemon.socket) as b:
        la = a.load_model(m)
        la.set_ready()
        lb = b.load_model(m)
        assert la.const_address == lb.const_address and lb.users == 2
        with la.create_instance() as i1, lb.create_instance() as i2:
            check_instance(la, i1)
            check_instance(lb, i2)
            assert i1.tensors["fc1.weight"] == i2.tensors["fc1.weight"]
        la.unload()
        lb.unload()


class Head(torch.nn.Module):
    def __init__(self, width):
        super().__init__()
        self.fc = torch.nn.Linear(8, width)

    def forward(self, x):
        return self.fc(x).relu()


def test_default_names_are_unique_per_graph(daemon):
    # One class, two graphs (as regnet_x_400mf and regnet_x_800mf are both a RegNet): two
    # names, both loadable at once; the same graph again: the same name (shared loads).
    x = torch.randn(2, 8)
    narrow, wide = memd.Model.from_torch(Head(4), x), memd.Model.from_torch(Head(16), x)
    assert narrow.name != wide.name
    assert narrow.name.startswith("head-") and wide.name.startswith("head-")
    assert memd.Model.from_torch(Head(4), x).name == narrow.name
    assert memd.Model.from_torch(Head(4), x, name="mine").name == "mine"
    long = type("A" * 60, (Head,), {})(4)
    assert len(memd.Model.from_torch(long, x).name) == 48
    with memd.connect(daemon.socket) as c, c.load_model(narrow) as a, c.load_model(wide) as b:
        assert a.created and b.created and a.name != b.name
        a.set_ready()  # its weights are written: the second loader need not wait
        with memd.connect(daemon.socket) as c2, \
                c2.load_model(memd.Model.from_torch(Head(4), x)) as again:
            assert again.model_id == a.model_id and not again.created and again.users == 2
