"""A vault of hostile and broken files, generated (symlinks and pipes cannot be committed).

Every case the hardening issue and the earlier bad-input tests named, in one place, so one
test can run all of them against a real server. ``OUTSIDE_MARK`` is text that lives only
outside the vault: it must never come back from any route.
"""

from __future__ import annotations

import os
from pathlib import Path

OUTSIDE_MARK = "zebracorn-outside-secret"
GOOD = {
    "good.md": "# Good\n\n## Otters\n\nOtters hold hands while they sleep.\n",
    "guide/setup.md": "# Setup\n\n## Install\n\nRun the kingfisher installer.\n",
}


def write_hostile_vault(root: Path) -> Path:
    """The vault (``root/vault``), plus ``root/outside`` that it must never read from."""
    outside = root / "outside"
    (outside / "dir").mkdir(parents=True)
    (outside / "secret.md").write_text(f"# Secret\n\n{OUTSIDE_MARK}\n")
    (outside / "dir" / "more.md").write_text(f"# More\n\n{OUTSIDE_MARK} again\n")
    vault = root / "vault"
    vault.mkdir()
    for rel, text in GOOD.items():
        (vault / rel).parent.mkdir(parents=True, exist_ok=True)
        (vault / rel).write_text(text)
    files: dict[str, str | bytes] = {
        "binary.md": b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" * 50,
        "latin1.md": "# Café\n\nCrème brûlée with walnuts.\n".encode("latin-1"),
        "huge.md": "# Huge\n\n" + "word " * 1_200_000,  # over the 5 MB default
        "deep-list.md": "# Deep\n\n" + "".join("  " * i + "- level\n" for i in range(400)),
        "deep-quote.md": "# Quote\n\n" + ">" * 500 + " deep quote\n\n## After\n\nafter text\n",
        "many-headings.md": "".join(f"## Heading {n}\n\npara {n}\n\n" for n in range(3000)),
        "html.md": '# Html\n\n<script>alert("x")</script><img src=x onerror=alert(1)>\n\n'
        "## <img src=x onerror=alert(2)> Heading\n\n[link](javascript:alert(3))\n",
        "escapes.md": "# Esc\n\nterminal \x1b]0;PWNED\x07\x1b[2J escape\n",
        "front.md": "---\ntitle: [unclosed\n---\n# Front\n\nbroken front matter\n",
        "..md": "# Hidden\n\nhidden file\n",
        "new\nline.md": "# Newline\n\nname with a newline\n",
        "empty.md": "",
        "nul-late.md": "# Late NUL\n\n" + "x" * 9000 + "\x00 after\n",
        "crlf.md": "# Crlf\r\n\r\n## Windows\r\n\r\nline endings\r\n",
    }
    for rel, content in files.items():
        path = vault / rel
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8", newline="")
    (vault / "leak.md").symlink_to(outside / "secret.md")
    (vault / "leak-relative.md").symlink_to(Path("..") / "outside" / "secret.md")
    (vault / "leakdir").symlink_to(outside / "dir", target_is_directory=True)
    (vault / "loop").symlink_to(vault, target_is_directory=True)
    (vault / "alias.md").symlink_to(vault / "good.md")  # stays inside: allowed
    (vault / "dangling.md").symlink_to(vault / "nowhere.md")
    os.mkfifo(vault / "pipe.md")
    return vault
