"""Edits to a YAML file that change only the lines they are about.

ruamel.yaml's round-trip parser says where each entry is (line and column); the edits insert
or replace lines there, so nothing else is re-serialised: ruamel.yaml's own dump re-indents
files that mix list styles (the mkdocs corpus's ``mkdocs.yml`` does), losing the author's
formatting.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from kb_qa.errors import ConfigError


def load(text: str, where: str) -> Any:
    """The top-level mapping of ``text`` (a ruamel CommentedMap, which knows positions)."""
    from ruamel.yaml import YAML
    from ruamel.yaml.comments import CommentedMap
    from ruamel.yaml.error import YAMLError

    try:
        data = YAML(typ="rt").load(text)
    except YAMLError as exc:
        raise ConfigError(f"{where} is not valid YAML: {exc}. Fix it and run again.") from exc
    if data is None:
        return CommentedMap()
    if not isinstance(data, dict):
        raise ConfigError(f"{where}: expected a mapping of settings at the top level.")
    return data


def ensure_item(
    text: str, where: str, key: str, item: str, name_of: Callable[[Any], str] = str
) -> str:
    """``text`` with ``item`` in the top-level list ``key`` (added first, or a new list)."""
    data = load(text, where)
    if key not in data:
        return _append(text, f"{key}:\n  - {item}\n")
    entries = data[key]
    lines = text.splitlines(keepends=True)
    if entries is None:  # `extra_css:` with nothing after it but maybe a comment
        line, col = data.lc.key(key)
        colon = lines[line].index(":", col) + 1
        rest = lines[line][colon:].rstrip("\n").strip()
        comment = f"  {rest}" if rest.startswith("#") else ""
        lines[line] = lines[line][:colon] + f" [{item}]{comment}\n"
        return "".join(lines)
    if not isinstance(entries, list):
        raise ConfigError(f"{where}: {key} must be a list. Fix it and run again.")
    if any(name_of(e) == item for e in entries):
        return text
    # ruamel's CommentedSeq and CommentedMap (isinstance narrowed them to list and dict)
    # carry .fa and .lc, which its stubs do not give list and dict.
    if entries.fa.flow_style() or not entries:  # type: ignore[attr-defined]
        line, col = data.lc.value(key)
        start = lines[line].index("[", col)
        gap = ", " if entries else ""
        lines[line] = lines[line][: start + 1] + item + gap + lines[line][start + 1 :]
        return "".join(lines)
    line, col = entries.lc.item(0)  # type: ignore[attr-defined]  # a CommentedSeq
    dash = lines[line].rindex("-", 0, col)
    lines.insert(line, " " * dash + "- " + item + "\n")
    return "".join(lines)


def ensure_mapping(text: str, where: str, parent: str, key: str, wanted: dict[str, Any]) -> str:
    """``text`` with ``parent.key`` equal to ``wanted``. That block belongs to the caller:
    when it differs it is written again whole; the rest of ``parent`` is left alone."""
    data = load(text, where)
    lines = text.splitlines(keepends=True)
    value = data.get(parent)
    if parent not in data or value is None or (isinstance(value, dict) and not value):
        block = f"{parent}:\n" + block_of(key, wanted, 2)
        if parent not in data:
            return _append(text, block)
        line, _ = data.lc.key(parent)  # `extra:` or `extra: {}`
        lines[line : line + 1] = [block]
        return "".join(lines)
    if not isinstance(value, dict) or value.fa.flow_style():  # type: ignore[attr-defined]  # ruamel
        raise ConfigError(
            f"{where}: {parent} is not a block mapping, so kb-qa cannot add its settings "
            f"without rewriting it. Add these lines under {parent}: by hand:\n"
            + block_of(key, wanted, 2)
        )
    current = value.get(key)
    if current is not None and _plain(current) == wanted:
        return text
    if current is None:
        line, col = value.lc.key(next(iter(value)))  # type: ignore[attr-defined]  # ruamel
        lines.insert(line, block_of(key, wanted, col))
        return "".join(lines)
    # The block runs to the next line indented as much as its key or less.
    line, col = value.lc.key(key)  # type: ignore[attr-defined]  # a CommentedMap
    end = line + 1
    while end < len(lines):
        indent = len(lines[end]) - len(lines[end].lstrip())
        if lines[end].strip() and indent <= col:
            break
        end += 1
    while end > line + 1 and not lines[end - 1].strip():
        end -= 1
    lines[line:end] = [block_of(key, wanted, col)]
    return "".join(lines)


def block_of(key: str, values: dict[str, Any], indent: int) -> str:
    """``key:`` and its mapping of strings and lists of strings, as block YAML."""
    pad = " " * indent
    out = [f"{pad}{key}:\n"]
    for name, value in values.items():
        if isinstance(value, list) and value:
            out.append(f"{pad}  {name}:\n")
            out += [f"{pad}    - {json.dumps(v, ensure_ascii=False)}\n" for v in value]
        else:
            out.append(f"{pad}  {name}: {json.dumps(value, ensure_ascii=False)}\n")
    return "".join(out)


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def _append(text: str, block: str) -> str:
    if text and not text.endswith("\n"):
        text += "\n"
    return text + ("\n" if text.strip() else "") + block
