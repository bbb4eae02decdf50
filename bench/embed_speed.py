"""Embedding speed of models on the same sections: what a cold index costs with each.

    python bench/embed_speed.py [--models minilm,docs-minilm] [--n 1000] [--repeat 2]

Takes ``n`` sections of the four synthetic corpora (chunked as kb-qa indexes them, files as
written), embeds them with every model in turn, in kb-qa's batches (16, shortest first),
``repeat`` times alternating the models, and prints passages/s (best run) and each
model's time relative to the first one. Embedding is nearly all of a cold index
(bench/engine.py: end-to-end / pure embedding 1.07-1.15), so the ratio is the cold
index's. Run it on an idle machine.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "training"))

from corpora import CORPORA, corpus_copy
from pairs import site_chunks

from kb_qa.embeddings import load_embedder


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--models", default="minilm,docs-minilm")
    parser.add_argument("--n", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()
    chunks = [c for name in CORPORA for c in site_chunks(corpus_copy(name))]
    texts = sorted((c.index_text for c in chunks[:: max(1, len(chunks) // args.n)]), key=len)
    texts = texts[: args.n]
    models = {name: load_embedder(name) for name in args.models.split(",")}
    for model in models.values():
        model.embed_passages(texts[:4])  # load it
    best: dict[str, float] = {}
    for _ in range(args.repeat):
        for name, model in models.items():
            started = time.perf_counter()
            for i in range(0, len(texts), 16):
                model.embed_passages(texts[i : i + 16])
            took = time.perf_counter() - started
            best[name] = min(best.get(name, took), took)
    first = next(iter(best.values()))
    for name, took in best.items():
        print(f"{name:<14} {len(texts) / took:6.1f} passages/s  {took:6.1f} s  {took / first:.2f}x")


if __name__ == "__main__":
    main()
