"""Vaults written on Windows and macOS and carried by a sync tool (Dropbox, iCloud, OneDrive,
Syncthing, git with autocrlf): CRLF and lone CR line endings, asked about over real HTTP,
with every quoted range checked against the file's own text."""

from __future__ import annotations

import codecs
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
from uvicorn_thread import UvicornThread

from kb_qa.kb.knowledge_base import KnowledgeBase
from kb_qa.serve.app import create_app

KB = Callable[..., KnowledgeBase]

# A note as Notepad, or git with core.autocrlf on Windows, writes it.
BOILER = (
    "# Boiler\r\n\r\n## Reset\r\n\r\nTo reset the boiler after a lockout, run this:\r\n\r\n"
    "```bash\r\nboilerctl reset --force\r\n```\r\n\r\n## Pressure\r\n\r\n"
    "Keep the boiler pressure at 1.5 bar when cold. ^pressure-rule\r\n"
    "Top it up at the filling loop under the boiler.\r\n\r\n"
    "## Service\r\n\r\n- Annual service by Gasco\r\n  id:: 6601e0b7-2c1e-4f0a-9d2b-7a3e2c1b0d11\r\n"
    "- The flue is checked every other year\r\n"
)
# A table long enough to be split over chunks: its later rows carry its header as context.
PARTS = "# Parts\r\n\r\n## Spares\r\n\r\n| part | supplier |\r\n|---|---|\r\n" + "".join(
    f"| {name} | {supplier} |\r\n"
    for name, supplier in [
        ("thermocouple", "Gasco"),
        ("ignition lead", "Gasco"),
        ("pressure valve", "Heatline"),
        ("expansion vessel", "Zilmet"),
        ("diverter valve", "Heatline"),
        ("fan assembly", "Vaillant"),
        ("printed circuit board", "Vaillant"),
        ("condensate trap", "Ideal"),
    ]
)


def _ask(url: str, question: str) -> dict[str, Any]:
    ask = {"question": question, "stream": False}
    response = httpx.post(url + "/api/ask", json=ask, timeout=20)
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def test_a_crlf_note_is_quoted_without_carriage_returns_and_cited_to_its_exact_range(
    make_vault: Callable[..., Path], kb: KB
) -> None:
    """An answer from a CRLF note carried "\\r\\n" into its text (a code fence closing on
    "```\\r"), its citation's range ended on the line's "\\r", and an Obsidian block id or a
    Logseq id:: line ending in CRLF was quoted, which the apps hide."""
    vault = make_vault({"boiler.md": BOILER, "parts.md": PARTS})
    base = kb(vault, rate_limit=0, chunk_chars=200)
    base.index()
    with UvicornThread(create_app(base)) as server:
        for question, said in [
            ("How do I reset the boiler after a lockout?", "boilerctl reset --force\n```"),
            ("What boiler pressure when cold?", "1.5 bar when cold."),
            ("Who does the annual service?", "Annual service by Gasco"),
            ("Who supplies the condensate trap?", "| part | supplier |\n|---|---|\n"),
        ]:
            body = _ask(server.url, question)
            assert said in body["text"], repr(body["text"])
            assert "\r" not in body["text"]
            assert "^pressure-rule" not in body["text"] and "id::" not in body["text"]
            for citation in body["citations"]:
                source = (vault / citation["path"]).read_bytes().decode("utf-8")
                text = citation["text"]
                assert source[citation["start"] : citation["end"]] == text
                assert not text.endswith(("\r", "\n")) and not text.startswith(("\r", "\n"))


def test_a_note_with_classic_mac_line_endings_is_indexed_and_quoted(
    make_vault: Callable[..., Path], kb: KB
) -> None:
    """A note whose lines end in a lone CR (classic Mac OS, some exporters) was skipped:
    "could not be parsed as Markdown (IndexError: list index out of range)"."""
    note = (
        "# Quince Jelly\r\rThe quince jelly needs two kilograms of quinces.\r\r"
        "## Setting\r\rBoil until the wrinkle test passes on a cold saucer.\r"
    )
    vault = make_vault({"jelly.md": note.encode("utf-8")})
    base = kb(vault, rate_limit=0)
    report = base.index()
    assert not report.skipped, report.skipped
    hit = base.search("wrinkle test cold saucer", 1)[0]
    assert (hit.chunk.heading, hit.chunk.anchor, hit.chunk.line_start) == ("Setting", "setting", 5)
    assert note[hit.chunk.start : hit.chunk.end].replace("\r", "\n") == hit.chunk.text
    with UvicornThread(create_app(base)) as server:
        body = _ask(server.url, "How long do I boil the quince jelly for the wrinkle test?")
        assert "wrinkle test passes" in body["text"] and "\r" not in body["text"]
        citation = body["citations"][0]
        assert note[citation["start"] : citation["end"]].replace("\r", "\n") == citation["text"]
        page = httpx.get(server.url + "/view/jelly.md", timeout=20).text
        assert '<h2 id="setting">Setting</h2>' in page


def test_block_ids_and_logseq_ids_of_a_crlf_note_are_addresses_in_view(
    make_vault: Callable[..., Path], kb: KB
) -> None:
    """In a CRLF note, "^pressure-rule" and "id:: <uuid>" lines end in CR: a link to
    ``[[boiler#^pressure-rule]]`` opened the note's top instead of its section, and
    ``((uuid))`` showed the bare id."""
    journal = (
        "- Rang Gasco about the boiler, see [[boiler#^pressure-rule]]\r\n"
        "- ((6601e0b7-2c1e-4f0a-9d2b-7a3e2c1b0d11)) booked\r\n"
    )
    base = kb(make_vault({"boiler.md": BOILER, "journal.md": journal}), rate_limit=0)
    base.index()
    with UvicornThread(create_app(base)) as server:
        page = httpx.get(server.url + "/view/journal.md", timeout=20).text
    assert 'href="/view/boiler.md#pressure"' in page
    assert '<a href="/view/boiler.md#service">Annual service by Gasco</a>' in page
    assert "6601e0b7" not in page


def test_utf16_and_windows_1252_notes_are_read_as_their_editor_wrote_them(
    make_vault: Callable[..., Path], kb: KB
) -> None:
    """A note Notepad saved as "Unicode" (UTF-16 with a byte order mark; UTF-32 too) was skipped as
    "binary file with a Markdown extension (contains NUL bytes)", and one saved as "ANSI"
    (Windows-1252) was indexed and shown as "Cr\ufffdme br\ufffdl\ufffde"."""
    sourdough = "# Sourdough\r\n\r\nFeed the starter with rye flour twice a day.\r\n"
    dessert = "# Crème brûlée\n\nThe crème brûlée needs a “blowtorch” and 5 € of sugar.\n"
    vault = make_vault(
        {
            "le.md": codecs.BOM_UTF16_LE + sourdough.encode("utf-16-le"),
            "be.md": codecs.BOM_UTF16_BE
            + "# Aquarium\n\nChange a quarter weekly.\n".encode("utf-16-be"),
            "nobom.md": "# Loose\n\nUTF-16 without a mark.\n".encode("utf-16-le"),
            # UTF-32 LE's mark opens with UTF-16 LE's: it was read as UTF-16, NULs and all.
            "wide.md": "# Kiln\n\nFire the kiln to cone six.\n".encode("utf-32"),
            "ansi.md": dessert.encode("cp1252"),
            # UTF-8 with one damaged byte stays UTF-8: only that byte is replaced.
            "damaged.md": b"# Caf\xc3\xa9\n\nThe caf\xc3\xa9 roasts beans\xff on Fridays.\n",
        }
    )
    base = kb(vault, rate_limit=0)
    report = base.index()
    assert [path for path, _ in report.skipped] == ["nobom.md"]
    assert "UTF-16" in report.skipped[0][1] and "UTF-8" in report.skipped[0][1]
    warned = dict(report.warnings)
    assert "Windows-1252" in warned["ansi.md"] and "U+FFFD" in warned["damaged.md"]
    assert {"le.md", "be.md", "wide.md"}.isdisjoint(warned)
    kiln = base.search("kiln cone", 1)[0].chunk
    assert kiln.path == "wide.md" and kiln.text == "# Kiln\n\nFire the kiln to cone six."
    hit = base.search("rye flour starter", 1)[0]
    assert hit.chunk.path == "le.md" and hit.chunk.heading == "Sourdough"
    assert sourdough[hit.chunk.start : hit.chunk.end] == hit.chunk.text
    assert base.search("aquarium quarter", 1)[0].chunk.path == "be.md"
    hit = base.search("crème brûlée blowtorch", 1)[0]
    assert hit.chunk.path == "ansi.md" and hit.chunk.text == dessert.strip()
    damaged = base.search("café roasts beans", 1)[0].chunk
    assert damaged.text.endswith("The café roasts beans\ufffd on Fridays.")
    with UvicornThread(create_app(base)) as server:
        body = _ask(server.url, "What do I feed the sourdough starter?")
        citation = body["citations"][0]
        assert sourdough[citation["start"] : citation["end"]] == citation["text"]
        assert "rye flour" in citation["text"]
        le = httpx.get(server.url + "/view/le.md", timeout=20).text
        assert "Feed the starter with rye flour twice a day." in le
        ansi = httpx.get(server.url + "/view/ansi.md", timeout=20).text
        assert "The crème brûlée needs a “blowtorch” and 5 € of sugar." in ansi


# Notes as an old editor on a Russian, Greek, Japanese, Chinese or Korean system saved
# them, and Western ones whose bytes would also decode in an Asian code page.
LEGACY = {
    "borscht.md": ("# Борщ\n\nСвёклу натереть на крупной тёрке и тушить 15 минут.\n", "cp1251"),
    "dacha.md": ("# Дача\n\nПолить огурцы.\n", "cp1251"),
    "greek.md": ("# Συνταγή\n\nΑλάτι και πιπέρι στη σούπα.\n", "cp1253"),
    "shopping.md": ("# 買い物リスト\n\n牛乳と卵を買う。\n", "shift_jis"),
    "eucjp.md": ("# 会議メモ\n\n来週の火曜日にリリースします。\n", "euc_jp"),
    "jiaozi.md": ("# 饺子做法\n\n加 260 毫升凉水，和面。\n", "gb18030"),
    "big5.md": ("# 餃子做法\n\n加水和麵，醒麵半小時。\n", "big5"),
    "minutes.md": ("# 회의록\n\n다음 주 화요일에 배포합니다.\n", "euc_kr"),
    "cup.md": ("# Cocoa\n\nPrice: 10£, heat to 20°C, add ½ cup.\n", "cp1252"),
    "spanish.md": ("# Año nuevo\n\n¿Dónde está la señora? ¡Mañana!\n", "cp1252"),
}
NAMES = {
    "cp1251": "Windows-1251 (Cyrillic)",
    "cp1253": "Windows-1253 (Greek)",
    "shift_jis": "Shift JIS (Japanese)",
    "euc_jp": "EUC-JP (Japanese)",
    "gb18030": "GB18030 (Chinese)",
    "big5": "Big5 (Traditional Chinese)",
    "euc_kr": "EUC-KR (Korean)",
    "cp1252": "Windows-1252 (Western European)",
}


def test_notes_in_a_legacy_code_page_are_read_in_it(
    make_vault: Callable[..., Path], kb: KB
) -> None:
    """A note saved as "ANSI" on a Russian Windows, or in Shift JIS or GB18030, was read as
    Windows-1252 ("Áîðù" for "Борщ"): indexed as mojibake that no question finds. Its code
    page is found when its text reads in that code page's script; a Western note whose
    bytes also decode as Shift JIS ("½ cup at 20°C") stays Windows-1252."""
    vault = make_vault({name: text.encode(codec) for name, (text, codec) in LEGACY.items()})
    base = kb(vault, rate_limit=0)
    report = base.index()
    assert report.skipped == []
    warned = dict(report.warnings)
    chunks = base.searchable_chunks()
    for name, (text, codec) in LEGACY.items():
        assert warned[name] == (
            f"not UTF-8, read as {NAMES[codec]}: if its letters show wrong, save it as UTF-8"
        ), name
        assert [c.text for c in chunks if c.path == name] == [text.strip()], name
    hit = base.search("饺子 毫升", 1)[0]
    assert hit.chunk.path == "jiaozi.md" and "加 260 毫升凉水" in hit.chunk.text
    with UvicornThread(create_app(base)) as server:
        page = httpx.get(server.url + "/view/borscht.md", timeout=20).text
        assert "Свёклу натереть на крупной тёрке" in page


def test_a_sync_tool_s_conflicted_copy_beside_its_note_is_skipped_saying_so(
    make_vault: Callable[..., Path], kb: KB
) -> None:
    """Dropbox's and Syncthing's conflicted copies were indexed beside the note, so every
    answer from that note came twice; an iCloud placeholder (a note not downloaded) was
    left out without a word. A copy whose note is gone is the note now, and names only
    ambiguous tools write ("Meeting 2.md", "plan-DESKTOP-ABC.md") are notes."""
    budget = "# Holiday\n\nThe holiday budget is four thousand euros.\n"
    vault = make_vault(
        {
            "holiday.md": budget,
            "holiday (conflicted copy 2024-01-02).md": budget,
            "holiday (Sam Lee's conflicted copy 2024-01-02).md": budget,
            "holiday.sync-conflict-20240102-123456-ABCDEFG.md": budget,
            "orphan (conflicted copy 2024-01-02).md": "# Orphan\n\nIts note was deleted.\n",
            "Meeting 2.md": "# Meeting 2\n\nThe roofer quoted in March.\n",
            "plan-DESKTOP-ABC.md": "# Plan\n\nA plan.\n",
            ".stversions/holiday~20240101-101010.md": budget,
            "trips/.lisbon.md.icloud": b"bplist00\x00\x01",
        }
    )
    base = kb(vault, rate_limit=0)
    report = base.index()
    assert sorted(p["path"] for p in base.pages()) == [
        "Meeting 2.md",
        "holiday.md",
        "orphan (conflicted copy 2024-01-02).md",
        "plan-DESKTOP-ABC.md",
    ]
    skipped = dict(report.skipped)
    assert sorted(skipped) == [
        "holiday (Sam Lee's conflicted copy 2024-01-02).md",
        "holiday (conflicted copy 2024-01-02).md",
        "holiday.sync-conflict-20240102-123456-ABCDEFG.md",
        "trips/.lisbon.md.icloud",
    ]
    assert "conflicted copy of holiday.md" in skipped["holiday (conflicted copy 2024-01-02).md"]
    assert "lisbon.md" in skipped["trips/.lisbon.md.icloud"]
    assert "download" in skipped["trips/.lisbon.md.icloud"]


def test_a_note_macos_named_decomposed_is_found_by_a_name_typed_composed(
    make_vault: Callable[..., Path], kb: KB
) -> None:
    """macOS writes "Café.md" as "Cafe" and a combining accent (NFD); a link, a URL or a
    path filter typed on a keyboard has "é" (NFC). The link stayed text in /view and
    counted for nothing in search, the page's URL was a 404, and --include matched nothing."""
    import unicodedata

    from kb_qa.ingest import linkgraph

    decomposed = unicodedata.normalize("NFD", "Café.md")
    vault = make_vault(
        {
            decomposed: "# Menu\n\n## Crème brûlée\n\nBake at 150 °C for 40 minutes.\n",
            "links.md": "# Links\n\nSee [[Café]] and [[Café#Crème brûlée]].\n",
        },
        name="obsidian",
    )
    base = kb(vault, rate_limit=0)
    base.index()
    targets = {t for o, t, _ in linkgraph.resolved(base.store.chunks()) if o[0] == "links.md"}
    assert [path for path, _ in targets] == [decomposed]
    hits = base.search("bake temperature", 5, include=["Café.md"])
    assert hits and {h.chunk.path for h in hits} == {decomposed}
    with UvicornThread(create_app(base)) as server:
        page = httpx.get(f"{server.url}/view/links.md").text
        typed = httpx.get(f"{server.url}/view/Caf%C3%A9.md")
    quoted = quote(decomposed)
    assert f'<a href="/view/{quoted}">Café</a>' in page, page
    assert f'<a href="/view/{quoted}#creme-brulee">Café &gt; Crème brûlée</a>' in page, page
    assert typed.status_code == 200 and "Bake at 150" in typed.text


def test_two_notes_named_alike_but_for_their_unicode_form_each_open_their_own_page(
    make_vault: Callable[..., Path], kb: KB
) -> None:
    """On Linux (or a synced folder) "Crème.md" composed and decomposed are two notes: the
    decomposed one's citation opened the other's page, without its anchor."""
    import unicodedata

    composed = unicodedata.normalize("NFC", "Crème.md")
    decomposed = unicodedata.normalize("NFD", "Crème.md")
    vault = make_vault(
        {
            composed: "# Custard\n\nVanilla custard with six yolks.\n",
            decomposed: "# Caramel\n\nCaramel sauce with 40 g butter.\n",
        },
        name="twins",
    )
    base = kb(vault, rate_limit=0)
    base.index()
    with UvicornThread(create_app(base)) as server:
        first = httpx.get(f"{server.url}/view/{quote(composed)}").text
        second = httpx.get(f"{server.url}/view/{quote(decomposed)}").text
    assert "six yolks" in first and "40 g butter" not in first
    assert "40 g butter" in second and "six yolks" not in second
