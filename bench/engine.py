"""Engine speed and memory on the four corpora: cold index, re-index, one edit, search.

    python bench/engine.py

Figures printed:
- cold index per corpus and in total: seconds, chunks, passages/s, and the ratio of
  end-to-end time to the embedding model's own time on the same texts (target <= 1.2);
- re-index with no changes (target < 1 s for all four), and after editing one file;
- search latency, k=50, warm: p50 / p95 over the dev questions (targets 30 / 60 ms);
- peak RSS of an index process and of a warm search process.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from corpora import CORPORA, QUESTIONS, WORK, corpus_copy


def child(code: str) -> dict:
    """Run code in a fresh Python; return its JSON result (which reports its own peak RSS)."""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    result = json.loads(out.stdout.strip().splitlines()[-1])
    result["peak_rss_mb"] = round(result.get("rss", 0), 1)
    return result


INDEX = """
import json, time, sys
from kb_qa import KnowledgeBase
kb = KnowledgeBase({vault!r}, index_dir={index!r})
t = time.perf_counter(); r = kb.index(); total = time.perf_counter() - t
texts = [c.index_text for c in kb.store.chunks()]
texts = list(dict.fromkeys(texts))
texts.sort(key=len)
emb = kb.embedder
t = time.perf_counter()
for i in range(0, len(texts), kb.settings.embed_batch):
    emb.embed_passages(texts[i:i + kb.settings.embed_batch])
pure = time.perf_counter() - t
import resource
print(json.dumps(dict(seconds=total, chunks=r.chunks, embedded=r.embedded, pure=pure, model=kb.stats()["embed_model"], rss=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)))
"""

REINDEX = """
import json, time
from kb_qa import KnowledgeBase
kb = KnowledgeBase({vault!r}, index_dir={index!r})
t = time.perf_counter(); r = kb.index(); s = time.perf_counter() - t
print(json.dumps(dict(seconds=s, embedded=r.embedded)))
"""

SEARCH = """
import json, time, statistics
from kb_qa import KnowledgeBase
qs = [json.loads(l)["question"] for l in open({questions!r})]
kb = KnowledgeBase({vault!r}, index_dir={index!r})
kb.search("warm up", 50)
lat = []
for _ in range(3):
    for q in qs:
        t = time.perf_counter(); kb.search(q, 50, sections=False); lat.append(time.perf_counter() - t)
lat.sort()
import resource
print(json.dumps(dict(p50=lat[len(lat)//2]*1000, p95=lat[int(len(lat)*0.95)]*1000, n=len(lat), rss=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)))
"""


def main() -> None:
    rows = []
    for name in CORPORA:
        vault = corpus_copy(name)
        index = str(WORK / f"{name}-speed-index")
        shutil.rmtree(index, ignore_errors=True)
        cold = child(INDEX.format(vault=str(vault), index=index))
        again = child(REINDEX.format(vault=str(vault), index=index))
        # One edit: append a paragraph to the largest file, written via temp + rename.
        biggest = max(vault.rglob("*.md"), key=lambda p: p.stat().st_size)
        original = biggest.read_text(encoding="utf-8")
        tmp = biggest.with_suffix(".tmp")
        tmp.write_text(original + "\n\nBenchmark edit: the flux capacitor needs 1.21 gigawatts.\n")
        os.replace(tmp, biggest)
        edit = child(REINDEX.format(vault=str(vault), index=index))
        biggest.write_text(original, encoding="utf-8")
        child(REINDEX.format(vault=str(vault), index=index))
        search = child(
            SEARCH.format(vault=str(vault), index=index, questions=str(QUESTIONS / f"{name}.jsonl"))
        )
        rows.append((name, cold, again, edit, search))
        print(
            f"{name}: cold {cold['seconds']:.1f} s, {cold['chunks']} chunks "
            f"({cold['embedded'] / cold['seconds']:.1f}/s; embedding alone {cold['pure']:.1f} s, "
            f"ratio {cold['seconds'] / cold['pure']:.2f}; model {cold['model']}; "
            f"peak RSS {cold['peak_rss_mb']} MB) | no-change re-index {again['seconds'] * 1000:.0f} ms | "
            f"one edit {edit['seconds'] * 1000:.0f} ms ({edit['embedded']} embedded) | "
            f"search k=50 p50 {search['p50']:.1f} ms p95 {search['p95']:.1f} ms "
            f"(search process peak RSS {search['peak_rss_mb']} MB)",
            flush=True,
        )
    cold_total = sum(r[1]["seconds"] for r in rows)
    pure_total = sum(r[1]["pure"] for r in rows)
    chunks = sum(r[1]["chunks"] for r in rows)
    print(
        f"\nALL: cold index {cold_total:.1f} s for {chunks} chunks ({chunks / cold_total:.1f} chunks/s); "
        f"embedding alone {pure_total:.1f} s; ratio {cold_total / pure_total:.2f}"
    )
    print(f"ALL: no-change re-index {sum(r[2]['seconds'] for r in rows) * 1000:.0f} ms total")
    lat50 = statistics.median(r[4]["p50"] for r in rows)
    print(
        f"ALL: search p50 (median of corpora) {lat50:.1f} ms; worst p95 {max(r[4]['p95'] for r in rows):.1f} ms"
    )


if __name__ == "__main__":
    # No options: --help says what it measures instead of running it.
    argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    ).parse_args()
    main()
