"""Post-mortems from Python against the real daemon: OutOfMemory.postmortem names the
snapshot (None when the per-uid rate limit saved none), Client.postmortems() and
Client.postmortem(id) read it back, the daemon's log line names it, and `memctl
postmortem --json` and `--html` show the same one."""
import json
import os

import pytest

import memd


def refuse(client, big):
    with pytest.raises(memd.OutOfMemory) as e:
        client.alloc(2, "internal", big)
    return e.value


def test_out_of_memory_names_its_postmortem(own_daemon, tmp_path):
    d = own_daemon()  # its own: the rate limit and the ids start afresh
    with memd.connect(d.socket, name="pm-py") as client:
        data = [r for r in client.dump(2)["devices"][0]["bank_groups"][0]["regions"]
                if r["name"] == "data"][0]
        big = data["size"] * 6 // 10 // 4096 * 4096
        with client.alloc(2, "constant", big) as held:
            err = refuse(client, big)
            assert isinstance(err.postmortem, int) and err.postmortem == 1
            # Within limits.postmortem_interval_ms (1 s) of the first: none saved.
            assert refuse(client, big).postmortem is None
            [p] = client.postmortems()
            assert p["id"] == 1 and p["requested"] == big and p["pid"] == os.getpid()
            assert p["client"] == "pm-py" and p["class"] == "internal" and p["kind"] == "dram"
            assert p["region_name"] == "data" and p["dir"] == "top-down"
            assert p["free"] == err.free and p["largest_free"] == err.largest_free
            assert p["message"] == str(err).split(": ", 1)[1][:191]
            full = client.postmortem(1)
            assert full["holders"][0]["pid"] == os.getpid()
            assert full["holders"][0]["bytes"] >= big and full["holders"][0]["client"] == "pm-py"
            assert full["free_blocks"][0]["size"] == err.largest_free
            sizes = [b["size"] for b in full["free_blocks"]]
            assert sizes == sorted(sizes, reverse=True)
            kinds = [(e["type"], e["handle"]) for e in full["events"]]
            assert kinds[-2:] == [("alloc", held.handle), ("fail", 0)]
            with pytest.raises(memd.NotFoundError):
                client.postmortem(2)
    assert "(postmortem 1)" in d.read_log()
    out = json.loads(d.memctl("postmortem", "1", "--json").stdout)
    assert out["id"] == 1 and out["client"] == "pm-py" and out["reason"] == "no room"
    assert out["holders"][0]["pid"] == os.getpid() and out["free_blocks"] == full["free_blocks"]
    assert [e["seq"] for e in out["events"]] == [e["seq"] for e in full["events"]]
    listed = json.loads(d.memctl("postmortem", "--json").stdout)["postmortems"]
    assert [p["id"] for p in listed] == [1]
    page = tmp_path / "pm.html"
    d.memctl("postmortem", "1", "--html", str(page))
    html = page.read_text()
    assert html.startswith("<!DOCTYPE html>") and "memd post-mortem 1" in html
    assert "src=" not in html and "href=" not in html and "https:" not in html
