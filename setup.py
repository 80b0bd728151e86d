"""Package layout (metadata is in pyproject.toml).

One import package, ``plainsight``; the repository keeps its design-card layout at the top level
(``middleware/``, ``consumers/``, ``surrogate/``, ``configs/``, ``benchmarks/``) and each folder is
installed as a subpackage of ``plainsight`` through ``package_dir``. Subpackages are *found*
(find_packages under each folder), never listed by hand, so a new one cannot fall out of the wheel.
"""

from setuptools import find_packages, setup

# repository folder -> import name under plainsight
FOLDERS = ("middleware", "consumers", "surrogate", "configs", "benchmarks", "proxy")

package_dir = {"plainsight": "plainsight"}
packages = ["plainsight"]
for folder in FOLDERS:
    for sub in [folder] + [f"{folder}.{p}" for p in find_packages(where=folder)]:
        name = f"plainsight.{sub}"
        packages.append(name)
        package_dir[name] = sub.replace(".", "/")

setup(
    packages=packages,
    package_dir=package_dir,
    package_data={
        "plainsight": ["py.typed"],
        "plainsight.middleware": ["data/*", "samples/*"],
        "plainsight.configs": ["*.yaml", "*.yml", "*.txt", "*.json", "llm/*.yaml", "llm/*.txt"],
        "plainsight.surrogate": ["data/*"],
    },
)
