"""Interleaved pages through the Python package and the real daemon, on the shipped
config's device 0 (Wormhole B0: 12 DRAM banks of 1 GiB, two per channel, 2 KiB default
page): models reserve about their own size, locate follows tt-metal's page-to-bank
rule, page sizes come from the model YAML or load_model and bad ones are refused."""
import os
import subprocess

import pytest

import memd
from conftest import MEMD, SHARED_DATA, SOURCE_ROOT

TINY = os.path.join(SOURCE_ROOT, "config", "models", "tiny_cnn.yaml")
BANKS, PAGE, GIB = 12, 2048, 1 << 30


def ttmetal_addr(base, aligned_page, page_id, offset):
    """tt-metal's interleaved address of a page (tt_metal/hw/inc/dataflow_api_addrgen.h:
    get_bank_offset_index = id / NUM_DRAM_BANKS, get_bank_index = id - that * banks;
    InterleavedAddrGen::get_addr = bank base + bank_offset_index * aligned page size +
    offset + bank_to_dram_offset[bank]), with the shipped descriptor's bank offsets
    (bank i at (i % 2) GiB): (bank, address, absolute)."""
    bank_offset_index = page_id // BANKS
    bank_index = page_id - bank_offset_index * BANKS
    addr = base + bank_offset_index * aligned_page + offset
    return bank_index, addr, addr + (bank_index % 2) * GIB


def reserved(client, handle):
    q = client.query(handle)
    return q["size_per_bank"] * q["banks"], q["page_size"]


def assert_about(client, handle, data, what):
    """At most 1.05 x the data plus one page in each bank."""
    got, page = reserved(client, handle)
    assert got <= 1.05 * data + page * BANKS, f"{what}: {data} bytes reserve {got}"


def test_buffer_locate_follows_ttmetal(client):
    for page in (2048, 4096):
        with client.alloc(0, "constant", 50 * page + 3, page_size=page) as b:
            for p in range(51):
                for off in (0, 7, page - 1):
                    loc = b.locate(p * page + off)
                    bank, address = loc[:2]  # tuple-like, (bank, address) first
                    assert (bank, address, loc.absolute) == ttmetal_addr(b.address, page, p, off)
                    assert loc.page == p and loc.core is None  # memd's format names no cores
            assert client.locate(b.handle, 0) == b.locate(0)
            with pytest.raises(memd.Error, match="past buffer"):
                b.locate(5 * BANKS * page)  # 51 pages: 5 rows in every bank
            # Many offsets in one go: the same Locations, in order, for a range or a list.
            starts = range(0, 51 * page, page)
            assert b.locate(starts) == [b.locate(o) for o in starts]
            assert client.locate(b, [7, page + 7]) == [b.locate(7), b.locate(page + 7)]
            assert b.locate([]) == []
            with pytest.raises(memd.Error, match="past buffer"):
                b.locate([0, 5 * BANKS * page])


def test_model_locate_weights_activations_placeholders(client):
    m = memd.Model.from_yaml(TINY)
    with client.load_model(m, device=0) as lm, lm.create_instance() as inst:
        assert lm.page_size == PAGE
        for name, addr in lm.weights.items():
            start = addr - lm.const_address
            assert start % PAGE == 0, f"weight {name} not on a page"
            assert lm.locate(name, [0, 1]) == [lm.locate(name, 0), lm.locate(name, 1)]
            size = m.tensor(name).bytes
            for off in range(0, size, PAGE):
                loc = lm.locate(name, off)
                assert loc[:2] == ttmetal_addr(lm.const_address, PAGE, (start + off) // PAGE,
                                               off % PAGE)[:2]
                assert inst.locate(name, off) == loc
        for name, off in lm.offsets.items():
            assert off % PAGE == 0, f"activation {name} not on a page of the arena"
            loc = inst.locate(name, 100)
            assert loc[:2] == ttmetal_addr(inst.arena_address, PAGE, off // PAGE, 100)[:2]
        inp = next(t.name for t in m.tensors if t.role == "input")
        assert inst.locate(inp)[:2] == (0, inst.tensors[inp])
        assert inst.locate(inp, PAGE)[0] == 1
        with pytest.raises(KeyError):
            lm.locate(inp)  # not a weight


def test_page_size_from_yaml_and_load_model(client):
    text = open(TINY).read()
    m = memd.Model.from_yaml_string("page_size: 8KiB\n" + text.replace("tiny-cnn", "pages-8k"))
    assert m.page_size == 8192
    assert memd.Model.from_yaml_string(m.to_yaml()).page_size == 8192  # round trip
    with client.load_model(m, device=0) as lm:
        assert lm.page_size == 8192 and reserved(client, lm.const_handle)[1] == 8192
    with client.load_model(m, device=0, page_size=4096) as lm:  # load_model wins
        assert lm.page_size == 4096 and reserved(client, lm.const_handle)[1] == 4096
    with client.load_model(m, device=0, page_size=0) as lm:  # one page, whole in every bank
        size, page = reserved(client, lm.const_handle)
        assert lm.page_size == 0 and page * BANKS == size and page >= lm.const_bytes
    one = memd.Model.from_yaml_string("page_size: 0\n" + text.replace("tiny-cnn", "pages-one"))
    assert one.page_size == 0


def test_bad_page_sizes_refused(client, tmp_path):
    m = memd.Model.from_yaml(TINY)
    with pytest.raises(memd.InvalidRequestError, match="page size 3000 is not a power of two"):
        client.load_model(m, device=0, page_size=3000)
    with pytest.raises(memd.InvalidRequestError, match="below the group's alignment"):
        client.load_model(m, device=0, page_size=16)
    with pytest.raises(memd.InvalidRequestError, match="larger than a bank"):
        client.load_model(m, device=0, page_size=2 * GIB)
    with pytest.raises(ValueError, match="power of two"):
        memd.Model("x", [], [], page_size=3000)
    bad = tmp_path / "bad.yaml"
    bad.write_text("page_size: 3000\n" + open(TINY).read())
    with pytest.raises(memd.ModelError, match=r"bad.yaml:1:\d+: page_size: 3000 is not a power"):
        memd.Model.from_yaml(str(bad))


def test_bad_config_page_size_refused(own_daemon, tmp_path):
    """memd --check-config names the descriptor's bad page size."""
    desc = open(os.path.join(SOURCE_ROOT, "config", "devices", "wormhole_b0.yaml")).read()
    (tmp_path / "dev.yaml").write_text(desc.replace("page_size: 2KiB", "page_size: 3KiB"))
    cfg = tmp_path / "memd.yaml"
    cfg.write_text("devices:\n  - id: 0\n    descriptor: dev.yaml\n")
    r = subprocess.run([MEMD, "--check-config", str(cfg)], capture_output=True, text=True)
    assert r.returncode != 0
    assert "dram page_size 3072 is not a power of two" in r.stdout + r.stderr


def test_ttmetal_dram_locate_names_the_channel_core(own_daemon, tmp_path):
    """On tt-metal's own descriptors a DRAM bank has its channel's core: locate gives it."""
    soc = os.path.join(SHARED_DATA, "soc", "tt-metal")
    cfg = tmp_path / "memd.yaml"
    cfg.write_text("devices:\n  - id: 0\n    tt_metal:\n"
                   f"      soc_descriptor: {soc}/soc_wormhole_b0_80_arch.yaml\n"
                   f"      core_descriptor: {soc}/core_wormhole_b0_80_arch.yaml\n"
                   "      product: nebula_x1\n      hw_cqs: 1\n    sram: {reserved: 160KiB}\n"
                   "    dram: {page_size: 2KiB}\n")
    d = own_daemon(config=str(cfg))
    with memd.connect(d.socket) as c, c.load_model(memd.Model.from_yaml(TINY), device=0) as lm:
        assert lm.page_size == PAGE
        banks = c.bank_info(lm.const_handle)
        w = next(iter(lm.weights))
        for k in range(2 * BANKS):
            loc = lm.locate(w, k * PAGE)
            info = banks[loc.bank]
            assert loc.bank == k % BANKS and loc.noc == info["noc"] and loc.core == info["core"]
            assert loc.noc is not None


@pytest.mark.torch
def test_resnet50_on_12_banks_reserves_about_its_size(client):
    """The closing note's figure: torchvision's ResNet-50 (weights=None) through the
    PyTorch importer, loaded on the 12 DRAM banks with the default page."""
    torch = pytest.importorskip("torch")
    tvm = pytest.importorskip("torchvision.models")
    torch.set_num_threads(1)
    m = memd.Model.from_torch(tvm.resnet50(weights=None).eval(), torch.randn(1, 3, 224, 224),
                              name="pages-resnet50")
    with client.load_model(m, device=0) as lm, lm.create_instance() as inst:
        assert_about(client, lm.const_handle, m.weight_bytes, "weights")
        assert_about(client, inst.arena_handle, lm.arena, "arena")
