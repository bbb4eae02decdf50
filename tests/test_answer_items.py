"""A long bullet list in a no-key answer is cut to the item that answers (kb_qa/answer/items.py):
an outliner's page (Logseq: every line a bullet, nesting instead of headings) was quoted whole,
and the page highlighted all of it."""

from __future__ import annotations

from kb_qa.answer.blocks import passages
from kb_qa.answer.extractive import quote
from kb_qa.answer.items import LIST_CHARS, is_long_list, matching_item
from kb_qa.types import Chunk, Hit

# A Logseq page: page properties, then one outline indented with tabs, no headings.
HOME_SERVER = """type:: project
status:: active

- Overview
\t- Small always-on box in the hallway cupboard running media and home automation.
\t- Hardware
\t\t- Chassis: Fractal Node 304, CPU: Intel i3-12100, 32 GB of RAM
\t\t- Two WD Red Plus 8 TB disks in a ZFS mirror, pool name `tank`
- Services
\t- Jellyfin
\t\t- Media server for the family
\t\t- Listens on port 8096 behind Caddy at `media.home.lan`
\t- Home Assistant
\t\t- Runs in a VM with 2 cores and 4 GB, USB Zigbee stick passed through
\t\t- Reachable at `ha.home.lan`, port 8123
- Backups
\t- restic to B2
\t\t- Backs up `/srv` and `/home` to the bucket `hs-backup-7731` every night at 02:30
\t\t- Keeps 7 daily, 4 weekly and 12 monthly snapshots
- Log
\t- [[Jan 4th, 2025]] installed Debian, set up the ZFS mirror
\t- [[Feb 2nd, 2025]] restic to B2 configured, first backup took nine hours
\t- [[Mar 12th, 2025]] replaced the CPU fan, the stock one rattled
"""


def _page(text: str) -> Chunk:
    return Chunk(
        "c",
        "pages/Home Server.md",
        "pages/Home Server.md",
        "",
        "Home Server",
        ("Home Server",),
        1,
        text,
        0,
        len(text),
        1,
        text.count("\n"),
        "h",
    )


def _quoted(question: str, text: str) -> tuple[str, str]:
    """What a no-key answer to ``question`` quotes of ``text`` (the range the page
    highlights), and the answer as shown."""
    result = quote(question, [(1, Hit(_page(text), 1.0))])
    a, b = result.quoted[1]
    return text[a:b], "".join(result.pieces)


def test_an_outline_is_quoted_from_the_bullet_that_answers_with_its_parent() -> None:
    assert len(HOME_SERVER) > LIST_CHARS
    quoted, shown = _quoted("What port does Jellyfin listen on?", HOME_SERVER)
    # The Jellyfin bullet with its sub-bullets, grown to the "Services" bullet it is in,
    # which is short: the docs' bytes, the page's other bullets left out.
    services = HOME_SERVER[HOME_SERVER.index("- Services") : HOME_SERVER.index("\n- Backups")]
    assert quoted == services
    assert "- Services\n\t- Jellyfin\n\t\t- Media server for the family\n" in shown
    assert "Fractal" not in shown and "restic" not in shown  # not the whole page


def test_a_bullet_grows_to_its_parent_only_while_that_is_short() -> None:
    services = "\n".join(
        f"\t- Service {n}\n\t\t- Runs something else entirely ({n})" for n in range(9)
    )
    text = HOME_SERVER.replace("- Services\n", "- Services\n" + services + "\n")
    quoted, _ = _quoted("What port does Jellyfin listen on?", text)
    assert quoted == (
        "\t- Jellyfin\n\t\t- Media server for the family\n"
        "\t\t- Listens on port 8096 behind Caddy at `media.home.lan`"
    )


def test_a_bullet_is_read_with_the_bullets_it_is_nested_in() -> None:
    # "restic to B2 configured" in the log holds "restic"; the bullet under Backups holds
    # "backs" and "restic" with its parents: its path answers.
    quoted, _ = _quoted("When does the restic backup run?", HOME_SERVER)
    assert "every night at 02:30" in quoted
    assert "Log" not in quoted and "nine hours" not in quoted


def test_a_long_list_with_no_item_that_matches_is_not_cut() -> None:
    outline = next(b for b in passages(HOME_SERVER) if b.kind == "list")
    assert is_long_list(outline)
    assert matching_item(outline, HOME_SERVER, {"jellyfin": 1.0}) is not None
    assert matching_item(outline, HOME_SERVER, {"kubernetes": 1.0}) is None


OPTIONS = "\n".join(
    [
        "## HTTP",
        "",
        "* `--root-path <str>` - Set the ASGI `root_path` for applications submounted below a "
        "given URL path.",
        "* `--proxy-headers` - Enable X-Forwarded-For to populate remote address info. Defaults "
        "to enabled, but only trusting connecting IPs in the `forwarded-allow-ips` setting.",
        "* `--forwarded-allow-ips <list>` - IP addresses to trust with proxy headers. Defaults to "
        "the `$FORWARDED_ALLOW_IPS` environment variable if available, or '127.0.0.1'.",
        "* `--server-header` - Enable the default `Server` header. **Default:** *True*.",
        "* `--date-header` - Enable the default `Date` header. **Default:** *True*.",
        "* `--header <name:value>` - Specify custom default HTTP response headers as a "
        "Name:Value pair. May be used multiple times.",
        "",
    ]
)


def test_the_items_beside_the_best_that_answer_too_are_quoted_with_it() -> None:
    # Uvicorn's settings: the item naming proxy headers says IPs are restricted, the one
    # after it which IPs: one run of both, the unrelated items left out.
    quoted, shown = _quoted("Which IPs are trusted for proxy headers by default?", OPTIONS)
    lines = OPTIONS.split("\n")
    assert quoted == "\n".join(lines[3:5])
    assert "--root-path" not in shown and "--date-header" not in shown


def test_a_numbered_list_is_quoted_whole_its_steps_read_in_order() -> None:
    steps = "\n".join(
        f"{n}. Step {n}: {word} the server and wait until the dashboard shows it as healthy."
        for n, word in enumerate(
            ["stop", "upgrade", "migrate", "restart", "check", "drain", "tag", "announce", "close"],
            1,
        )
    )
    text = "## Upgrading\n\n" + steps + "\n"
    assert len(steps) > LIST_CHARS
    quoted, _ = _quoted("How do I migrate the server when upgrading?", text)
    assert quoted == steps


def test_a_list_in_an_admonition_is_cut_to_the_docs_bytes_of_its_item() -> None:
    items = [
        f"    - `flag-{n}`: an unrelated switch that does something else entirely, see below ({n})"
        for n in range(9)
    ]
    items[4] = "    - `--reload-delay`: seconds to wait between checks for changed files"
    text = "## Reload\n\n!!! note\n    Flags:\n\n" + "\r\n".join(items) + "\r\n"
    assert len(text) > LIST_CHARS
    quoted, shown = _quoted("How long does reload wait between checks?", text)
    assert quoted == items[4]  # indented as the page's source is, no "\r"
    assert "- `--reload-delay`: seconds to wait" in shown and "flag-3" not in shown
