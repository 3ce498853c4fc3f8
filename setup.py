"""Which packages `pip install .` ships: found, never listed by hand (issue 28 §7).

pyproject.toml maps each package directory (`[tool.setuptools.package-dir]`): `src/pinshift` is
`pinshift`, and the repository's `migrations/` and `recipes/` are `pinshift.migrations` and
`pinshift.bundled_recipes`. Every package under each of them is found here, so a new one
(`pinshift.infer` was once forgotten) is shipped without touching this file;
tests/test_wheel.py checks the built wheel against the source tree.
"""

import tomllib
from pathlib import Path

from setuptools import find_packages, setup

HERE = Path(__file__).resolve().parent
PACKAGE_DIRS = tomllib.loads((HERE / "pyproject.toml").read_text())["tool"]["setuptools"]["package-dir"]

packages = set()
for package, directory in PACKAGE_DIRS.items():
    packages.add(package)
    packages.update(f"{package}.{found}" for found in find_packages(str(HERE / directory)))

setup(packages=sorted(packages))
