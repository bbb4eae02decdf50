"""Anchor parity against real ``mkdocs build`` and ``zensical build`` output.

    python bench/anchor_parity.py [--sites sample_site mkdocs ...] [--generator mkdocs|zensical]
                                  [--extra] [--keep DIR]
    python bench/anchor_parity.py --rendered [--sites ...] [--extra]

``--rendered`` builds each site with its own hooks and plugins (those installed here) and
measures the index ``kb-qa index`` makes of it: the share of the rendered heading ids of
content pages that have a chunk, chunk anchors their built page lacks, and chunk URLs the
build did not produce.

Builds ``sample_site/`` and each corpus in ``KBQA_CORPORA`` (default ``../shared/corpora``)
with MkDocs and with Zensical (a copy, with what cannot work offline removed; with Zensical,
also ``sample_site`` as a Zensical project, ``tests/sites/sample_site.zensical.toml``) and
checks that every heading kb-qa chunks carries the id the generator rendered for it. The
logic lives in ``tests/parity.py``.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

import parity


def main() -> None:
    available = parity.sites()
    parser = argparse.ArgumentParser()
    parser.add_argument("--sites", nargs="*", default=list(available))
    parser.add_argument("--extra", action="store_true", help="list rendered headings kb-qa lacks")
    parser.add_argument("--keep", type=Path, help="build into DIR/<generator>/<site> and keep it")
    parser.add_argument(
        "--generator", choices=parity.GENERATORS, action="append", help="default: both"
    )
    parser.add_argument(
        "--rendered",
        action="store_true",
        help="build with the sites' own hooks and plugins and measure the index against it",
    )
    args = parser.parse_args()
    if args.rendered:
        rendered(available, args.sites, args.keep, args.extra)
        return
    generators = args.generator or list(parity.GENERATORS)
    if len(generators) > 1:
        # One process per generator: Material's and Zensical's emoji indexes both add their
        # icons to pymdownx's shared twemoji_db dict, so in one process the second one
        # renders icons (and the ids of headings with icons) with the first one's files.
        for generator in generators:
            rest = ["--sites", *args.sites, *(["--extra"] if args.extra else [])]
            rest += ["--keep", str(args.keep)] if args.keep else []
            subprocess.run([sys.executable, __file__, *rest, "--generator", generator], check=True)
        return

    results = []
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        for generator in generators:
            if generator == "zensical" and not parity.zensical_installed():
                print("zensical: not installed (pip install zensical)", file=sys.stderr)
                continue
            todo = [(name, available.get(name)) for name in args.sites]
            if generator == "zensical" and "sample_site" in args.sites:
                todo.insert(1, ("sample_site_toml", parity.zensical_sample_site(Path(tmp))))
            for name, source in todo:
                if source is None:
                    print(f"{name}: not found (corpora {parity.corpora_dir()})", file=sys.stderr)
                    continue
                workdir = None
                if args.keep:
                    workdir = args.keep / generator / name
                    workdir.mkdir(parents=True, exist_ok=False)
                try:
                    results.append(parity.check_site(name, source, workdir, generator))
                except RuntimeError as exc:  # the generator could not build it at all
                    print(f"{name} ({generator}): {exc}", file=sys.stderr)
    total = time.perf_counter() - started

    print(parity.format_table(results))
    print(f"\ntotal {total:.1f} s")
    for r in results:
        print(f"\n## {r.name} ({r.generator})")
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


def rendered(available: dict[str, Path], names: list[str], keep: Path | None, extra: bool) -> None:
    """The index (`kb-qa index`, sites rendered with their hooks) against `mkdocs build`s
    that ran the same hooks and plugins."""
    results = []
    started = time.perf_counter()
    for name in names:
        source = available.get(name)
        if source is None:
            print(f"{name}: not found (corpora {parity.corpora_dir()})", file=sys.stderr)
            continue
        workdir = None
        if keep:
            workdir = keep / "rendered" / name
            workdir.mkdir(parents=True, exist_ok=False)
        try:
            results.append(parity.check_rendered(name, source, workdir))
        except RuntimeError as exc:
            print(f"{name}: {exc}", file=sys.stderr)
    print(parity.format_rendered(results))
    print(f"\ntotal {time.perf_counter() - started:.1f} s")
    for r in results:
        print(f"\n## {r.name}: {r.chunks} chunks, build {r.build_seconds:.1f} s")
        if r.removed:
            print("removed from the mkdocs.yml copy: " + "; ".join(r.removed))
        for url, anchor in r.missing_anchor:
            print(f"ANCHOR MISSING {url}#{anchor}")
        for url in sorted(set(r.missing_url)):
            print(f"URL MISSING {url}")
        print(f"rendered ids without a chunk: {len(r.uncovered)}")
        if extra:
            for url, anchor in r.uncovered:
                print(f"  NO CHUNK {url}#{anchor}")


if __name__ == "__main__":
    main()
