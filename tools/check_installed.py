"""Check that each dbr package imports from site-packages, installed from a local wheel.

Run by the nox sessions inside their virtual environment, from a folder outside
the source tree, with a JSON object mapping distribution to module name.
"""

import importlib
import importlib.metadata
import json
import sys
import sysconfig
from pathlib import Path


def main(modules_json: str) -> int:
    """Return 1, naming the culprit, if a package is not the installed wheel."""
    site_packages = Path(sysconfig.get_paths()["purelib"]).resolve()
    problems = []
    for dist, name in json.loads(modules_json).items():
        module = importlib.import_module(name)
        where = Path(module.__file__).resolve()
        origin = json.loads(
            importlib.metadata.distribution(dist).read_text("direct_url.json") or "{}"
        )
        wheel = origin.get("url", "").rsplit("/", 1)[-1]
        print(f"{dist} {importlib.metadata.version(dist)}: {name} from {where.parent} ({wheel})")
        if site_packages not in where.parents:
            problems.append(f"{name} comes from {where}, not from {site_packages}")
        if not wheel.endswith(".whl"):
            problems.append(f"{dist} was not installed from a local wheel: {origin}")
    for problem in problems:
        print(f"error: {problem}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
