"""``zensical.toml`` edited in place with tomlkit, and checked by reading the result back.

tomlkit keeps comments, order and formatting, but where it puts a new table depends on how
the file spells the tables around it. ``extra.generator = false`` under ``[project]`` (a
dotted key) made it insert ``[extra.kb_qa]`` there, a table header that took every setting
below it (``nav``, ``extra_css``) out of ``[project]``. So the edit is read back and compared
with what it should say; a dotted ``extra`` gets ``extra.kb_qa = {...}`` on one line instead,
and an edit that still reads differently is refused before anything is written.
"""

from __future__ import annotations

import copy
from typing import Any

from kb_qa.errors import ConfigError
from kb_qa.wiring.options import CSS_PATH, EXTRA_KEY, LOADER_PATH, WidgetOptions
from kb_qa.wiring.tags import entry_path

ENTRIES = (("extra_css", CSS_PATH), ("extra_javascript", LOADER_PATH))


def parse(text: str, where: str) -> Any:
    """The tomlkit document of ``text``."""
    import tomlkit
    import tomlkit.exceptions

    try:
        return tomlkit.parse(text)
    except tomlkit.exceptions.TOMLKitError as exc:
        raise ConfigError(f"{where} is not valid TOML: {exc}. Fix it and run again.") from exc


def project_of(document: Any) -> Any:
    """Zensical's settings: the ``[project]`` table, or the whole file without one."""
    return document["project"] if "project" in document else document


def current_extra(document: Any, where: str) -> dict[str, Any] | None:
    """``extra`` as plain values (None when absent)."""
    extra = project_of(document).get("extra")
    if extra is not None and not isinstance(extra, dict):
        raise ConfigError(f"{where}: extra must be a table. Fix it and run again.")
    return extra.unwrap() if extra is not None else None  # type: ignore[attr-defined]  # a tomlkit Table


def wired(before: str, where: str, wanted: WidgetOptions) -> str:
    """``before`` with the widget's entries and ``extra.kb_qa`` (``before`` when it has them)."""
    import tomlkit

    expected = _expected(parse(before, where).unwrap(), wanted, where)
    for one_line in (False, True):
        document = parse(before, where)
        _edit(document, wanted, one_line)
        after = tomlkit.dumps(document)
        if after != before and not before.endswith("\n\n") and after.endswith("\n\n"):
            after = after[:-1]  # the blank line kept after kb-qa's table ends the file
        if parse(after, where).unwrap() == expected:
            return after
    settings = "\n".join(f"{k} = {_toml(v)}" for k, v in wanted.as_config().items())
    raise ConfigError(
        f"{where}: kb-qa cannot add its settings without moving others (the tables are "
        f"spelled in a way tomlkit cannot extend in place). Add "
        f'"{CSS_PATH}" to extra_css, "{LOADER_PATH}" to extra_javascript and, under '
        f"[project.extra.kb_qa]:\n{settings}\nby hand, then run `kb-qa init --check`."
    )


def _expected(data: dict[str, Any], wanted: WidgetOptions, where: str) -> dict[str, Any]:
    data = copy.deepcopy(data)
    project = data["project"] if "project" in data else data
    for key, item in ENTRIES:
        entries = project.setdefault(key, [])
        if not isinstance(entries, list):
            raise ConfigError(f"{where}: {key} must be a list. Fix it and run again.")
        if not any(entry_path(e) == item for e in entries):
            entries.append(item)
    extra = project.setdefault("extra", {})
    if not isinstance(extra, dict):
        raise ConfigError(f"{where}: extra must be a table. Fix it and run again.")
    extra[EXTRA_KEY] = wanted.as_config()
    return data


def _edit(document: Any, wanted: WidgetOptions, one_line: bool) -> None:
    import tomlkit
    from tomlkit.items import InlineTable

    project = project_of(document)
    for key, item in ENTRIES:
        entries = project.get(key)
        if entries is None:
            entries = tomlkit.array()
            project[key] = entries
        if not any(entry_path(e) == item for e in entries):
            entries.append(item)
    extra = project.get("extra")
    if extra is None:
        extra = tomlkit.table(is_super_table=True)
        project["extra"] = extra
    current = extra.get(EXTRA_KEY)
    if current is not None and _unwrapped(current) == wanted.as_config():
        return
    # Inside an inline table (`extra = {...}`) only an inline table may stand; beside dotted
    # keys (`extra.generator = false`), `extra.kb_qa = {...}` keeps the lines after it.
    inline = one_line or isinstance(extra, InlineTable)
    table: Any = tomlkit.inline_table() if inline else tomlkit.table()
    for key, value in wanted.as_config().items():
        table[key] = value
    if not inline:
        table.add(tomlkit.nl())  # a blank line before the table that follows it
    extra[EXTRA_KEY] = table


def _unwrapped(item: Any) -> Any:
    return item.unwrap() if hasattr(item, "unwrap") else item


def _toml(value: Any) -> str:
    import tomlkit

    return tomlkit.item(value).as_string()
