"""The package list, the one part of attnkit's build that needs code (the rest is pyproject.toml's).

Installed are `autograder` and the reference, the repository's top-level `solutions/`, under the project's own
name as `attnkit.solutions`: the install claims no generic top-level name, and `devtools/` (run from a checkout)
is never installed. pyproject's `packages.find` cannot install a folder under another name, hence the mapping.
"""

from setuptools import find_packages, setup

setup(
    packages=[*find_packages(include=["autograder", "autograder.*"]), "attnkit.solutions"],
    package_dir={"attnkit.solutions": "solutions"},
)
