"""memd.Client.pool against the real daemon: sub-allocation in the process, context
managers, growth and its limit, errors, and what memd (memctl dump --json) shows."""
import random

import pytest

import memd
from conftest import run_threads

KiB = 1 << 10
MiB = 1 << 20


def pools_of(doc, handle):
    return [p for p in doc["pools"] if p["handle"] == handle]


def test_pool_alloc_free_and_context_managers(client, daemon):
    with client.pool(0, "internal", MiB, name="py.pool") as pool:
        assert isinstance(pool, memd.Pool)
        assert pool.size == MiB and pool.leases == 1 and pool.allocations == 0
        a = pool.alloc(4096, name="conv1.out")
        b = pool.alloc(100, alignment=256, name="relu1.out")
        assert isinstance(a, memd.PoolBuffer)
        assert a.address == pool.address and a.offset == 0 and a.lease == pool.handle
        assert b.address % 256 == 0 and b.size == 128 and b.name == "relu1.out"
        assert pool.used == 4096 + 128 and pool.allocations == 2
        with pool.alloc(64) as c:
            assert c.name is None and not c.freed
        assert c.freed and pool.allocations == 2
        pool.free(b)
        assert b.freed
        with pytest.raises(memd.NotFoundError):
            b.free()
        pool.flush()
        doc = daemon.dump()
        [p] = pools_of(doc, pool.handle)
        assert p["name"] == "py.pool" and p["pooled_bytes"] == 4096
        assert [(s["name"], s["offset"], s["size"]) for s in p["suballocations"]] == \
            [("conv1.out", 0, 4096)]
        assert p["as_of_ns"] > 0
        [alloc] = [x for x in doc["allocations"] if x["handle"] == pool.handle]
        assert alloc["pool"] is True
        handle = pool.handle
    assert pool.closed
    pool.close()  # twice is fine
    with pytest.raises(memd.NotFoundError):
        pool.alloc(64)
    assert not pools_of(daemon.dump(), handle)


def test_pool_matches_its_own_books_randomly(client):
    """A seeded random mix: no two live buffers overlap, everything stays in the pool, and
    the pool's counters agree with what the test holds."""
    rng = random.Random(1234)
    with client.pool(0, "internal", 4 * MiB) as pool:
        live = []
        for _ in range(3000):
            if live and rng.random() < 0.45:
                live.pop(rng.randrange(len(live))).free()
            else:
                try:
                    live.append(pool.alloc(rng.randint(1, 64 * KiB),
                                           alignment=rng.choice([0, 64, 4096])))
                except memd.OutOfMemory:
                    pass
            spans = sorted((b.address, b.address + b.size) for b in live)
            assert all(x[1] <= y[0] for x, y in zip(spans, spans[1:]))
        assert all(pool.address <= b.address and b.address + b.size <= pool.address + pool.size
                   for b in live)
        assert pool.used == sum(b.size for b in live)
        assert pool.allocations == len(live)
        pool.flush()


def test_pool_growth_and_limit(client):
    with client.pool(0, "internal", 64 * KiB, grow=True, limit=128 * KiB) as pool:
        a = pool.alloc(48 * KiB)
        b = pool.alloc(48 * KiB)
        assert a.lease != b.lease and pool.leases == 2 and pool.limit == 128 * KiB
        with pytest.raises(memd.OutOfMemory) as e:
            pool.alloc(48 * KiB)
        assert "limit" in str(e.value)
    with client.pool(0, "internal", 64 * KiB) as fixed:
        fixed.alloc(48 * KiB)
        with pytest.raises(memd.OutOfMemory) as e:
            fixed.alloc(48 * KiB)
        assert "pool full" in str(e.value)


def test_pool_bad_arguments(client):
    with pytest.raises(TypeError):
        client.pool(0, "internal")
    with pytest.raises(ValueError):
        client.pool(0, "internal", 0)
    with pytest.raises(ValueError):
        client.pool(0, "nonsense", MiB)
    with client.pool(0, "internal", MiB) as pool:
        with pytest.raises(ValueError):
            pool.alloc(0)
        with pytest.raises(ValueError):
            pool.alloc(64, alignment=3)
        with pytest.raises(ValueError):
            pool.alloc(64, name="n" * 64)
        with pytest.raises(TypeError):
            pool.alloc(64.0)
        with pytest.raises(ValueError):
            pool.alloc("64 bytes")  # a size string as memctl takes them: "64", "64B"
        with pytest.raises(memd.NotFoundError):
            pool.free(12345)
        with client.pool(0, "internal", MiB) as other:
            buf = other.alloc(64)
            with pytest.raises(ValueError):
                pool.free(buf)


def test_threads_share_one_pool(client):
    with client.pool(0, "internal", 2 * MiB) as pool:
        def work(seed):
            rng = random.Random(seed)
            mine = []
            for _ in range(2000):
                if mine and rng.random() < 0.5:
                    mine.pop().free()
                else:
                    mine.append(pool.alloc(rng.randint(1, 2048)))
            for b in mine:
                b.free()
        assert not run_threads(work, 4)
        assert pool.allocations == 0 and pool.used == 0
        pool.flush()


def test_closed_client_ends_its_pools(daemon):
    c = memd.connect(daemon.socket, name="pytest-pool-close")
    pool = c.pool(0, "internal", MiB)
    buf = pool.alloc(64)
    c.close()
    with pytest.raises(memd.ConnectionError):
        pool.alloc(64)
    with pytest.raises(memd.ConnectionError):
        buf.free()
    pool.close()  # nothing left to do: the session ended it
    assert pool.closed


def test_pool_api_is_documented():
    for obj in (memd.Client.pool, memd.Pool.alloc, memd.Pool.free, memd.Pool.flush,
                memd.Pool.close, memd.PoolBuffer.free):
        assert obj.__doc__ and len(obj.__doc__) > 30, obj
    import os
    stub = open(os.path.join(os.path.dirname(memd.__file__), "__init__.pyi")).read()
    for name in ("class Pool", "class PoolBuffer", "def pool("):
        assert name in stub


def test_refused_pool_counts_what_memd_has_not_heard(own_daemon, tmp_path):
    """Issue 27: a pool past max_suballocs_per_pool is refused; the library stops
    resending it every 50 ms (backs off), and Pool.unreported / refused_errno say so
    (unreported read 0 before)."""
    import errno
    import time
    from conftest import SOURCE_ROOT
    cfg = tmp_path / "memd.yaml"
    cfg.write_text("limits: {max_suballocs_per_pool: 8}\ndevices:\n  - id: 0\n"
                   f"    descriptor: {SOURCE_ROOT}/config/devices/wormhole_b0.yaml\n")
    d = own_daemon(config=str(cfg))
    with memd.connect(d.socket) as c:
        pool = c.pool(0, "internal", MiB)
        subs = [pool.alloc(4096) for _ in range(12)]
        with pytest.raises(memd.Error) as e:
            pool.flush()
        assert e.value.errno == errno.EMFILE
        assert pool.unreported == 12 and pool.refused_errno == errno.EMFILE
        before = d.dump()["server"]["requests"]
        time.sleep(2)
        served = d.dump()["server"]["requests"] - before - 1
        assert served <= 6, f"{served} requests in 2 s of an idle refused pool"
        assert pool.unreported == 12
        for b in subs[:4]:
            b.free()
        try:
            pool.flush()  # may still tell of the timer's refusals while idle
        except memd.Error:
            pass
        pool.flush()
        assert pool.unreported == 0 and pool.refused_errno == 0
        pool.close()
