"""memd.Model from YAML and by hand, planned offline and loaded into the daemon."""
import json
import os

import pytest

import memd
from conftest import (SOURCE_ROOT, open_to_other_users, run_python_as_other_user,
                      start_python_as_other_user)

TINY = os.path.join(SOURCE_ROOT, "config", "models", "tiny_cnn.yaml")


def core(t):
    return (t.name, t.role, t.bytes, t.lifetime, t.alias_of, t.alignment)


def check_instance(lm, inst):
    """Every tensor's address is where the model says it must be."""
    m = lm.model
    lo, hi = inst.arena_address, inst.arena_address + inst.arena_bytes
    assert inst.arena_bytes == lm.arena
    own_placeholders = set()
    for t in m.tensors:
        addr = inst.tensors[t.name]
        src = m.tensor(t.alias_of) if t.alias_of else t
        if t.alias_of:
            assert addr == inst.tensors[t.alias_of], t.name
        if src.role == "activation":
            assert lo <= addr and addr + src.bytes <= hi, f"{t.name} outside the arena"
            assert addr - lo == lm.offsets[t.name]
        elif src.role == "weight":
            assert addr == lm.weights[t.name]
            assert lm.const_address <= addr and addr + src.bytes <= lm.const_address + lm.const_bytes
        else:
            assert not lo <= addr < hi, f"placeholder {t.name} inside the arena"
            if not t.alias_of:
                assert addr not in own_placeholders
                own_placeholders.add(addr)


def test_yaml_model_lifetimes_and_problem():
    m = memd.Model.from_yaml(TINY)
    assert m.name == "tiny-cnn" and m.scope == "dram" and m.code_bytes == 64 << 10
    assert len(m.tensors) == 15 and len(m.ops) == 8
    flat = m.tensor("flat")
    assert flat.alias_of == "pool2.out" and flat.lifetime == m.tensor("pool2.out").lifetime
    assert m.tensor("conv1.out").lifetime == (0, 2)
    assert m.tensor("fc.w").role == "weight" and m.tensor("fc.w").alignment == 4096
    assert m.tensor("image").shape == (1, 3, 32, 32) and m.tensor("image").dtype == "f16"
    assert m.problem_tensors() == ["conv1.out", "relu1.out", "pool1.out", "conv2.out",
                                   "relu2.out", "pool2.out"]
    assert m.problem()[0] == (0, 2, 32768, 64)
    s = m.summary()
    assert s["weights"] == 6 and s["activations"] == 6 and s["aliases"] == 1
    assert s["lower_bound"] == m.lower_bound() == 65536
    p = m.plan(budget_ms=50)
    assert p.arena == p.lower_bound and set(p.tensors) == {t.name for t in m.tensors
                                                            if t.role == "activation"}
    assert p.tensors["flat"] == p.tensors["pool2.out"]
    assert memd.validate(m.problem(), p.offsets) == p.arena


def test_yaml_round_trip(tmp_path):
    m = memd.Model.from_yaml(TINY)
    out = tmp_path / "again.yaml"
    text = m.to_yaml(out)
    assert out.read_text() == text
    again = memd.Model.from_yaml(out)
    assert [core(t) for t in again.tensors] == [core(t) for t in m.tensors]
    assert [(o.inputs, o.outputs, o.inplace) for o in again.ops] == \
        [(o.inputs, o.outputs, o.inplace) for o in m.ops]
    odd = memd.Model("odd", [dict(name='a "quoted": name', role="input", bytes=64),
                             dict(name="b\\c tab", bytes=128),
                             dict(name="ünï", role="output", bytes=64)],
                     [dict(name="op: 1", type="x", inputs=['a "quoted": name'],
                           outputs=["b\\c tab"]),
                      dict(inputs=["b\\c tab"], outputs=["ünï"])])
    back = memd.Model.from_yaml_string(odd.to_yaml())
    assert [core(t) for t in back.tensors] == [core(t) for t in odd.tensors]
    # names are text: a control character is refused at the YAML border, clearly
    tab = memd.Model("tab", [dict(name="b\ttab", role="input", bytes=64)], [])
    with pytest.raises(memd.ModelError) as e:
        memd.Model.from_yaml_string(tab.to_yaml())
    assert "control character" in str(e.value)


def test_yaml_errors_name_file_line_column(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("model: x\ntensors:\n  - {name: a, size: 10, colour: red}\nops: []\n")
    with pytest.raises(memd.ModelError) as e:
        memd.Model.from_yaml(bad)
    assert f"{bad}:3:" in str(e.value) and "colour" in str(e.value)
    bad.write_text("model: x\ntensors:\n  - {name: a, size: 10}\n"
                   "ops:\n  - {inputs: [a], outputs: [a]}\n")
    with pytest.raises(memd.ModelError) as e:
        memd.Model.from_yaml(bad)
    assert f"{bad}:" in str(e.value)
    with pytest.raises(FileNotFoundError):
        memd.Model.from_yaml(tmp_path / "missing.yaml")
    with pytest.raises(memd.ModelError):
        memd.Model.from_yaml_string("[not, a, model")
    bad.write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(memd.ModelError):
        memd.Model.from_yaml(bad)


def test_graph_errors_name_op_and_tensor():
    t = [dict(name="x", role="input", bytes=64), dict(name="y", bytes=64),
         dict(name="z", role="output", bytes=64)]
    with pytest.raises(memd.ModelError) as e:  # y read before it is written
        memd.Model("g", t, [dict(name="first", inputs=["y"], outputs=["z"]),
                            dict(name="second", inputs=["x"], outputs=["y"])])
    assert e.value.op == 0 and e.value.tensor == 1 and "'y'" in str(e.value)
    with pytest.raises(memd.ModelError) as e:  # an input written
        memd.Model("g", t, [dict(inputs=["y"], outputs=["x"])])
    with pytest.raises(memd.ModelError) as e:
        memd.Model("g", t, [dict(inputs=["x"], outputs=["nope"])])
    assert "nope" in str(e.value) and e.value.op == 0
    with pytest.raises(memd.ModelError):  # in-place output larger than its source
        memd.Model("g", [dict(name="x", role="input", bytes=64),
                         dict(name="v", role="output", bytes=128)],
                   [dict(type="reshape", inputs=["x"], outputs=["v"])])
    with pytest.raises(memd.ModelError):
        memd.Model("g", t + [dict(name="x", bytes=1)], [])
    with pytest.raises(ValueError):
        memd.Model("bad name!", t, [])
    with pytest.raises(ValueError):
        memd.Model("g", [dict(name="x", role="param", bytes=4)], [])
    with pytest.raises(TypeError):
        memd.Model("g", [dict(name="x", bytes="4")], [])
    with pytest.raises(ValueError):
        memd.Model("g", [dict(name="x", bytes=4, alignment=3)], [])
    with pytest.raises(memd.ModelError):
        memd.Model("g", [], [])
    assert memd.model_name("ResNet 50 (fp16)!") == "ResNet-50-fp16"
    assert memd.model_name("/" * 10) == "model" and len(memd.model_name("a" * 99)) == 48


def test_load_share_instances_and_unload(daemon):
    m = memd.Model.from_yaml(TINY)
    with memd.connect(daemon.socket) as c1, memd.connect(daemon.socket) as c2:
        lm1 = c1.load_model(m, device=0)
        lm1.set_ready()  # the weights are written: the second loader need not wait
        lm2 = c2.load_model(m, device=0)
        assert lm1.created and not lm2.created and lm2.users == 2
        assert lm1.const_address == lm2.const_address and lm1.const_bytes > 0
        assert lm1.code_bytes == 64 << 10 and lm1.arena >= lm1.lower_bound == m.lower_bound()
        assert lm1.plan_id == lm2.plan_id and lm2.plan_cached
        assert set(lm1.weights) == {t.name for t in m.tensors if t.role == "weight"}
        doc = c1.dump()
        rec = [x for x in doc["models"] if x["name"] == "tiny-cnn"]
        assert rec and rec[0]["users"] == 2
        insts = [lm1.create_instance(), lm1.create_instance(), lm2.create_instance()]
        for lm, inst in zip((lm1, lm1, lm2), insts):
            check_instance(lm, inst)
        # Disjoint in every bank: an interleaved arena reserves size_per_bank there.
        spans = sorted((i.arena_address, i.arena_address + c.query(i.arena_handle)["size_per_bank"])
                       for c, i in zip((c1, c1, c2), insts))
        assert all(a[1] <= b[0] for a, b in zip(spans, spans[1:])), "arenas overlap"
        assert insts[0].tensors["fc.w"] == insts[2].tensors["fc.w"]  # weights loaded once
        first = dict(insts[0].tensors)
        insts[0].release()
        again = lm1.create_instance()
        assert again.reused and again.tensors == first
        with pytest.raises(memd.BusyError):
            c1.free(again.arena_handle)  # a model's buffers are not freed one by one
        with pytest.raises(memd.BusyError):
            lm1.unload()  # instances in use
        lm1.unload(force=True)
        lm1.unload()  # idempotent
        with pytest.raises(memd.Error):
            lm1.create_instance()
        rec = [x for x in c2.dump()["models"] if x["name"] == "tiny-cnn"]
        assert rec and rec[0]["users"] == 1
        with lm2, lm2.create_instance() as inst:
            check_instance(lm2, inst)
        assert lm2.unloaded
        assert not [x for x in c2.dump()["models"] if x["name"] == "tiny-cnn"]


def test_precomputed_offsets_and_name_clash(client):
    m = memd.Model.from_yaml(TINY)
    p = m.plan(budget_ms=20)
    with client.load_model(m, offsets=p.tensors) as lm:
        assert lm.info["plan_precomputed"] and lm.arena == p.arena
        assert lm.offsets == p.tensors
    bad = dict(p.tensors)
    bad["relu1.out"] = bad["conv1.out"]  # live together: must overlap
    with pytest.raises(memd.InvalidRequestError) as e:
        client.load_model(m, offsets=bad)
    assert "overlap" in str(e.value)
    with pytest.raises(ValueError):
        client.load_model(m, offsets={"nope": 0})
    with pytest.raises(TypeError):
        client.load_model("tiny_cnn.yaml")
    other = memd.Model("tiny-cnn", [dict(name="w", role="weight", bytes=4096),
                                    dict(name="x", role="input", bytes=64),
                                    dict(name="y", role="output", bytes=64)],
                       [dict(inputs=["x", "w"], outputs=["y"])])
    with client.load_model(m):
        with pytest.raises(memd.ExistsError):
            client.load_model(other)
    with client.load_model(other, device=2) as lm:  # no activations: no arena
        with lm.create_instance() as inst:
            assert inst.arena_bytes == 0 and lm.arena == 0


def weights_only(name, weight_bytes):
    return memd.Model(name, [dict(name="w", role="weight", bytes=weight_bytes),
                             dict(name="x", role="input", bytes=64),
                             dict(name="y", role="output", bytes=64)],
                      [dict(inputs=["x", "w"], outputs=["y"])])


def test_model_names_are_scoped_per_uid(daemon):
    # As shared buffer names are (shared_names: per_uid): another uid that loads a model
    # of the same name gets a model of its own, same content or not; this uid's sessions
    # still share theirs, and still clash on other content.
    import inspect
    code = inspect.getsource(weights_only) + f"""
import json
with memd.connect({daemon.socket!r}) as c:
    same = c.load_model(weights_only("scoped", 4096), device=2)
    other = c.load_model(weights_only("scoped", 8192), device=0)
    print(json.dumps(dict(same=[same.created, same.const_address, same.users],
                          other=[other.created, other.const_address])))
"""
    mine = weights_only("scoped", 4096)
    with memd.connect(daemon.socket) as c, memd.connect(daemon.socket) as c2:
        on2, on0 = c.load_model(mine, device=2), c.load_model(mine, device=0)
        on2.set_ready()  # the weights are written: c2's load below need not wait
        on0.set_ready()
        r = run_python_as_other_user(daemon, "import memd\n" + code)
        assert r.returncode == 0, r.stderr
        out = json.loads(r.stdout)
        assert out["same"][0] and out["same"][2] == 1 and out["same"][1] != on2.const_address
        assert out["other"][0] and out["other"][1] != on0.const_address
        shared = c2.load_model(mine, device=2)
        assert not shared.created and shared.model_id == on2.model_id and shared.users == 2
        with pytest.raises(memd.ExistsError):
            c2.load_model(weights_only("scoped", 8192), device=2)
        on2.unload()
        on0.unload()
        shared.unload()


def test_model_uid_survives_a_restart(own_daemon):
    # nobody loads "kept" first; the daemon restarts; the model comes back as nobody's:
    # this uid's load of "kept" with other content is a model of its own, no clash.
    import inspect
    import subprocess
    d = own_daemon()
    code = inspect.getsource(weights_only) + f"""
import sys
c = memd.connect({d.socket!r})
lm = c.load_model(weights_only("kept", 4096), device=2)
lm.set_ready()
print(lm.model_id, flush=True)
sys.stdin.readline()                  # the daemon restarts meanwhile
assert c.reconnect(timeout_ms=5000)
print(c.load_model(weights_only("kept", 4096), device=2).model_id, flush=True)
"""
    p = start_python_as_other_user(d, "import memd\n" + code, stdin=subprocess.PIPE)
    try:
        theirs = int(p.stdout.readline())
        d.kill()
        d.start()
        open_to_other_users(d)
        with memd.connect(d.socket) as c, c.load_model(weights_only("kept", 8192),
                                                       device=2) as mine:
            assert mine.created and mine.model_id != theirs
            p.stdin.write("\n")
            p.stdin.flush()
            assert int(p.stdout.readline()) == theirs, p.stderr.read()
    finally:
        p.kill()
        p.wait()
