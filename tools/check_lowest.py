"""Print the installed version of each declared requirement; fail unless it is the lower bound.

A bound matches at its own precision: ``>=1.11`` is met by 1.11.1 when 1.11.0
was yanked, ``>=1.26.4`` only by 1.26.4.

Run by ``nox -s lowest`` after installing with uv's ``--resolution lowest-direct``,
with a JSON list of [name, specifier, marker] triples; a requirement whose environment
marker does not hold for this interpreter (another Python's floor) is not checked.
"""

import importlib.metadata
import json
import sys

from packaging.markers import Marker
from packaging.specifiers import SpecifierSet
from packaging.version import Version


def main(requirements_json: str) -> int:
    """Return 1 if a requirement resolved above the lowest version its range allows."""
    requirements = json.loads(requirements_json)
    if not requirements:
        print("no third-party requirement")
    problems = []
    for name, specifier, *marker in requirements:
        if marker and marker[0] and not Marker(marker[0]).evaluate():
            print(f"{name:24} {specifier or '(any)':20} not for this Python ({marker[0]})")
            continue
        installed = Version(importlib.metadata.version(name))
        bounds = [
            Version(s.version) for s in SpecifierSet(specifier) if s.operator in (">=", "~=", "==")
        ]
        print(f"{name:24} {specifier or '(any)':20} installed {installed}")
        lowest = max(bounds, default=None)
        if lowest is not None and installed.release[: len(lowest.release)] != lowest.release:
            problems.append(f"{name} {installed} is not its lower bound {lowest}")
    for problem in problems:
        print(f"error: {problem}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
