"""An API reference documents ``parse`` and ``parse_url``, ``connect`` and ``connect_url``:
a question naming the short one is answered from it (a QA pass's mkdocstrings site led with
``parse_url``'s Raises for "What does parse raise?", ranked first by both searches)."""

from __future__ import annotations

from kb_qa.answer.extractive import quote
from kb_qa.answer.names import named_exactly
from kb_qa.types import Chunk, Hit


def _section(path: tuple[str, ...], text: str) -> Chunk:
    anchor = "--".join(path[1:])
    return Chunk(
        anchor, "docs/api/parse.md", "api/parse/", anchor, path[-1], path, len(path), text,
        0, len(text), 1, 1 + text.count("\n"), "h",
    )  # fmt: skip


def _first(question: str, ranked: list[Chunk]) -> str:
    """The heading path of the section the answer to ``question`` quotes first."""
    result = quote(question, [(n, Hit(c, 0.6 - n / 100)) for n, c in enumerate(ranked, 1)])
    first = min(result.quoted)
    return " › ".join(ranked[first - 1].heading_path)


def test_a_question_naming_a_function_is_answered_from_it_not_a_longer_namesake() -> None:
    raises = "| Type | Description |\n| --- | --- |\n| `ParseError` | If the {} is malformed. |\n"
    page = "tidewire.parse"
    url = _section((page, "parse_url", "Raises"), raises.format("scheme or the port"))
    text = _section((page, "parse", "Raises"), raises.format("message"))
    assert _first("What does parse raise?", [url, text]) == f"{page} › parse › Raises"
    # A question naming the longer one, or every part of it, is answered from it
    assert _first("What does parse_url raise?", [text, url]) == f"{page} › parse_url › Raises"
    assert _first("What does parse raise for a url?", [url, text]) == f"{page} › parse_url › Raises"


def test_a_module_named_after_a_function_is_no_rival() -> None:
    """The page's heading ``tidewire.retry`` holds ``retry`` as the module holding it, not a
    longer name: "How many retry attempts does RetryPolicy make by default?" led with the
    ``retry`` function's parameters, not RetryPolicy's "defaults to 5"."""
    paths = [("tidewire.retry", "retry"), ("tidewire.retry", "RetryPolicy")]
    asked = "How many retry attempts does RetryPolicy make by default?"
    assert named_exactly(asked, paths) == [False, False]


def test_only_a_name_held_inside_a_longer_one_counts() -> None:
    paths = [("API", "connect_url"), ("API", "`connect()`"), ("Guide", "Connecting")]
    assert named_exactly("What are the parameters of connect?", paths) == [False, True, False]
    # No candidate holds it inside a longer name: a heading that is a question's word is
    # no evidence on its own (real docs' "Proxies", "Authentication")
    assert named_exactly("How do I set up proxies?", [("A", "Proxies"), ("B", "Auth")]) == [
        False,
        False,
    ]
    # "my .env file" names both parts of env_file
    assert named_exactly("values in my .env file", [("S", "env"), ("S", "env_file")]) == [
        False,
        False,
    ]


def test_an_enum_s_bases_line_is_not_its_answer() -> None:
    """mkdocstrings opens a class's section with "Bases: `Enum`": "What are the values of
    Backoff?" (no block holds "values") quoted that line alone."""
    text = (
        "### Backoff\n\nBases: `Enum`\n\nHow the delay between attempts grows.\n\n"
        "Attributes:\n\n| Name | Description |\n| --- | --- |\n| `LINEAR` | Grows by `base`. |\n"
    )
    chunk = _section(("tidewire.retry", "Backoff"), text)
    result = quote("What are the values of Backoff?", [(1, Hit(chunk, 0.6))])
    a, b = result.quoted[1]
    assert text[a:b].startswith("How the delay between attempts grows.")
