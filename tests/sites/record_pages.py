"""A hook the anchor-parity harness adds to the sites it builds: records which source file
each built page came from and its URL, one JSON object per line, in ``$KBQA_PARITY_PAGES``."""

from __future__ import annotations

import json
import os
from typing import Any


def on_post_page(output: str, /, *, page: Any, config: Any) -> str:
    target = os.environ.get("KBQA_PARITY_PAGES")
    if target and page.file.abs_src_path:
        with open(target, "a", encoding="utf-8") as f:
            f.write(json.dumps({"src": page.file.abs_src_path, "url": page.url}) + "\n")
    return output
