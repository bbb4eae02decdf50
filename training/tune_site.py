"""Tune the retriever on one site's own structure: its links and headings, no question.

    pip install -e '.[train]'
    python training/tune_site.py VAULT --out DIR [--minutes 15] [--mix link=1,question=1,heading=1]
                                 [--lr 2e-5] [--passes 2] [--base FOLDER] [--blend 1]

The stretch of the documentation-retriever issue (a ``kb-qa tune`` candidate): the same
pairs as ``pairs.py`` (a link's line -> the linked section, a question-shaped heading ->
its answer, a heading path -> its section), made from this one site only, and the same
training loop as ``train.py`` (in-batch negatives), continued from the base MiniLM or from
``--base``. Writes ``DIR/pairs.jsonl``, ``DIR/run/`` (the torch checkpoints: running the
same command again resumes) and ``DIR/onnx/`` (int8 with integer kernels, 7-bit weights,
checked against its fp32 export as ``export.py`` does), usable as
``embed_model: onnx:DIR/onnx``. ``DIR/tune.json`` records the pairs of each kind and the
minutes each step took.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import random
import sys
import time
from collections import Counter
from pathlib import Path
from types import ModuleType

HERE = Path(__file__).resolve().parent


def _sibling(name: str) -> ModuleType:
    """A script of training/ as a module named ``training_<name>`` (training/ is a folder
    of scripts, not a package, and "pairs" or "train" must not shadow anything)."""
    known = sys.modules.get(f"training_{name}")
    if known is not None:
        return known
    spec = importlib.util.spec_from_file_location(f"training_{name}", HERE / f"{name}.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


export, pairs, train = _sibling("export"), _sibling("pairs"), _sibling("train")


def site_rows(vault: Path, seed: int) -> tuple[int, list[dict[str, str]]]:
    """The number of sections of one site, and every pair of it as ``pairs.py`` writes them."""
    chunks = pairs.site_chunks(vault, trusted=True)
    rng = random.Random(f"{seed}:{vault.name}")
    return len(chunks), [p.__dict__ for p in pairs.site_pairs(vault.name, chunks, rng)]


def export_int8(model: Path, out: Path, texts: list[str], alpha: float = 1.0) -> dict:
    """``model`` as kb-qa runs it (``export.export_model``), keeping only what kb-qa reads."""
    report = export.export_model(model, out, texts, alpha)
    for name in ("model-fp32.onnx", "model-folded.onnx"):
        (out / name).unlink()  # 90 + 90 MB a site; model.onnx and vocab.txt stay
    return report


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("vault", type=Path)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--minutes", type=float, default=15.0)
    parser.add_argument("--mix", default="link=1,question=1,heading=1")
    parser.add_argument("--lr", type=float, default=2e-5)
    parser.add_argument("--passes", type=int, default=2)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--max-tokens", type=int, default=128)
    parser.add_argument("--freeze", type=int, default=2)
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--base", type=Path, default=None, help="a sentence-transformers folder")
    parser.add_argument("--blend", type=float, default=1.0, help="share of the tuned weights")
    parser.add_argument("--hard-negatives", action="store_true", help="add each pair's BM25 one")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    args.out.mkdir(parents=True, exist_ok=True)
    sections, rows = site_rows(args.vault, args.seed)
    with (args.out / "pairs.jsonl").open("w", encoding="utf-8") as f:
        f.writelines(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
    counts = dict(sorted(Counter(r["kind"] for r in rows).items()))
    mix = train.parse_mix(args.mix)
    chosen = train.sample(rows, mix, args.seed)
    print(f"{args.vault.name}: pairs {counts}, {len(chosen)} in the mix {mix}", flush=True)
    if len(chosen) < args.batch:
        raise SystemExit(
            f"{args.vault.name}: {len(chosen)} pairs in the mix, fewer than one batch of "
            f"{args.batch}: too little of this site's own structure to tune on"
        )
    made = time.perf_counter()
    recipe = train.Recipe(
        minutes=args.minutes,
        batch=args.batch,
        max_tokens=args.max_tokens,
        lr=args.lr,
        freeze=args.freeze,
        passes=args.passes,
        seed=args.seed,
        in_batch_only=not args.hard_negatives,
        base=args.base,
        save_every=50,
    )
    final = train.train(chosen, args.out / "run", recipe)
    trained = time.perf_counter()
    texts = list(dict.fromkeys(r["positive"] for r in rows))[:1000]
    report = export_int8(final, args.out / "onnx", texts, args.blend)
    done = time.perf_counter()
    record = {
        "vault": str(args.vault),
        "sections": sections,
        "pairs": counts,
        "mix": mix,
        "recipe": {k: str(v) for k, v in recipe.__dict__.items()},
        "blend": args.blend,
        "minutes": {
            "pairs": round((made - started) / 60, 2),
            "train": round((trained - made) / 60, 2),
            "export": round((done - trained) / 60, 2),
            "all": round((done - started) / 60, 2),
        },
        "export": report,
    }
    (args.out / "tune.json").write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    print(json.dumps(record["minutes"]))


if __name__ == "__main__":
    main()
