"""libgomp's wait policy (docs/PERFORMANCE.md, "Thread pool"): the package sets GOMP_SPINCOUNT
before it loads the library unless the user chose a policy, in a fresh interpreter each time
(libgomp reads its environment once, when it is loaded)."""
import json
import os
import subprocess
import sys

PROBE = (
    "import json, os, mlconv, mlconv._lib as L; L.lib(); "
    "maps = open('/proc/self/maps').read(); "
    "print(json.dumps({k: os.environ.get(k) for k in ('GOMP_SPINCOUNT', 'OMP_WAIT_POLICY')} | "
    "{'libgomp_loaded': 'libgomp' in maps}))"
)


def run_probe(extra_env):
    env = {k: v for k, v in os.environ.items() if k not in ("GOMP_SPINCOUNT", "OMP_WAIT_POLICY")}
    env.update(extra_env)
    out = subprocess.run([sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_default_spin_count_is_set_before_the_library_loads():
    got = run_probe({})
    assert got["GOMP_SPINCOUNT"] == "3000"
    assert got["OMP_WAIT_POLICY"] is None
    assert got["libgomp_loaded"], "libmlconv_c should bring libgomp (oneDNN's OpenMP runtime)"


def test_the_users_policy_wins():
    assert run_probe({"OMP_WAIT_POLICY": "passive"}) | {"libgomp_loaded": True} == {
        "GOMP_SPINCOUNT": None, "OMP_WAIT_POLICY": "passive", "libgomp_loaded": True}
    assert run_probe({"GOMP_SPINCOUNT": "0"})["GOMP_SPINCOUNT"] == "0"
