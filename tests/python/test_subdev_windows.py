"""Sub-device windows (issue 28, point g: tt-metal's sub-device manager local L1) from
Python against a real daemon: tt-metal's TensixTestSubDeviceAllocations with its expected
addresses, then a crash and restart that keep the window carved and its buffer inside.
Device 0 is tt-metal's Wormhole galaxy (its own descriptors)."""

import pytest

import memd
from test_ttmetal_parity import bank, galaxy_device

LOCAL_L1_SIZE = 3200  # TensixTestSubDeviceAllocations' local_l1_size
CORES_1 = [bank(x, y) for y in range(3) for x in range(3)]  # sub_device_1: (0,0)-(2,2)
CORES_2 = [bank(3, 3), bank(4, 4)]                          # sub_device_2


@pytest.fixture
def galaxy(own_daemon, tmp_path):
    cfg = tmp_path / "memd.yaml"
    cfg.write_text("devices:\n" + galaxy_device())
    return own_daemon(config=str(cfg))


def l1_range(c):
    """The L1 buffers region's range: its base (l1_unreserved_base) and its bottom given up."""
    (r,) = [x for x in c.region_ranges(device=0) if x["kind"] == "sram"]
    return r["start"] - r["bottom"], r["bottom"]


def define_both(c):
    c.subdev_define("sub_device_1", 0, "l1", CORES_1, window=LOCAL_L1_SIZE)
    c.subdev_define("sub_device_2", 0, "l1", CORES_2, window=LOCAL_L1_SIZE)


def shard_1(c):
    """shard_config_1: height sharded, one 32-byte page on each core of sub_device_1."""
    return c.alloc(0, "constant", 9 * 32, scope="l1", page_size=32, bank_set=CORES_1)


def test_subdev_allocations(galaxy):
    """dispatch_buffer/test_sub_device.cpp, TensixTestSubDeviceAllocations: max_addr =
    l1_unreserved_base + local_l1_size; buffer_1 at max_addr - 32, buffer_2 (interleaved
    1 KiB, global) outside the window, buffer_3 (64 bytes on core (4,4)) at max_addr - 64,
    buffer_4 at max_addr - 32 once buffer_1 is freed; interleaved in a sub-device refused."""
    with memd.connect(galaxy.socket) as root, memd.connect(galaxy.socket) as c1, \
            memd.connect(galaxy.socket) as c2:
        define_both(root)
        base, bottom = l1_range(root)
        assert bottom == LOCAL_L1_SIZE
        max_addr = base + LOCAL_L1_SIZE
        c1.subdev_bind("sub_device_1")
        c2.subdev_bind("sub_device_2")
        b1 = shard_1(c1)
        assert b1.address == max_addr - 32
        b2 = root.alloc(0, "constant", 1024, scope="l1", page_size=1024)
        assert b2.address >= max_addr and b2.banks == 64
        with pytest.raises(memd.InvalidRequestError, match="holds no interleaved buffers"):
            c1.alloc(0, "constant", 1024, scope="l1", page_size=1024)
        b1.free()
        b3 = c2.alloc(0, "constant", 64, scope="l1", page_size=64, bank_set=[bank(4, 4)])
        assert b3.address == max_addr - 64
        assert shard_1(c1).address == max_addr - 32
        with pytest.raises(memd.InvalidRequestError, match="holds no interleaved buffers"):
            c1.alloc(0, "constant", 1024, scope="l1", page_size=1024)
        # Dumps show each window and what its buffers take there (per bank).
        sd = {d["name"]: d for d in root.dump()["sub_devices"]}
        assert [(sd[n]["window"], sd[n]["window_start"], sd[n]["window_allocated"])
                for n in ("sub_device_1", "sub_device_2")] == [
            (LOCAL_L1_SIZE, base, 32), (LOCAL_L1_SIZE, base, 64)]


def test_refused_while_a_buffer_is_there(galaxy):
    """tt-metal's shrink_size refuses to cut into an allocated block: so does a window."""
    with memd.connect(galaxy.socket) as root:
        base, _ = l1_range(root)
        held = root.alloc(0, "constant", 1024, scope="l1", page_size=1024, address=base)
        with pytest.raises(memd.BusyError, match=f"a buffer there starts at {base:#x}"):
            define_both(root)
        held.free()
        define_both(root)
        assert l1_range(root) == (base, LOCAL_L1_SIZE)


def test_survives_crash(galaxy):
    """A defined window is in the state store: after a crash the bottom is still carved
    and the buffer held in it still there, the next one below it."""
    with memd.connect(galaxy.socket) as root:
        define_both(root)
        base, _ = l1_range(root)
    max_addr = base + LOCAL_L1_SIZE
    c1 = memd.connect(galaxy.socket)
    c1.subdev_bind("sub_device_1")
    held = shard_1(c1)
    galaxy.kill()
    galaxy.start()
    assert c1.reconnect(5000)
    with memd.connect(galaxy.socket) as root:
        assert l1_range(root) == (base, LOCAL_L1_SIZE)
        assert root.query(held.handle)["address"] == max_addr - 32
    assert shard_1(c1).address == max_addr - 64
    c1.close()
