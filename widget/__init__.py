"""The kb-qa chat widget: one plain script (esbuild's bundle of ``src/``) and one stylesheet.

Installed as the ``kb_qa_widget`` package so the MkDocs plugin and ``kb-qa serve`` can
find the files; ``ASSETS`` is the folder that holds them. The wheel ships the built
``kb-qa.js`` and ``kb-qa.css`` only: the modules, tests and build tools stay in the repository.
"""

import hashlib
from functools import cache
from pathlib import Path

ASSETS = Path(__file__).resolve().parent
FILES = ("kb-qa.js", "kb-qa.css")
if missing := [name for name in FILES if not (ASSETS / name).is_file()]:
    # A wheel built from a checkout or sdist whose bundle was removed or never built: the
    # build succeeds (package data that matches nothing is skipped), the chat could not run.
    from kb_qa.errors import InstallError  # said in words by the CLI and the MkDocs plugin

    raise InstallError(
        f"kb-qa's chat widget is missing {', '.join(missing)} in {ASSETS}: this installation "
        "was built without the widget's bundle. Reinstall kb-qa, or build the bundle before "
        "building kb-qa (cd widget && npm ci && npm run build)."
    )


@cache
def version() -> str:
    """A short hash of the built files: pages load ``kb-qa.js?v=…``, so a browser or CDN that
    cached an older widget fetches this one after an upgrade, not days later."""
    digest = hashlib.sha256()
    for name in FILES:
        digest.update((ASSETS / name).read_bytes())
    return digest.hexdigest()[:12]
