"""`meson install` puts the package where the interpreter finds it, and the installed
copy works with nothing from the build tree."""
import os
import subprocess
import sys
import tempfile

import pytest

from conftest import BUILD_ROOT


def test_meson_install_gives_an_importable_package():
    if not os.path.exists(os.path.join(BUILD_ROOT, "meson-info")):
        pytest.skip("not a meson build directory")
    with tempfile.TemporaryDirectory(prefix="memd-pyinst-") as dest:
        r = subprocess.run(["meson", "install", "-C", BUILD_ROOT, "--destdir", dest,
                            "--no-rebuild", "--quiet"], capture_output=True, text=True,
                           timeout=300)
        assert r.returncode == 0, r.stdout + r.stderr
        inits = [os.path.join(d, f) for d, _, fs in os.walk(dest) for f in fs
                 if f == "__init__.py" and d.endswith("/memd")]
        assert len(inits) == 1, inits
        site = os.path.dirname(os.path.dirname(inits[0]))
        pkg = os.path.dirname(inits[0])
        for f in ("__init__.pyi", "py.typed", "_model.py", "onnx_import.py",
                  "torch_import.py", "importer.py", "__main__.py"):
            assert os.path.exists(os.path.join(pkg, f)), f
        assert [f for f in os.listdir(pkg) if f.startswith("_memd.") and f.endswith(".so")]
        # The site directory under the prefix is one the interpreter searches.
        prefix_site = site[len(dest):]
        searched = subprocess.run([sys.executable, "-c", "import sys; print('\\n'.join(sys.path))"],
                                  capture_output=True, text=True).stdout.split()
        assert prefix_site in searched or prefix_site.rstrip("/") in searched, \
            f"{prefix_site} is not on {sys.executable}'s path"
        libdirs = {os.path.dirname(os.path.join(d, f)) for d, _, fs in os.walk(dest)
                   for f in fs if f.startswith("libmemclient.so")}
        env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": site,
               "LD_LIBRARY_PATH": ":".join(sorted(libdirs))}
        code = ("import memd, sys; assert memd.__file__.startswith(sys.argv[1]), memd.__file__;"
                "p = memd.plan([(0, 2, 100), (1, 3, 100)], budget_ms=10); print(p.arena);"
                "help(memd)")
        r = subprocess.run([sys.executable, "-c", code, site], capture_output=True, text=True,
                           env=env, cwd="/", timeout=120)
        assert r.returncode == 0, r.stderr
        assert r.stdout.splitlines()[0] == "200" and "connect" in r.stdout
