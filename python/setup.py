"""Builds the native library with SwiftPM and puts it inside the package.

`pip install ./python` (from the mlconv repository) runs `swift build -c release --product
mlconv_c` in the repository root and copies libmlconv_c.so into mlconv/, so the package finds it
without any path to set. Needs Swift and the Debian packages of Scripts/setup.
MLCONV_SOURCE_ROOT overrides where the repository is (default: the parent of this folder).
"""
import os
import shutil
import subprocess
import sys

from setuptools import Distribution, setup
from setuptools.command.build_py import build_py
try:
    from setuptools.command.bdist_wheel import bdist_wheel
except ImportError:  # setuptools < 70.1 with the wheel package
    from wheel.bdist_wheel import bdist_wheel

HERE = os.path.dirname(os.path.abspath(__file__))
PRODUCT = "mlconv_c"
LIBRARY = "libmlconv_c.so"


def repository_root():
    root = os.environ.get("MLCONV_SOURCE_ROOT") or os.path.dirname(HERE)
    if not os.path.exists(os.path.join(root, "Package.swift")):
        sys.exit(f"mlconv: no Package.swift in {root}: build from the mlconv repository "
                 "(`pip install ./python` in its root) or set MLCONV_SOURCE_ROOT to it")
    return root


class BuildWithLibrary(build_py):
    def run(self):
        super().run()
        root = repository_root()
        if shutil.which("swift") is None:
            sys.exit("mlconv: `swift` is not on PATH; the package builds its native library with SwiftPM")
        cmd = ["swift", "build", "-c", "release", "--product", PRODUCT]
        print("mlconv: " + " ".join(cmd) + f"  (in {root})", flush=True)
        subprocess.run(cmd, cwd=root, check=True)
        bin_dir = subprocess.run(["swift", "build", "-c", "release", "--show-bin-path"], cwd=root, check=True,
                                 capture_output=True, text=True).stdout.strip()
        built = os.path.join(bin_dir, LIBRARY)
        if not os.path.exists(built):
            sys.exit(f"mlconv: swift build did not produce {built}")
        target = os.path.join(self.build_lib, "mlconv", LIBRARY)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        shutil.copy2(built, target)


class BinaryDistribution(Distribution):
    """The package holds a native library: install it as platform-specific (platlib)."""

    def has_ext_modules(self):
        return True


class PlatformWheel(bdist_wheel):
    """Tagged py3-none-<platform>: the library is for this platform, but does not use Python's C
    API, so one wheel serves every Python 3."""

    def get_tag(self):
        _, _, plat = super().get_tag()
        return "py3", "none", plat


setup(cmdclass={"build_py": BuildWithLibrary, "bdist_wheel": PlatformWheel}, distclass=BinaryDistribution)
