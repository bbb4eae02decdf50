"""What each of kb-qa's run-time dependencies weighs once installed, its own dependencies
included (those only it brings in), read from the installed distributions' RECORD files.

    python bench/install_size.py [--extra test]

Prints every direct dependency with the size it alone accounts for (it and the packages
nothing else needs), sorted by size, then what all of kb-qa's run-time dependencies take
and the whole environment. Run it in the venv the README's first command makes.
"""

from __future__ import annotations

import argparse
import re
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def size_of(dist: metadata.Distribution) -> int:
    """Bytes of the files the distribution installed (its RECORD)."""
    total = 0
    for file in dist.files or []:
        path = Path(str(dist.locate_file(file)))
        if path.is_file():
            total += path.stat().st_size
    return total


def requirements(dist: metadata.Distribution, extras: tuple[str, ...] = ()) -> set[str]:
    """Names of the installed distributions ``dist`` requires (markers evaluated)."""
    found = set()
    for text in dist.requires or []:
        req = Requirement(text)
        env_extras = [{"extra": e} for e in extras] or [{"extra": ""}]
        if req.marker and not any(req.marker.evaluate(e) for e in env_extras):
            continue
        found.add(canonical(req.name))
    return found


def closure(roots: set[str], graph: dict[str, set[str]]) -> set[str]:
    seen: set[str] = set()
    todo = list(roots)
    while todo:
        name = todo.pop()
        if name in seen or name not in graph:
            continue
        seen.add(name)
        todo.extend(graph[name])
    return seen


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--extra", action="append", default=[], help="also count an extra")
    args = parser.parse_args()
    dists = {canonical(d.metadata["Name"]): d for d in metadata.distributions()}
    graph = {name: requirements(d) for name, d in dists.items()}
    sizes = {name: size_of(d) for name, d in dists.items()}
    direct = requirements(dists["kb-qa"], tuple(args.extra)) & set(dists)
    everything = closure(direct, graph)
    rows = []
    for dep in direct:
        others = closure(direct - {dep}, graph)
        alone = closure({dep}, graph) - others
        rows.append((sum(sizes[n] for n in alone), dep, len(alone)))
    mb = 1e6
    print(f"{'dependency':<28} {'installed MB (with what only it needs)':>40} packages")
    for size, dep, count in sorted(rows, reverse=True):
        print(f"{dep:<28} {size / mb:>40.1f} {count:>8}")
    print(
        f"kb-qa's run-time dependencies: {sum(sizes[n] for n in everything) / mb:.1f} MB in "
        f"{len(everything)} packages (kb-qa itself {sizes['kb-qa'] / mb:.1f} MB); the whole "
        f"environment {sum(sizes.values()) / mb:.1f} MB"
    )


if __name__ == "__main__":
    main()
