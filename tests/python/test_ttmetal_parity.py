"""tt-metal parity (issue 28) from Python: tt-metal's allocator tests, case by case, with
tt-metal's expected numbers, against a real daemon. Each test names the tt-metal test it
transcribes (tests/tt_metal/tt_metal/api/allocator/, dispatch_buffer/test_sub_device.cpp).
Device 0 is tt-metal's Wormhole galaxy (its own descriptors: tt-metal's rules), device 1
the same Wormhole in memd's format (memd's rules), device 2 the allocator of the
FreeListOpt tests: one bank of 1 GiB, 1 KiB alignment; device 3 those of its Alignment
and MinAllocationSize tests (a 1 KiB min_allocation_size in L1)."""
import errno
import os

import pytest

import memd
from conftest import SHARED_DATA, SOURCE_ROOT
from test_client import alloc_handles

KiB = 1 << 10
GiB = 1 << 30
WORKER_L1_SIZE = 1499136  # the galaxy's l1_size_per_core
PAGE = 2048               # HYBRID_TEST_PAGE_SIZE

# tt-metal's L1 bank id of logical core (x, y) of the galaxy grid: its std::shuffle of
# 0..63 (tests/common/ttmetal_galaxy_ids.h, printed by tt-metal's C++ library).
GALAXY_IDS = [34, 63, 38, 6, 52, 33, 4, 37, 20, 35, 14, 22, 2, 31, 36, 19, 30, 40, 3, 10, 25, 7,
              59, 56, 39, 24, 50, 12, 21, 42, 29, 5, 61, 0, 26, 54, 1, 9, 15, 13, 18, 58, 8, 46,
              27, 51, 16, 53, 62, 45, 44, 43, 41, 17, 55, 60, 49, 48, 57, 32, 47, 23, 11, 28]


def bank(x, y):
    return GALAXY_IDS[y * 8 + x]


def galaxy_device():
    """memd.yaml's devices: entry 0, a Wormhole galaxy from tt-metal's descriptors."""
    soc = os.path.join(SHARED_DATA, "soc", "tt-metal")
    return ("  - id: 0\n    name: wormhole_galaxy\n    tt_metal:\n"
            f"      soc_descriptor: {soc}/soc_wormhole_b0_80_arch.yaml\n"
            f"      core_descriptor: {soc}/core_wormhole_b0_80_arch.yaml\n"
            "      product: galaxy\n      hw_cqs: 1\n    sram: {reserved: 160KiB}\n")


@pytest.fixture
def parity(own_daemon, tmp_path):
    cfg = tmp_path / "memd.yaml"
    cfg.write_text(
        "devices:\n" + galaxy_device() +
        f"  - id: 1\n    descriptor: {SOURCE_ROOT}/config/devices/wormhole_b0.yaml\n"
        f"  - id: 2\n    descriptor: {SOURCE_ROOT}/tests/data/soc/devices/freelist_1g.yaml\n"
        f"  - id: 3\n    descriptor: {SOURCE_ROOT}/tests/data/soc/devices/freelist_min.yaml\n"
        "sub_devices:\n"
        "  - {name: sd1, device: 0, group: l1, cores: {x: 0-2, y: 0-2}}\n"
        "  - {name: sd2, device: 0, group: l1, cores: [{x: 3, y: 3}, {x: 4, y: 4}]}\n"
        "  - {name: mine, device: 1, group: l1, banks: 0-8}\n")
    return own_daemon(config=str(cfg))


def test_subdev_allocations(parity):
    """dispatch_buffer/test_sub_device.cpp, TensixTestSubDeviceAllocations: sharded buffers
    in their sub-device, an interleaved 1 KiB buffer outside any, refused inside one
    (without a window; test_subdev_windows.py has its local L1 window and addresses)."""
    cores1 = [bank(x, y) for y in range(3) for x in range(3)]
    with memd.connect(parity.socket) as c1, memd.connect(parity.socket) as c2, \
            memd.connect(parity.socket) as plain:
        c1.subdev_bind("sd1")
        c2.subdev_bind("sd2")
        b1 = c1.alloc(0, "constant", 9 * 32, scope="l1", page_size=32, bank_set=cores1)
        assert b1.banks == 9
        assert all(x["core"][0] <= 2 and x["core"][1] <= 2 for x in b1.bank_info())
        assert plain.alloc(0, "constant", 1024, scope="l1", page_size=1024).banks == 64
        with pytest.raises(memd.InvalidRequestError, match="holds no interleaved buffers"):
            c1.alloc(0, "constant", 1024, scope="l1", page_size=1024)
        b3 = c2.alloc(0, "constant", 2 * 64, scope="l1", page_size=64,
                      bank_set=[bank(3, 3), bank(4, 4)])
        assert b3.banks == 2
        with pytest.raises(memd.PermissionError):
            c2.alloc(0, "constant", 9 * 32, scope="l1", page_size=32, bank_set=cores1)
        b4 = c1.alloc(0, "constant", 9 * 32, scope="l1", page_size=32, bank_set=cores1)
        assert b4.address != b1.address


def test_memd_format_keeps_memd_rules(parity):
    """Devices in memd's format: interleaved in a sub-device is lockstep over its banks,
    a per-bank buffer's address is its first bank's, DRAM bank sets are placed."""
    with memd.connect(parity.socket) as c, memd.connect(parity.socket) as u:
        c.subdev_bind("mine")
        assert c.alloc(1, "constant", 1024, scope="l1", page_size=1024).banks == 9
        p = c.alloc(1, "constant", 2048, scope="l1", bank_set=[3], per_bank=True)
        assert p.address == p.bank_info()[0]["address"] != 0
        assert u.alloc(1, "constant", 4096, bank_set=[0, 1]).banks == 2


def test_per_core_socket_address(parity):
    """test_per_core_allocation.cpp, PerCoreSocketDataBufferPlacement: a 2048-byte per-core
    buffer on the receiver core (0,1): 0 < per-core address < l1_size_per_core, address()
    is 0; PerCoreSocketCoexistsWithLockstep: a lockstep buffer (reserved on every core,
    its 2 pages on 2) does not alias it."""
    with memd.connect(parity.socket) as c:
        fifo = c.alloc(0, "constant", 2048, scope="l1", bank_set=[bank(0, 1)], per_bank=True)
        assert fifo.address == 0 and fifo.bank_mode == 2
        (b,) = fifo.bank_info()
        assert b["bank"] == bank(0, 1) and b["core"][:2] == (0, 1)
        assert 0 < b["absolute"] < WORKER_L1_SIZE
        assert c.query(fifo)["address"] == 0
        lock = c.alloc(0, "constant", 2 * PAGE, scope="l1", page_size=PAGE, banks=2)
        assert lock.address != b["address"]


def test_per_core_basic(parity):
    """test_per_core_allocation.cpp, BasicPerCoreAllocation, PerCoreAndLockstepCoexist,
    DeallocationFreesPerCoreSpace, on cores (0,0)-(3,0)."""
    row = [bank(x, 0) for x in range(4)]
    with memd.connect(parity.socket) as c:
        pc = c.alloc(0, "constant", 8 * PAGE, scope="l1", page_size=PAGE, bank_set=row,
                     per_bank=True)
        assert pc.address == 0
        addrs = [x["address"] for x in pc.bank_info()]
        assert all(0 < x["absolute"] < WORKER_L1_SIZE for x in pc.bank_info())
        lock = c.alloc(0, "constant", 8 * PAGE, scope="l1", page_size=PAGE, banks=4)
        assert lock.address not in addrs
        c.free(pc)
        assert c.alloc(0, "constant", 8 * PAGE, scope="l1", page_size=PAGE, bank_set=row,
                       per_bank=True).banks == 4


def test_per_core_sizes(parity):
    """test_per_core_allocation.cpp, DifferentSizesPerCore and DeallocationFreesPerCoreSpace
    with set_per_core_shard_sizes: 1, 2, 3, 4 KiB on cores (0,0)-(3,0) in one request, each
    at its own address inside L1 (top down in an empty L1: every piece ends at the top, so
    its address says its size), and room again once freed."""
    cores = [bank(x, 0) for x in range(4)]
    sizes = [(x + 1) * KiB for x in range(4)]
    with memd.connect(parity.socket) as c:
        for _ in range(2):  # the second after freeing the first
            b = c.alloc(0, "constant", scope="l1", bank_set=cores, mode="per_core", sizes=sizes)
            assert b.size_per_bank == 4 * KiB and b.banks == 4
            ends = set()
            for piece in b.bank_info():
                x = piece["core"][0]
                assert piece["bank"] == bank(x, 0) and piece["core"][:2] == (x, 0)
                assert 0 < piece["absolute"] and piece["absolute"] + sizes[x] <= WORKER_L1_SIZE
                ends.add(piece["address"] + sizes[x])
            assert len(ends) == 1
            b.free()
        # Two in one batch, beside a plain buffer; all or nothing with a zero size.
        req = dict(device=0, cls="constant", scope="l1", bank_set=cores, mode="per_core",
                   sizes=sizes)
        got = c.alloc_batch([req, req, dict(device=0, cls="constant", size=PAGE)])
        assert [b.size_per_bank for b in got[:2]] == [4 * KiB, 4 * KiB]
        for x in range(4):
            a0, a1 = (next(p["address"] for p in b.bank_info() if p["core"][0] == x)
                      for b in got[:2])
            assert a0 + sizes[x] <= a1 or a1 + sizes[x] <= a0
        for b in got:
            b.free()
        with pytest.raises(memd.InvalidRequestError, match="element 1 of 2"):
            c.alloc_batch([req, dict(req, sizes=[KiB, 0, KiB, KiB])])
        assert all(c.lowest_occupied(0, "l1", core) is None for core in cores)  # nothing kept
        with pytest.raises(TypeError, match="with sizes"):
            c.alloc(0, "constant", KiB, scope="l1", bank_set=cores, per_bank=True, sizes=sizes)
        with pytest.raises(ValueError, match="one size per bank"):
            c.alloc(0, "constant", scope="l1", bank_set=cores, per_bank=True, sizes=sizes[:3])
        with pytest.raises(memd.InvalidRequestError):
            c.alloc(0, "constant", scope="l1", bank_set=cores, sizes=sizes)  # not per core


def test_dram_bank_sets_refused(parity):
    """test_range_lockstep_allocation.cpp, RejectsNonL1Buffers: no bank set (nor per bank)
    in DRAM on a tt-metal device, nor a DRAM sub-device."""
    with memd.connect(parity.socket) as c:
        with pytest.raises(memd.InvalidRequestError, match="in L1 only"):
            c.alloc(0, "constant", PAGE, bank_set=[0])
        with pytest.raises(memd.InvalidRequestError, match="in L1 only"):
            c.alloc(0, "constant", PAGE, per_bank=True)
        c.alloc(0, "constant", PAGE)
        with pytest.raises(memd.InvalidRequestError, match="sets of cores"):
            c.subdev_define("dram", 0, "dram", [0, 1])


def test_freelist_allocate_at_address(parity):
    """test_free_list_opt_allocator.cpp, FreeListOptTest.AllocateAtAddress; and what
    tt-metal asserts rather than returns: a misaligned address, a range past the end."""
    with memd.connect(parity.socket) as c:
        a = c.alloc(2, "constant", KiB)
        assert a.address == 0
        assert c.alloc(2, "constant", KiB, address=KiB).address == KiB
        with pytest.raises(memd.BusyError, match="is taken") as e:
            c.alloc(2, "constant", KiB, address=KiB)
        assert e.value.errno == errno.EBUSY
        assert c.alloc(2, "constant", KiB, address=2 * KiB).address == 2 * KiB
        c.free(a)
        assert c.alloc(2, "constant", KiB, address=0).address == 0
        with pytest.raises(memd.InvalidRequestError, match="multiples of 1024"):
            c.alloc(2, "constant", KiB, address=4 * KiB + 16)
        with pytest.raises(memd.Error, match="do not lie inside") as e:
            c.alloc(2, "constant", 2 * KiB, address=GiB - KiB)
        assert e.value.errno == errno.ERANGE
        with pytest.raises(TypeError, match="unknown key 'address'"):  # alloc only
            c.alloc_batch([dict(device=2, cls="constant", size=KiB, address=0)])


@pytest.mark.parametrize("first, top, fit", [("constant", "placeholder", "first"),
                                               ("code", "internal", "best")])
def test_freelist_at_address_interactions(parity, first, top, fit):
    """FreeListOptTest.FirstFitAllocateAtAddressInteractions (first fit: z at the top) and
    AllocateAtAddressInteractions (tt-metal's best fit: z at 32 KiB - 1 KiB, the end of
    the smallest block that fits; memd's exact best fit gives the same here)."""
    with memd.connect(parity.socket) as c:
        c.alloc(2, "constant", KiB, address=32 * KiB)
        assert c.alloc(2, first, KiB).address == 0
        z = c.alloc(2, top, KiB).address
        assert z == (GiB - KiB if fit == "first" else 32 * KiB - KiB)
        assert c.alloc(2, first, KiB).address == KiB


def test_at_address_bank_sets(parity):
    """At an address with a bank set (range lockstep), per bank (each piece there), and
    lockstep over every bank then finding it taken."""
    with memd.connect(parity.socket) as c:
        top = c.alloc(0, "constant", 4096, scope="l1")
        at = top.address - 64 * KiB
        r = c.alloc(0, "constant", 4096, scope="l1", bank_set=[bank(0, 0), bank(1, 0)],
                    address=at)
        assert r.address == at and {x["address"] for x in r.bank_info()} == {at}
        p = c.alloc(0, "constant", 4096, scope="l1", bank_set=[bank(2, 0), bank(3, 0)],
                    per_bank=True, address=at)
        assert p.address == 0 and {x["address"] for x in p.bank_info()} == {at}
        with pytest.raises(memd.BusyError):
            c.alloc(0, "constant", 4096, scope="l1", address=at)
        assert c.alloc(0, "constant", 4096, scope="l1", address=at - 8 * KiB).address == \
            at - 8 * KiB


def test_freelist_lowest_occupied(parity):
    """FreeListOptTest.LowestOccupiedAddress and LowestOccupiedAddressWithAllocateAt."""
    with memd.connect(parity.socket) as c:
        bufs = [c.alloc(2, "constant", KiB) for _ in range(3)]
        assert [b.address for b in bufs] == [0, KiB, 2 * KiB]
        assert c.lowest_occupied(2, "dram", 0) == (0, 0)
        for b, then in zip(bufs, [KiB, 2 * KiB, None]):
            c.free(b)
            got = c.lowest_occupied(2, "dram", 0)
            assert (got and got[0]) == then
        w = c.alloc(2, "constant", KiB, address=KiB)
        assert c.lowest_occupied(2, "global", 0)[0] == KiB
        c.free(w)
        assert c.lowest_occupied(2, "dram", 0) is None
        with pytest.raises(memd.InvalidRequestError, match="no bank 1"):
            c.lowest_occupied(2, "dram", 1)
        with pytest.raises(ValueError, match="group must be"):
            c.lowest_occupied(2, "hbm", 0)


def test_lowest_per_bank(parity):
    """A per-core buffer lowers only its core's lowest occupied address, a lockstep buffer
    every core's (tt-metal checks circular buffers against L1 buffers with it)."""
    one, other = bank(0, 0), bank(1, 0)
    with memd.connect(parity.socket) as c:
        assert c.lowest_occupied(0, "l1", one) is None
        lock = c.alloc(0, "constant", 64 * KiB, scope="l1")
        pc = c.alloc(0, "constant", 4 * KiB, scope="l1", bank_set=[one], per_bank=True)
        (piece,) = pc.bank_info()
        assert piece["address"] < lock.address
        assert c.lowest_occupied(0, "l1", one) == (piece["address"], piece["absolute"])
        assert c.lowest_occupied(0, "sram", other)[0] == lock.address


def test_freelist_basics(parity):
    """test_free_list_opt_allocator.cpp: FreeListOptTest.Allocation, AllocateFromTop,
    FirstFit, Coalescing, OutOfMemory, Alignment, MinAllocationSize."""
    with memd.connect(parity.socket) as c:
        top = [c.alloc(2, cls, KiB) for cls in ("placeholder", "placeholder", "constant")]
        assert [b.address for b in top] == [GiB - KiB, GiB - 2 * KiB, 0]
        c.free_batch(top)
        ff = [c.alloc(2, "constant", n * KiB) for n in (1, 3, 1, 1, 1)]
        assert [b.address for b in ff] == [0, KiB, 4 * KiB, 5 * KiB, 6 * KiB]
        c.free_batch([ff[1], ff[3]])
        f = c.alloc(2, "constant", KiB)
        assert f.address == KiB
        c.free_batch([ff[0], f, ff[2], ff[4]])
        assert not alloc_handles(c.dump(2))
        a, b, third = [c.alloc(2, "constant", KiB) for _ in range(3)]
        c.free(b)
        c.free(a)
        two = c.alloc(2, "constant", 2 * KiB)
        assert two.address == 0
        c.free_batch([two, third])
        whole = c.alloc(2, "constant", GiB)
        with pytest.raises(memd.OutOfMemory):
            c.alloc(2, "constant", KiB)
        c.free(whole)
        c.alloc(2, "constant", GiB - KiB)
        with pytest.raises(memd.OutOfMemory):
            c.alloc(2, "constant", 2 * KiB)
        assert [c.alloc(3, "constant", 64).address for _ in range(2)] == [0, KiB]
        m = [c.alloc(3, "constant", 1, scope="l1") for _ in range(2)]
        assert [x.address for x in m] == [0, KiB] and m[0].size_per_bank == KiB


def test_range_beside_per_core_hog(parity):
    """test_range_lockstep_allocation.cpp, PlacesBesideAPerCoreHogWhenScoped (also
    ...ScopedByADistributionSpec, ScopesDependenciesOnADirectBufferCreate) and
    RefusesToPlaceBesideAPerCoreHogWhenNotScoped: 60% of L1 per core on (0,0); the same
    size on (1,0) fits with mode='range_lockstep' (at the hog's very address: both top
    down), not as lockstep (scanned over every core); a uniform per-core bank set fits
    too."""
    with memd.connect(parity.socket) as c:
        sram = next(g for g in c.dump(0)["devices"][0]["bank_groups"] if g["kind"] == "sram")
        size = sram["regions"][0]["size"] * 6 // 10 // PAGE * PAGE
        assert size > sram["regions"][0]["size"] // 2
        hog = c.alloc(0, "constant", size, scope="l1", page_size=size, bank_set=[bank(0, 0)],
                      mode="per_core")
        assert hog.bank_mode == 2
        with pytest.raises(memd.OutOfMemory):
            c.alloc(0, "constant", size, scope="l1", page_size=size, banks=1)
        rl = c.alloc(0, "constant", size, scope="l1", page_size=size, bank_set=[bank(1, 0)],
                     mode="range_lockstep")
        assert rl.bank_mode == 3 and rl.banks == 1
        assert rl.address == hog.bank_info()[0]["address"]
        rec = [a for a in c.dump(0)["allocations"] if a["handle"] == rl.handle]
        assert rec[0]["bank_mode"] == "range_lockstep" and rec[0]["bank_ids"] == [bank(1, 0)]
        rl.free()
        u = c.alloc(0, "constant", size, scope="l1", page_size=size, bank_set=[bank(1, 0)],
                    mode="uniform_per_core")
        assert u.bank_mode == 1 and u.banks == 1


def test_range_lockstep_reserved_on_every_core(parity):
    """test_uniform_per_core_allocation.cpp's header: a range-lockstep allocation sits in
    the lockstep allocator, which every core's per-core allocator avoids, so a whole-bank
    per-core allocation on another core fails (where a uniform one leaves it free:
    UniformPerCoreLeavesTheAddressFreeOnOtherCores); lockstep avoids it too; freed, the
    cores are whole again. test_range_lockstep_allocation.cpp, RejectsNonL1Buffers."""
    row = [bank(0, 0), bank(1, 0)]
    with memd.connect(parity.socket) as c:
        sram = next(g for g in c.dump(0)["devices"][0]["bank_groups"] if g["kind"] == "sram")
        whole = sram["regions"][0]["size"] // PAGE * PAGE

        def on(cores, size, mode):
            return c.alloc(0, "constant", size * len(cores), scope="l1", page_size=size,
                           bank_set=cores, mode=mode)

        small = on([row[0]], PAGE, "range_lockstep")
        for core in row:
            with pytest.raises(memd.OutOfMemory):
                on([core], whole, "per_core")
        with pytest.raises(memd.OutOfMemory):
            c.alloc(0, "constant", whole, scope="l1", page_size=whole, banks=1)
        small.free()
        c.free(on(row, whole, "per_core"))
        first, second = on([row[0]], PAGE, "range_lockstep"), on([row[1]], PAGE, "range_lockstep")
        assert second.address == first.address - PAGE  # not shared, unlike uniform per-core
        with pytest.raises(memd.InvalidRequestError, match="in L1 only"):
            c.alloc(0, "constant", PAGE, bank_set=[0], mode="range_lockstep")
        with pytest.raises(memd.InvalidRequestError, match="needs a bank set"):
            c.alloc(0, "constant", PAGE, scope="l1", mode="range_lockstep")
        with pytest.raises(ValueError, match="uniform_per_core"):
            c.alloc(0, "constant", PAGE, scope="l1", bank_set=[0], mode="sideways")
        # Batches take the mode per request.
        b = c.alloc_batch([{"device": 0, "cls": "constant", "size": PAGE, "scope": "l1",
                            "bank_set": [row[0]], "mode": "range_lockstep"}])
        assert b[0].bank_mode == 3


def test_range_lockstep_survives_a_restart(parity):
    """A range-lockstep buffer over another core's per-core hog (PlacesBesideAPerCoreHog)
    keeps its address and mode across a daemon crash, still reserved on every core."""
    with memd.connect(parity.socket) as c:
        sram = next(g for g in c.dump(0)["devices"][0]["bank_groups"] if g["kind"] == "sram")
        size = sram["regions"][0]["size"] * 6 // 10 // PAGE * PAGE
        c.alloc(0, "constant", size, scope="l1", page_size=size, bank_set=[bank(0, 0)],
                mode="per_core")
        rl = c.alloc(0, "constant", size, scope="l1", page_size=size, bank_set=[bank(1, 0)],
                     mode="range_lockstep")
        parity.kill()
        parity.start()
        assert c.reconnect(timeout_ms=5000) is True
        q = c.query(rl.handle)
        assert q["address"] == rl.address
        rec = [a for a in c.dump(0)["allocations"] if a["handle"] == rl.handle]
        assert rec[0]["bank_mode"] == "range_lockstep"
        with pytest.raises(memd.OutOfMemory):
            c.alloc(0, "constant", size, scope="l1", page_size=size, bank_set=[bank(2, 0)],
                    mode="per_core")
        rl.free()
        c.alloc(0, "constant", size, scope="l1", page_size=size, bank_set=[bank(2, 0)],
                mode="per_core")


def test_l1_top_down_and_statistics(parity):
    """test_l1_banking_allocator.cpp, TestL1BuffersAllocatedTopDown (32, 64, 128 KiB in turn,
    each at l1_size_per_core minus the bytes so far) and TestL1BuffersDoNotGrowBeyondBankSize;
    FreeListOptTest.Statistics (the region's allocated bytes after a free)."""
    with memd.connect(parity.socket) as c:
        sram = next(g for g in c.dump(0)["devices"][0]["bank_groups"] if g["kind"] == "sram")
        limit, total, i = sram["regions"][0]["size"], 0, 0
        while total + (size := (32 * KiB, 64 * KiB, 128 * KiB)[i % 3]) < limit:
            b = c.alloc(0, "constant", size, scope="l1", page_size=size)
            total += size
            i += 1
            assert c.bank_addresses(b)[0] == WORKER_L1_SIZE - total
        with pytest.raises(memd.OutOfMemory):  # larger than the region: out of memory
            c.alloc(0, "constant", limit + 64, scope="l1", page_size=limit + 64)
        a, _ = c.alloc(2, "constant", KiB), c.alloc(2, "constant", KiB)
        c.free(a)
        data = c.dump(2)["devices"][0]["bank_groups"][0]["regions"][0]
        assert data["allocated"] == KiB


def test_uniform_per_core(parity):
    """test_uniform_per_core_allocation.cpp (tt-metal's uniform per-core allocation is
    memd's bank set): UniformPerCoreTakesOneAddressOnEveryCore, ...LeavesTheAddressFreeOn
    OtherCores, ...IsAvoidedOnItsOwnCores, ...IsAvoidedByLockstep,
    ...BuffersOnDisjointCoresShareAnAddress, ...ReleasesEveryCoreOnDeallocation."""
    row = [bank(0, 0), bank(1, 0), bank(2, 0)]
    with memd.connect(parity.socket) as c:
        sram = next(g for g in c.dump(0)["devices"][0]["bank_groups"] if g["kind"] == "sram")
        whole = sram["regions"][0]["size"] // PAGE * PAGE

        def on(cores, size, uniform):
            return c.alloc(0, "constant", size * len(cores), scope="l1", page_size=size,
                           bank_set=cores, per_bank=not uniform)

        skew = on([row[1]], PAGE, False)
        sk = skew.bank_info()[0]["address"]
        u = on(row, PAGE, True)
        assert u.address != 0 and {b["address"] for b in u.bank_info()} == {u.address}
        assert u.address + PAGE <= sk or sk + PAGE <= u.address
        c.free_batch([skew, u])
        small = on([row[0]], PAGE, True)
        c.free(on([row[1]], whole, False))
        with pytest.raises(memd.OutOfMemory):
            on([row[0]], whole, False)
        with pytest.raises(memd.OutOfMemory):
            c.alloc(0, "constant", whole, scope="l1", page_size=whole, banks=1)
        c.free(small)
        first, second = on([row[0]], PAGE, True), on([row[1]], PAGE, True)
        assert first.address == second.address
        c.free_batch([first, second])
        c.free(on(row[:2], PAGE, True))
        assert on(row[:2], whole, False).banks == 2
