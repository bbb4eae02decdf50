"""Anchor parity against real ``mkdocs build`` output.

    python bench/anchor_parity.py [--sites sample_site mkdocs ...] [--extra] [--keep DIR]

Builds ``sample_site/`` and each corpus in ``KBQA_CORPORA`` (default ``../shared/corpora``)
with MkDocs (a copy, with what cannot work offline removed) and checks that every heading
kb-qa chunks carries the id MkDocs rendered for it. The logic lives in ``tests/parity.py``.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

import parity


def main() -> None:
    available = parity.sites()
    parser = argparse.ArgumentParser()
    parser.add_argument("--sites", nargs="*", default=list(available))
    parser.add_argument("--extra", action="store_true", help="list rendered headings kb-qa lacks")
    parser.add_argument("--keep", type=Path, help="build into DIR/<site> and keep it")
    args = parser.parse_args()

    results = []
    started = time.perf_counter()
    for name in args.sites:
        if name not in available:
            print(f"{name}: not found (corpora folder {parity.corpora_dir()})", file=sys.stderr)
            continue
        workdir = None
        if args.keep:
            workdir = args.keep / name
            workdir.mkdir(parents=True, exist_ok=False)
        results.append(parity.check_site(name, available[name], workdir))
    total = time.perf_counter() - started

    print(parity.format_table(results))
    print(f"\ntotal {total:.1f} s")
    for r in results:
        print(f"\n## {r.name}")
        if r.removed:
            print("removed from the mkdocs.yml copy: " + "; ".join(r.removed))
        for warning in r.kbqa_warnings:
            print(f"kb-qa: {warning}")
        if r.unbuilt:
            unbuilt = ", ".join(r.unbuilt)
            print(f"pages with no HTML at the url_for path ({len(r.unbuilt)}): {unbuilt}")
        for m in r.misses:
            print(
                f"MISS {m.page}: ours={m.ours!r} rendered={m.rendered or None!r} "
                f"h{m.level} {m.heading!r}"
            )
        print(f"rendered headings kb-qa did not produce: {len(r.extra)}")
        if args.extra:
            for page, h in r.extra:
                print(f"  EXTRA {page}: id={h.anchor!r} h{h.level} {h.text!r}")


if __name__ == "__main__":
    main()
