"""Check that ``train.py --cache-chunk`` computes the plain loss's gradient.

    python training/check_gradcache.py      # in the training environment (torch)

With dropout off (a copy of the base model whose config sets it to 0), one step at batch 8
is taken twice from the same weights: at once, and through the gradient cache in chunks
of 3 (uneven on purpose). Both must move every weight alike; prints the mean difference
of the two moves against the mean move, and fails when it exceeds a thousandth of it.
"""

from __future__ import annotations

import argparse
import itertools
import json
import shutil
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import train  # noqa: E402


def main() -> None:
    import torch

    with (HERE / "data" / "pairs.jsonl").open(encoding="utf-8") as lines:
        rows = [json.loads(line) for line in itertools.islice(lines, 60)]
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp) / "base"
        shutil.copytree(train.base_model_path(), base)
        config = json.loads((base / "config.json").read_text())
        config["hidden_dropout_prob"] = config["attention_probs_dropout_prob"] = 0.0
        (base / "config.json").write_text(json.dumps(config))
        moved = {}
        for chunk in (0, 3):
            recipe = train.Recipe(
                minutes=5,
                batch=8,
                max_tokens=64,
                lr=1e-3,
                max_steps=1,
                anchor=2.0,
                base=base,
                cache_chunk=chunk,
            )
            out = Path(tmp) / f"out{chunk}"
            train.train([dict(r) for r in rows], out, recipe)
            moved[chunk] = torch.load(out / "state.pt", weights_only=False)["model"]
        from sentence_transformers import SentenceTransformer

        start = SentenceTransformer(str(base), device="cpu").state_dict()
        moves = torch.cat([(moved[0][n] - w).abs().flatten() for n, w in start.items()])
        apart = torch.cat([(moved[0][n] - moved[3][n]).abs().flatten() for n in start])
        # Adam's first step is about lr times the sign of the gradient, so a weight whose
        # gradient is near zero may round either way: the means are compared.
        print(f"mean move of a weight {moves.mean():.2e}; the two moves apart {apart.mean():.2e}")
        if apart.mean() > 1e-3 * moves.mean():
            raise SystemExit("the cached step does not match the plain one")


if __name__ == "__main__":
    # No options: --help says what it measures instead of running it.
    argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    ).parse_args()
    main()
