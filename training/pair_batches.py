"""The pairs ``train.py`` learns from, sampled by kind and cut into batches.

Kept apart from the training loop so that sampling and batching can be read and tested
without torch.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

# Only sites under these licences are trained on (the manifest records each site's).
PERMISSIVE = "MIT,Apache-2.0,BSD,ISC,CC-BY-4.0"


def sites_under(manifest: Path, licences: str) -> tuple[set[str], int]:
    """The repositories of ``manifest``'s kept sites whose licence is one of ``licences``
    (comma-separated), and how many sites it keeps in all."""
    allowed = set(licences.split(","))
    kept = json.loads(manifest.read_text(encoding="utf-8"))["kept"]
    return {s["repository"] for s in kept if s["licence"] in allowed}, len(kept)


def load_pairs(
    path: Path, mix: dict[str, float], seed: int, sites: set[str]
) -> list[dict[str, str]]:
    """The pairs of ``sites``, sampled by kind with the weights of ``mix`` (1 keeps all,
    0.5 half)."""
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
    return sample([r for r in rows if r["site"] in sites], mix, seed)


def sample(rows: list[dict[str, str]], mix: dict[str, float], seed: int) -> list[dict[str, str]]:
    """``rows`` sampled by kind with the weights of ``mix`` (2 keeps each twice, 0.5 half),
    shuffled."""
    rng = random.Random(seed)
    kept: list[dict[str, str]] = []
    for row in rows:
        weight = mix.get(row["kind"], 0.0)
        copies = int(weight) + (1 if rng.random() < weight - int(weight) else 0)
        kept += [row] * copies
    rng.shuffle(kept)
    return kept


def parse_mix(text: str) -> dict[str, float]:
    """``link=1,question=0.5`` as {kind: weight}."""
    return {k: float(v) for k, v in (p.split("=") for p in text.split(","))}


def batches(rows: list[dict[str, str]], size: int) -> list[list[dict[str, str]]]:
    """Batches in which no section is the positive twice (it would be its own negative)."""
    out: list[list[dict[str, str]]] = []
    current: list[dict[str, str]] = []
    seen: set[str] = set()
    waiting: list[dict[str, str]] = []
    for row in rows:
        if row["positive"] in seen:
            waiting.append(row)
            continue
        current.append(row)
        seen.add(row["positive"])
        if len(current) == size:
            out.append(current)
            current, seen = [], set()
            again, waiting = waiting, []
            for w in again:
                if w["positive"] in seen or len(current) == size - 1:
                    waiting.append(w)
                else:
                    current.append(w)
                    seen.add(w["positive"])
    return out


def site_batches(rows: list[dict[str, str]], size: int, seed: int) -> list[list[dict[str, str]]]:
    """Batches drawn from one site each, so that every in-batch negative is another section
    of the same documentation (the choice kb-qa makes at run time) rather than an easy
    one from an unrelated project; a site's leftover rows fill batches of mixed sites.
    The order of the batches is shuffled."""
    by_site: dict[str, list[dict[str, str]]] = {}
    for row in rows:
        by_site.setdefault(row["site"], []).append(row)
    out: list[list[dict[str, str]]] = []
    rest: list[dict[str, str]] = []
    for site in sorted(by_site):
        mine = batches(by_site[site], size)
        out += mine
        used = {id(r) for b in mine for r in b}
        rest += [r for r in by_site[site] if id(r) not in used]
    random.Random(f"{seed}:rest").shuffle(rest)
    out += batches(rest, size)
    random.Random(f"{seed}:order").shuffle(out)
    return out
