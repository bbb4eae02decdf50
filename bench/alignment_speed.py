"""What aligning a model's answer to its excerpts costs (kb_qa/answer/alignment.py).

    python bench/alignment_speed.py

Over ``sample_site``, for the first 20 questions of bench/questions/answers.jsonl: a reply
of one sentence per excerpt (the excerpt's own first sentence, cited), and the longest
reply the server streams (max_reply_chars, 20,000 characters of such sentences, each
citing one to three excerpts). Prints the median and worst time per answer.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from passages import labelled, vault_index

from kb_qa.answer.alignment import aligned
from kb_qa.answer.prepare import prepare


def main() -> None:
    rows = labelled()
    kb = vault_index("sample_site")
    short: list[float] = []
    long: list[float] = []
    for row in [r for r in rows if r["vault"] == "sample_site"][:20]:
        excerpts = prepare(kb, kb.settings, row["question"], for_model=True).prompt.excerpts
        sentences = [
            f"{h.chunk.text.split('.')[0].strip('# ')} [{n}]." for n, h in enumerate(excerpts, 1)
        ]
        order = {n: n for n in range(1, len(excerpts) + 1)}
        reply = " ".join(sentences)
        started = time.perf_counter()
        aligned(reply, order, excerpts)
        short.append((time.perf_counter() - started) * 1000)
        longest = ""
        i = 0
        while len(longest) < 20_000:
            n = i % len(excerpts) + 1
            cite = "".join(f"[{m}]" for m in range(n, min(n + 1 + i % 3, len(excerpts) + 1)))
            longest += sentences[n - 1][: -len(f" [{n}].")] + f" {cite}. "
            i += 1
        started = time.perf_counter()
        aligned(longest[:20_000], order, excerpts)
        long.append((time.perf_counter() - started) * 1000)
    kb.close()
    for name, times in (("one sentence per excerpt", short), ("20,000 characters", long)):
        print(f"{name:<26} median {statistics.median(times):6.1f} ms, worst {max(times):6.1f} ms")


if __name__ == "__main__":
    # No options: --help says what it measures instead of running it.
    argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    ).parse_args()
    main()
