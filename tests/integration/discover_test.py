"""memd --discover on sysfs and devfs trees built here the way tt-kmd lays them out:
/sys/class/tenstorrent/tenstorrent!N (tt_* telemetry attributes, a `device` link to the
PCI function with its vendor and device ids) and /dev/tenstorrent/N. The YAML it prints
must be a config memd loads with the real tt-metal descriptor pairs.

usage: discover_test.py MEMD SHARED_DATA"""
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
from tap import check, done  # noqa: E402

MEMD, SHARED = sys.argv[1], sys.argv[2]
DESC = os.path.join(SHARED, "soc", "tt-metal")


def device(root, n, pci, pci_id, attrs):
    """One device as tt-kmd shows it: the PCI function and the class device linking it."""
    fn = os.path.join(root, "sys/devices/pci0000:00", pci)
    os.makedirs(fn)
    for k, v in (("vendor", "0x1e52"), ("device", pci_id)):
        with open(os.path.join(fn, k), "w") as f:
            f.write(v + "\n")
    cls = os.path.join(root, "sys/class/tenstorrent", "tenstorrent!%d" % n)
    os.makedirs(cls)
    os.symlink(os.path.relpath(fn, cls), os.path.join(cls, "device"))
    for k, v in attrs.items():
        with open(os.path.join(cls, k), "w") as f:
            f.write(v + "\n")
    os.makedirs(os.path.join(root, "dev/tenstorrent"), exist_ok=True)
    open(os.path.join(root, "dev/tenstorrent", str(n)), "w").close()


def discover(root, *extra):
    return subprocess.run([MEMD, "--discover", "--sysfs-root", os.path.join(root, "sys"),
                           "--dev-root", os.path.join(root, "dev"), *extra],
                          capture_output=True, text=True, timeout=30)


with tempfile.TemporaryDirectory() as root:
    # Listed out of order on purpose (readdir order is not N order).
    device(root, 2, "0000:03:00.0", "0xfaca", {"tt_card_type": "e150"})
    device(root, 0, "0000:01:00.0", "0x401e",
           {"tt_card_type": "n150", "tt_serial": "0x100014511823033",
            "tt_asic_id": "0x4bc8c52e", "tt_fw_bundle_ver": "80.17.0.0"})
    device(root, 1, "0000:02:00.0", "0x401e", {"tt_card_type": "n300"})
    device(root, 3, "0000:04:00.0", "0x1234", {})  # a Tenstorrent id memd does not know

    r = discover(root, "--json", "--descriptors", DESC)
    check(r.returncode == 0, "--json exits 0: %s" % r.stderr.strip())
    doc = json.loads(r.stdout)
    devs = doc["devices"]
    check([d["index"] for d in devs] == [0, 1, 2, 3], "devices in N order")
    d0 = devs[0]
    check(d0["arch"] == "wormhole_b0" and d0["product"] == "nebula_x1"
          and not d0["product_guessed"], "n150 is a wormhole_b0 nebula_x1")
    check(d0["pci"] == "0000:01:00.0" and d0["device"] == "0x401e", "PCI address and id")
    check(d0["serial"] == "0x100014511823033" and d0["firmware"] == "80.17.0.0",
          "telemetry attributes")
    check(d0["dev"].endswith("/dev/tenstorrent/0") and d0["dev_present"], "device node")
    check(d0["descriptors_found"] and d0["soc_descriptor"] ==
          os.path.realpath(os.path.join(DESC, "soc_wormhole_b0_80_arch.yaml")),
          "descriptor pair found in a flat folder")
    check(devs[1]["product"] == "nebula_x2", "n300 is nebula_x2")
    check(devs[2]["arch"] == "grayskull" and devs[2]["product"] == "E150", "e150 grayskull")
    check(not devs[3]["supported"], "an unknown chip is listed, not supported")
    check("1e52:1234" in r.stderr, "the unknown chip is named on stderr")

    r = discover(root, "--descriptors", DESC)
    check(r.returncode == 0, "YAML exits 0")
    cfg = os.path.join(root, "memd.yaml")
    with open(cfg, "w") as f:
        f.write(r.stdout)
    c = subprocess.run([MEMD, "--check-config", cfg, "--json"], capture_output=True,
                       text=True, timeout=60)
    check(c.returncode == 0, "memd loads the printed stanzas: %s" % c.stderr.strip()[:300])
    if c.returncode == 0:
        m = json.loads(c.stdout)
        names = [d["name"] for d in m["devices"]]
        check(names == ["wormhole_b0_0", "wormhole_b0_1", "grayskull_2"],
              "three devices served, the unknown left out: %s" % names)

    # No descriptors anywhere: the stanza names where a tt-metal tree keeps them.
    env = dict(os.environ)
    env.pop("TT_METAL_HOME", None)
    r = subprocess.run([MEMD, "--discover", "--sysfs-root", os.path.join(root, "sys"),
                        "--dev-root", os.path.join(root, "dev")], capture_output=True,
                       text=True, timeout=30, env=env)
    check(r.returncode == 0 and
          "$TT_METAL_HOME/tt_metal/soc_descriptors/wormhole_b0_80_arch.yaml" in r.stdout,
          "without descriptors: tt-metal's paths under $TT_METAL_HOME")
    check("descriptor files not found" in r.stdout, "and a comment says so")

with tempfile.TemporaryDirectory() as empty:
    r = discover(empty)
    check(r.returncode == 0 and "devices: []" in r.stdout, "no driver: an empty list")

r = subprocess.run([MEMD, "--sysfs-root", "/sys"], capture_output=True, text=True, timeout=30)
check(r.returncode == 2 and "only go with --discover" in r.stderr,
      "--sysfs-root without --discover is a usage error")

done()
