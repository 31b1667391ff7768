"""memd.plan / memd.validate / memd.lower_bound: the engine's planner offline."""
import csv
import os
import random

import pytest

import memd
from conftest import SHARED_DATA, least_stall, spins_during


def brute_check(bufs, offsets):
    """An independent O(n^2) overlap check: the plan is valid by this file's own rules."""
    arena = 0
    norm = [(b[0], b[1], b[2], (b[3] if len(b) > 3 else 0) or 1) for b in bufs]
    for i, (lo, up, size, al) in enumerate(norm):
        assert offsets[i] % al == 0, f"buffer {i} misaligned"
        arena = max(arena, offsets[i] + size)
        for j in range(i):
            lo2, up2, size2, _ = norm[j]
            if lo < up2 and lo2 < up and size and size2:
                assert offsets[i] + size <= offsets[j] or offsets[j] + size2 <= offsets[i], \
                    f"buffers {j} and {i} overlap"
    return arena


def test_small_problem_is_optimal():
    bufs = [(0, 2, 1024), (1, 3, 4096, 256), (2, 4, 512), (3, 5, 2048, 64)]
    p = memd.plan(bufs, budget_ms=50)
    assert len(p.offsets) == 4
    assert brute_check(bufs, p.offsets) == p.arena == memd.validate(bufs, p.offsets)
    assert p.lower_bound == memd.lower_bound(bufs) == 1024 + 4096
    assert p.arena >= p.lower_bound and p.gap == (p.arena - p.lower_bound) / p.lower_bound
    assert p.strategy and isinstance(p.optimal, bool) and p.plan_ms >= 0
    assert "buffers" in repr(p)


def test_deterministic_without_clock_and_seeded():
    rng = random.Random(5)
    bufs = [(s, s + rng.randint(1, 30), rng.randint(1, 1 << 16), 1 << rng.randint(0, 8))
            for s in (rng.randint(0, 200) for _ in range(400))]
    a = memd.plan(bufs, seed=1, iterations=2000)
    b = memd.plan(bufs, seed=1, iterations=2000)
    assert a.offsets == b.offsets and a.arena == b.arena and a.iterations <= 2000
    assert brute_check(bufs, a.offsets) == a.arena
    greedy = memd.plan(bufs, budget_ms=0)
    assert greedy.arena >= a.arena >= a.lower_bound
    assert brute_check(bufs, greedy.offsets) == greedy.arena
    with pytest.raises(ValueError):
        memd.plan(bufs, iterations=0)


def test_objects_dicts_pins_and_empty():
    class Buf:
        def __init__(self, name, lower, upper, size, alignment=0, offset=None):
            self.name, self.lower, self.upper, self.size = name, lower, upper, size
            self.alignment, self.offset = alignment, offset
    bufs = [Buf("a", 0, 4, 100), Buf("b", 1, 3, 64, 64, offset=128),
            {"lower": 2, "upper": 5, "size": 50, "align": 16}]
    p = memd.plan(bufs, budget_ms=20)
    assert p.offsets[1] == 128  # pinned
    assert p.offsets[2] % 16 == 0
    assert memd.validate(bufs, p.offsets) == p.arena
    empty = memd.plan([], budget_ms=10)
    assert empty.offsets == [] and empty.arena == 0 and empty.lower_bound == 0
    gen = memd.plan(((i, i + 1, 10) for i in range(5)), budget_ms=10)  # any iterable
    assert gen.arena == 10


def test_validate_names_the_two_overlapping_buffers():
    class Buf:
        def __init__(self, name, lower, upper, size):
            self.name, self.lower, self.upper, self.size = name, lower, upper, size
    bufs = [Buf("conv1.out", 0, 3, 100), Buf("relu1.out", 2, 5, 100), Buf("x", 5, 6, 10)]
    with pytest.raises(memd.PlanError) as e:
        memd.validate(bufs, [0, 50, 0])
    err = e.value
    assert isinstance(err, ValueError) and err.issue == "overlap"
    assert {err.a, err.b} == {0, 1} and set(err.names) == {"conv1.out", "relu1.out"}
    assert "'conv1.out'" in str(err) and "'relu1.out'" in str(err)
    with pytest.raises(memd.PlanError) as e:
        memd.validate([(0, 2, 64, 64), (0, 2, 64, 64)], [0, 96])
    assert e.value.issue == "misaligned" and e.value.a == 1 and e.value.b is None
    assert "#1" in str(e.value)
    with pytest.raises(memd.PlanError) as e:
        memd.validate([(0, 2, 64, 0, 0), (3, 4, 8)], [64, 0])
    assert e.value.issue == "pin-moved"
    assert memd.validate([(0, 2, 64), (2, 4, 64)], [0, 0]) == 64  # half-open lifetimes


def test_bad_problems_are_clear_errors():
    cases = [
        (memd.PlanError, [(3, 3, 10)]),            # empty lifetime
        (memd.PlanError, [(0, 1, 10), (5, 2, 10)]),
        (ValueError, [(0, 1, 10, 3)]),             # alignment not a power of two
        (ValueError, [(0, 1, -10)]),
        (OverflowError, [(0, 1, 1 << 64)]),
        (TypeError, [(0, 1)]),                     # too short
        (TypeError, [(0, 1, 2, 3, 4, 5)]),         # too long
        (TypeError, [(0, 1, "10")]),
        (TypeError, [(0.0, 1, 10)]),
        (TypeError, [object()]),                   # no attributes
        (TypeError, "0,1,10"),                     # a str is not a list of buffers
        (TypeError, 7),
        (memd.PlanError, [(0, 1, 1 << 63, 0, 0), (0, 1, 1 << 63, 0, 1 << 63)]),
    ]
    for exc, bufs in cases:
        with pytest.raises(exc):
            memd.plan(bufs, budget_ms=10)
    with pytest.raises(memd.PlanError) as e:
        memd.plan([(0, 4, 100, 0, 0), (1, 2, 100, 0, 50)], budget_ms=10)
    assert e.value.issue == "pin-conflict"
    with pytest.raises(ValueError):
        memd.validate([(0, 1, 10)], [0, 0])        # one offset per buffer
    with pytest.raises(TypeError):
        memd.validate([(0, 1, 10)], [None])
    with pytest.raises(ValueError):
        memd.plan([(0, 1, 10)], budget_ms=-1)
    with pytest.raises(ValueError):
        memd.plan([(0, 1, 10)], budget_ms=10 ** 9)


def test_planning_releases_the_gil():
    rng = random.Random(11)
    bufs = [(s, s + rng.randint(1, 60), rng.randint(64, 1 << 20), 64)
            for s in (rng.randint(0, 2000) for _ in range(3000))]
    p, spins = spins_during(lambda: memd.plan(bufs, budget_ms=300, seed=2))
    assert spins > 1000
    assert memd.validate(bufs, p.offsets) == p.arena


def read_csv(path):
    with open(path) as f:
        rows = list(csv.DictReader(f))
    return [(int(r["lower"]), int(r["upper"]), int(r["size"]),
             int(r.get("alignment") or 0)) for r in rows]


REAL = [os.path.join(SHARED_DATA, "plans", sub, f)
        for sub, f in (("generated", "resnet50_b1.csv"), ("generated", "bert_base_b1_s128.csv"),
                       ("generated", "mobilenetv2_b8.csv"))]


@pytest.mark.parametrize("path", REAL, ids=os.path.basename)
def test_shared_problems(path):
    if not os.path.exists(path):
        pytest.skip(f"{path} not present")
    bufs = read_csv(path)
    p = memd.plan(bufs, budget_ms=300, seed=0)
    assert memd.validate(bufs, p.offsets) == p.arena
    assert p.lower_bound <= p.arena <= 1.05 * p.lower_bound


def test_big_plans_do_not_stall_other_clients(own_daemon):
    # Issue 27: a PLAN of 200k buffers decoded, hashed and (cached) compared and copied
    # its problem on memd's loop, and recorded its plan in the state store there: a
    # bystander's ALLOC/FREE waited 1.1-1.4 s for the first submission and 450 ms for
    # each cached one. Now the loop only looks the key up; the rest runs on a worker.
    d = own_daemon()
    n = 200000

    def problem(seed):
        rnd = random.Random(seed)
        return [(i // 4, i // 4 + 1 + rnd.randrange(8), 64 * (1 + rnd.randrange(64)))
                for i in range(n)]
    plans = []
    with memd.connect(d.socket) as c:
        first = least_stall(d, lambda k: plans.append(c.plan(problem(k), budget_ms=50)))
        bufs = problem(len(plans) - 1)
        again = least_stall(d, lambda k: plans.append(c.plan(bufs, budget_ms=50)))
    print(f"{n} buffers: bystander's worst round trip {first} ms (first plans), "
          f"{again} ms (cached)")
    assert not plans[len(first) - 1].cached and plans[-1].cached
    assert plans[-1].offsets == plans[len(first) - 1].offsets
    assert min(first) < 100 and min(again) < 100
