"""The kb-qa chat widget: plain JavaScript and CSS, no build step.

Installed as the ``kb_qa_widget`` package so the MkDocs plugin and ``kb-qa serve`` can
find the files; ``ASSETS`` is the folder that holds them.
"""

from pathlib import Path

ASSETS = Path(__file__).resolve().parent
FILES = ("kb-qa.js", "kb-qa.css")
