"""How long a first ``mkdocs serve`` keeps an author waiting: for the preview, and for its chat.

    python bench/preview_start.py [--sites sample_site uv mkdocs-material] [--runs 1]

For ``sample_site`` and each corpus named (``KBQA_CORPORA``), makes the site buildable here
(``parity.build_site``: a copy, its config made offline) with the kb-qa plugin, then starts
a real ``mkdocs serve`` on it with an empty index folder (a cold start: every section is
embedded) and times, from the process's start: the preview's home page answering 200, and
the chat's API answering ``/api/ready`` 200 (its index built, the search warmed up). Prints
per site: sections embedded, both times, and the plugin's own "ready in" line.

Before the chat's first index run went beside the preview (kb_qa/serve/first_index.py),
the preview waited for the whole of it: run this with an older checkout first on
``PYTHONPATH`` to compare. Run it on a quiet machine: both cores are used.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import parity
from corpora import SOURCE, WORK

from kb_qa.serve.serving import free_port

ROOT = Path(__file__).resolve().parents[1]
LIMIT_SECONDS = 1800  # a cold index of a big site takes minutes on two cores


def time_start(root: Path, index: Path) -> dict[str, object]:
    """Start ``mkdocs serve`` on ``root`` with an empty ``index`` folder; the times."""
    shutil.rmtree(index, ignore_errors=True)
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("KBQA_")}
    env |= {"KBQA_INDEX_DIR": str(index), "NO_MKDOCS_2_WARNING": "1"}
    log = index.parent / f"{index.name}.log"
    site = f"http://127.0.0.1:{port}/"
    started = time.perf_counter()
    with log.open("w") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "mkdocs", "serve", "-a", f"127.0.0.1:{port}", "--no-livereload"],
            cwd=root,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            text=True,
        )
        preview = chat = None
        api = ""
        try:
            while time.perf_counter() - started < LIMIT_SECONDS and None in (preview, chat):
                if proc.poll() is not None:
                    raise SystemExit(f"mkdocs serve exited: see {log}")
                if preview is None and _answers(site, 200, follow=True):
                    preview = time.perf_counter() - started
                if not api:
                    found = re.search(
                        r"API for the chat widget at (http://[\d.:]+)", log.read_text()
                    )
                    api = found.group(1) if found else ""
                if chat is None and api and _answers(api + "/api/ready", 200):
                    chat = time.perf_counter() - started
                time.sleep(0.1)
        finally:
            proc.terminate()
            proc.wait(30)
    text = log.read_text()
    embedded = re.search(r"(\d+) chunks indexed \((\d+) embedded", text)
    ready = re.search(r"ready in ([\d.]+) s", text)
    return {
        "sections": int(embedded.group(1)) if embedded else None,
        "preview_s": round(preview, 1) if preview is not None else None,
        "chat_s": round(chat, 1) if chat is not None else None,
        "plugin_ready_s": float(ready.group(1)) if ready else None,
    }


def _answers(url: str, status: int, follow: bool = False) -> bool:
    try:
        return httpx.get(url, timeout=2, follow_redirects=follow).status_code == status
    except httpx.HTTPError:
        return False


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sites", nargs="+", default=["sample_site", "uv"])
    parser.add_argument("--runs", type=int, default=1)
    args = parser.parse_args()
    print(f"{'site':<16} {'sections':>8} {'preview':>9} {'chat ready':>10}")
    for name in args.sites:
        source = ROOT / "sample_site" if name == "sample_site" else SOURCE / name
        work = WORK / "preview-start" / name
        shutil.rmtree(work, ignore_errors=True)
        work.mkdir(parents=True)
        build = parity.build_site(source, work)
        parity.with_plugin(build.root)
        for run in range(args.runs):
            row = time_start(build.root, work / f"index-{run}")
            print(
                f"{name:<16} {row['sections'] or '?':>8} {row['preview_s']:>8} s "
                f"{row['chat_s']:>8} s   {json.dumps(row)}",
                flush=True,
            )


if __name__ == "__main__":
    main()
