"""Region ranges shrunk and restored (tt-metal's shrink_size / reset_size) from Python,
against a real daemon: tt-metal's own tests with its expected numbers (each names the
test it transcribes, from tests/tt_metal/tt_metal/api/allocator/), the refusals, the
ranges a dump shows, and a daemon crash. Device 0 is the FreeList tests' allocator (1024
bytes, 32-byte alignment), device 1 the FreeListOpt tests' (1 GiB, 1 KiB alignment);
constants go bottom-up, placeholders top-down."""
import errno

import pytest

import memd
from conftest import SOURCE_ROOT

KiB = 1 << 10
GiB = 1 << 30


@pytest.fixture
def ranges(own_daemon, tmp_path):
    devices = f"{SOURCE_ROOT}/tests/data/soc/devices"
    cfg = tmp_path / "memd.yaml"
    cfg.write_text(f"devices:\n  - id: 0\n    descriptor: {devices}/freelist_1k.yaml\n"
                   f"  - id: 1\n    descriptor: {devices}/freelist_1g.yaml\n")
    return own_daemon(config=str(cfg))


def up(c, dev, size):
    return c.alloc(dev, "constant", size)


def down(c, dev, size):
    return c.alloc(dev, "placeholder", size)


def test_freelist_resize(ranges):
    """test_free_list_allocator.cpp, FreeListAllocator.TestResizeAllocator."""
    with memd.connect(ranges.socket) as c:
        assert down(c, 0, 32).address == 992
        c.region_shrink(0, "dram", 0, 64)
        assert down(c, 0, 32).address == 960
        assert up(c, 0, 32).address == 64
        c.region_reset(0, "dram", 0)
        a3 = up(c, 0, 32)
        assert a3.address == 0
        a4 = up(c, 0, 32)
        assert a4.address == 32
        c.free(a3)
        assert up(c, 0, 64).address == 96
        c.region_shrink(0, "dram", 0, 32)
        c.free(a4)
        assert up(c, 0, 32).address == 32


def test_freelist_directed_resize(ranges):
    """test_free_list_allocator.cpp, FreeListAllocator.TestDirectedResizeAllocator."""
    with memd.connect(ranges.socket) as c:
        a0 = c.alloc(0, "constant", 992, address=32)
        assert a0.address == 32
        c.region_shrink(0, "dram", 0, 32, end="bottom")
        with pytest.raises(memd.OutOfMemory):
            down(c, 0, 32)
        with pytest.raises(memd.Error):
            c.alloc(0, "constant", 32, address=0)
        c.free(a0)
        a3 = up(c, 0, 32)
        assert a3.address == 32
        assert down(c, 0, 32).address == 992
        c.region_reset(0, "dram", 0, ends="bottom")
        assert up(c, 0, 32).address == 0
        c.free(a3)
        assert up(c, 0, 32).address == 32


def test_freelist_opt_shrink_and_reset(ranges):
    """test_free_list_opt_allocator.cpp, FreeListOptTest.ShrinkAndReset and
    CoalescingAfterResetShrink."""
    with memd.connect(ranges.socket) as c:
        a, b = up(c, 1, KiB), up(c, 1, KiB)
        assert (a.address, b.address) == (0, KiB)
        c.free(a)
        c.region_shrink(1, "dram", 0, KiB)
        for at in (0, KiB):
            with pytest.raises(memd.Error):
                c.alloc(1, "constant", KiB, address=at)
        c.region_reset(1, "dram", 0)
        c.free(b)
        c.free(up(c, 1, 2 * KiB))
        a, b, cc = up(c, 1, KiB), up(c, 1, KiB), up(c, 1, KiB)
        assert (a.address, b.address, cc.address) == (0, KiB, 2 * KiB)
        c.free(b)
        c.free(a)
        c.region_shrink(1, "dram", 0, KiB)
        up(c, 1, 2 * KiB)
        c.region_reset(1, "dram", 0)
        assert up(c, 1, 2 * KiB).address == 0


def test_refusals_and_ranges(ranges):
    """A buffer in the part to give up (tt-metal's TT_FATAL "cuts into allocated block"),
    a size off the alignment, more than is left, a bad end; what region_ranges shows."""
    with memd.connect(ranges.socket) as c:
        up(c, 0, 64)
        hi = down(c, 0, 32)
        with pytest.raises(memd.BusyError, match="starts at 0x0") as e:
            c.region_shrink(0, "dram", 0, 32)
        assert e.value.errno == errno.EBUSY
        with pytest.raises(memd.BusyError, match="ends at 0x400"):
            c.region_shrink(0, "dram", 0, 64, end="top")
        with pytest.raises(memd.InvalidRequestError, match="alignment 32"):
            c.region_shrink(0, "dram", 0, 48, end="top")
        with pytest.raises(ValueError, match="'bottom' or 'top'"):
            c.region_shrink(0, "dram", 0, 64, end="both")
        c.free(hi)
        r = c.region_shrink(0, "dram", 0, 64, end="top")
        assert r == dict(device=0, kind="dram", region=0, bottom=0, top=64, start=0, end=960)
        with pytest.raises(memd.Error, match="is left") as e:
            c.region_shrink(0, "dram", 0, 1024)
        assert e.value.errno == errno.ERANGE
        assert down(c, 0, 32).address == 928
        rs = c.region_ranges()
        assert [(x["device"], x["name"], x["top"], x["end"]) for x in rs] == [
            (0, "data", 64, 960), (1, "data", 0, GiB)]
        assert c.region_ranges(device=1)[0]["bottom"] == 0


def test_survives_crash(ranges):
    """The parts given up are in the state store before the reply."""
    with memd.connect(ranges.socket) as c:
        c.region_shrink(0, "dram", 0, 64)
        c.region_shrink(0, "dram", 0, 32, end="top")
    ranges.kill()
    ranges.start()
    with memd.connect(ranges.socket) as c:
        r = c.region_ranges(device=0)[0]
        assert (r["bottom"], r["top"], r["start"], r["end"]) == (64, 32, 64, 992)
        assert up(c, 0, 32).address == 64
        assert down(c, 0, 32).address == 960
