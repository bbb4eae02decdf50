"""Notes saved in a legacy code page, not UTF-8: Windows' "ANSI" of a Russian, Greek or
Japanese system, Shift JIS, GB18030, Big5, EUC-KR.

Bytes that hold no UTF-8 at all are read as the code page charset-normalizer finds for them,
among those below, when the text that gives is written in that code page's script; else as
Windows-1252 (Notepad's "ANSI" in Western Europe and the Americas). A short note cannot tell
the Latin code pages apart (Windows-1250 read "crème brûlée" as "crčme brűlée"), nor KOI8-R
from Thai, so those are not guessed; and "½ cup at 20°C" decodes as Shift JIS' half-width
katakana, which is why the script decides, not the guess alone.
"""

from __future__ import annotations

import re

__all__ = ["decode_legacy"]

# The code pages guessed among, with how a warning names each and the script its text must
# be written in (at least SCRIPT_SHARE of its characters outside ASCII).
_KANA_HAN = "[\u3040-\u30ff\u4e00-\u9fff]"
_CODE_PAGES: dict[str, tuple[str, re.Pattern[str]]] = {
    "cp1251": ("Windows-1251 (Cyrillic)", re.compile("[\u0400-\u04ff]")),
    "cp1253": ("Windows-1253 (Greek)", re.compile("[\u0370-\u03ff]")),
    "shift_jis": ("Shift JIS (Japanese)", re.compile(_KANA_HAN)),
    "euc_jp": ("EUC-JP (Japanese)", re.compile(_KANA_HAN)),
    "gb18030": ("GB18030 (Chinese)", re.compile("[\u4e00-\u9fff]")),
    "big5": ("Big5 (Traditional Chinese)", re.compile("[\u4e00-\u9fff]")),
    "euc_kr": ("EUC-KR (Korean)", re.compile("[\uac00-\ud7af]")),
}
SCRIPT_SHARE = 0.8
_WESTERN = ("cp1252", "Windows-1252 (Western European)")


def decode_legacy(data: bytes) -> tuple[str, str]:
    """Bytes holding no UTF-8 as text, and the name of the code page they were read as."""
    from charset_normalizer import from_bytes

    best = from_bytes(data, cp_isolation=[_WESTERN[0], *_CODE_PAGES]).best()
    if best is not None and best.encoding in _CODE_PAGES:
        name, script = _CODE_PAGES[best.encoding]
        text = str(best)
        beyond = [c for c in text if ord(c) > 0x7F]
        if beyond and sum(bool(script.match(c)) for c in beyond) >= SCRIPT_SHARE * len(beyond):
            return text, name
    return data.decode(_WESTERN[0], errors="replace"), _WESTERN[1]
