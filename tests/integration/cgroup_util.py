"""Real cgroups for the tests: made under the writable cgroup v2 mount, below this
process's own cgroup, and removed again; a client process moved into one before it
connects, as a container's process would be. Used by cgroup_test.py, limits_test.py and prometheus_test.py."""
import os
import subprocess
import sys


def cgroup2_mount():
    """The cgroup v2 mount and this process's path in it ("0::" of /proc/self/cgroup)."""
    mnt = None
    with open("/proc/self/mountinfo") as f:
        for line in f:
            fields = line.split()
            sep = fields.index("-")
            if fields[sep + 1] == "cgroup2":
                mnt = fields[4]
                break
    own = [l.split("::", 1)[1].strip() for l in open("/proc/self/cgroup") if l.startswith("0::")]
    return mnt, own[0] if own else None


class Cgroups:
    """Test cgroups under <own cgroup>/memd-test-PID. Where the mount is missing or
    read-only: exits 77 (skipped), or with required=False, ok is False."""

    def __init__(self, required=True):
        self.mnt, self.own = cgroup2_mount()
        self.ok = bool(self.mnt and self.own is not None and
                       os.access(os.path.join(self.mnt, self.own.lstrip("/")), os.W_OK))
        if not self.ok and required:
            print("no writable cgroup v2 mount here (%s): skipped" % self.mnt)
            sys.exit(77)
        self.top = "/memd-test-%d" % os.getpid()

    def make(self, rel):
        """Makes top + rel; returns (the path memd reads for a process in it, its directory).
        memd's path is relative to its cgroup namespace root, which is ours."""
        path = self.top + rel
        want = (self.own.rstrip("/") + path) if self.own != "/" else path
        fs = os.path.join(self.mnt, self.own.lstrip("/"), path.lstrip("/"))
        os.makedirs(fs, exist_ok=True)
        return want, fs

    def spawn(self, fs, argv, **kw):
        """argv run in cgroup directory fs (joined before exec)."""
        return subprocess.Popen(["sh", "-c", 'echo $$ > "$0/cgroup.procs" && exec "$@"', fs] +
                                list(argv), **kw)

    def hold(self, memctl, socket, size, fs=None):
        """memctl alloc --hold of size per bank of device 0's DRAM, in cgroup directory fs
        (None: this process's): the process and the first line it printed (stderr's when it
        failed)."""
        argv = [memctl, "--socket", socket, "alloc", "--device", "0", "--class", "constant",
                "--size", size, "--hold"]
        kw = dict(stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        p = self.spawn(fs, argv, **kw) if fs else subprocess.Popen(argv, **kw)
        line = p.stdout.readline()
        if not line:
            p.wait(timeout=30)
            line = p.stderr.read()
        return p, line

    def cleanup(self):
        """Removes the test's cgroups, deepest first (they must be empty)."""
        if not self.ok:
            return
        top = os.path.join(self.mnt, self.own.lstrip("/"), self.top.lstrip("/"))
        for root, _, _ in sorted(os.walk(top), key=lambda w: -len(w[0])):
            try:
                os.rmdir(root)
            except OSError:
                pass
