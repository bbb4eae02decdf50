"""One settings object, one name per setting everywhere.

``chunk_chars`` is ``KBQA_CHUNK_CHARS`` in the environment, ``--chunk-chars`` on the
command line and ``chunk_chars=`` to ``KnowledgeBase`` (the MkDocs plugin takes its own
few options, ``KbQaConfig``; the rest come from the environment). Settings are passed
down as an argument, never read from a global. A new setting is a field here (checked by
``_coerce``; one that must not be 0 is named in ``_MORE_THAN_ZERO``) and a row of
docs/pages/configuration.md, which tests/test_docs_site.py checks.
"""

from __future__ import annotations

import dataclasses
import ipaddress
import logging
import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from kb_qa.errors import ConfigError

log = logging.getLogger(__name__)

ENV_PREFIX = "KBQA_"
# The values a setting may take, where there are only a few (checked as it is set, so a
# server never starts with one that fails every request)
LINK_STYLES = ("site", "file", "vscode", "obsidian")
GENERATORS = ("mkdocs", "zensical")
FUSIONS = ("zscore", "rrf")
_CHOICES = {"link_style": ("", *LINK_STYLES), "generator": ("", *GENERATORS), "fusion": FUSIONS}
# Variables of kb-qa's benchmarks and tests, not settings (a misspelt setting is warned about,
# once a process)
_NOT_SETTINGS = {"KBQA_CORPORA", "KBQA_REAL_CORPORA", "KBQA_BENCH_DIR", "KBQA_PARITY_PAGES"}


@dataclass(frozen=True)
class Settings:
    """Everything configurable about one knowledge base."""

    vault: Path = Path(".")
    # Where the embedded Chroma database and the manifest live; default <vault>/.kb-qa
    index_dir: Path | None = None
    # Use a Chroma server instead of the embedded database, e.g. http://127.0.0.1:8000
    chroma_url: str = ""
    # Name of the index (its Chroma collection); default: site_name from mkdocs.yml, else
    # the vault folder's name, slugged. Replicas name it to serve it without the vault.
    workspace: str = ""
    # Seconds between a read-only replica's checks for a new generation of the workspace
    replica_poll: float = 1.0
    # "auto", "minilm", "e5-multilingual", "hash", or any litellm embedding model
    embed_model: str = "auto"
    # API base for a litellm embedding model served locally (e.g. Ollama)
    embed_api_base: str = ""
    # 16 embeds as fast as 32 on two cores with about half the peak memory
    embed_batch: int = 16
    chunk_chars: int = 1500
    max_file_bytes: int = 5_000_000
    # CPU seconds one file's Markdown may take to parse or render (0: no limit). Some shapes
    # (thousands of unclosed '[') make the parsers slow with the square of their size; a
    # page over the limit is indexed from its headings alone, else reported as failed.
    parse_timeout: float = 5.0
    ignore: tuple[str, ...] = ()
    # Citation links: "site" (URL#anchor; the default with mkdocs.yml), "file" (path:line),
    # "vscode" (vscode://file/...), "obsidian" (obsidian://open?...); empty = automatic
    link_style: str = ""
    # The version of a site versioned with mike that this checkout publishes ("1.0", its
    # folder): links made outside the site (ask, search, MCP, insights, the API's url) open
    # under it. Empty: the version the site names (canonical_version, extra.version.default),
    # where a 1.0 checkout's server sent readers to /latest/, whose page said something else.
    # On a Docusaurus site with versions.json: the version read ("1.0": versioned_docs/version-1.0)
    site_version: str = ""
    # Whose heading-id rules apply: "mkdocs", "zensical", or empty to decide by the config
    # file (zensical.toml: Zensical's; mkdocs.yml: MkDocs'). Zensical building a mkdocs.yml
    # that sets no markdown_extensions renders other ids than MkDocs: set "zensical" then.
    generator: str = ""
    # The site's config file, relative to the vault, when it has another name than
    # mkdocs.yml, properdocs.yml or zensical.toml (what `mkdocs build -f site.yml` builds
    # from): a folder holding only site.yml was read as notes, citing the server's file paths
    config_file: str = ""
    # Index an MkDocs site as it renders: run its hooks and installed plugins, expand
    # includes (kb_qa.ingest.render), read mkdocs.yml with MkDocs' loader. Off: index the Markdown
    # files as written and run nothing the site names (kb_qa.ingest.safe_config), for a vault whose
    # code you do not trust: rendering runs its hooks and tags, as `mkdocs build` does
    render: bool = True
    # Plugins not to run when rendering, besides those that only shape the built output
    skip_plugins: tuple[str, ...] = ()
    top_k: int = 10
    # Candidates taken from each of the vector and keyword indexes before fusion
    candidates: int = 200
    rrf_k: int = 60
    # How the vector and keyword rankings are combined: "zscore" or "rrf" (retrieval.fuse)
    fusion: str = "zscore"
    # Shares of the z-score fusion: 1.5 : 1 with the link evidence below (real questions R@5
    # 0.595 -> 0.628, R@20 0.835 -> 0.843 against 1 : 1; bench/tune.py)
    keyword_weight: float = 1.0
    vector_weight: float = 1.5
    # Changelogs and release notes mention everything: their scores are multiplied by
    # history_weight. Found by rule (name, title, version headings) plus these globs.
    # 0.5 and page_weight 1: real questions R@5 0.506 -> 0.540 (bench/quality.py)
    history_weight: float = 0.5
    history_pages: tuple[str, ...] = ()
    # A page ranking (by its best sections' scores) fused into every hit (0 switches it off)
    page_weight: float = 1.0
    # Sections the docs link to from other sections (kb_qa.ingest.linkgraph) gain
    # link_weight * log(1 + links); the lines around those links are a third keyword list,
    # fused with link_text_weight (z-score fusion, reader rankings; 0 switches either off)
    link_weight: float = 0.2
    link_text_weight: float = 0.1
    # Answering (used by the API and `kb-qa ask`)
    model: str = ""
    api_base: str = ""
    llm_timeout: float = 60.0
    token_budget: int = 24_000
    # Characters of a model's reply streamed to the reader; the rest is not read (0: no cap)
    max_reply_chars: int = 20_000
    # One extra LLM call rewrites the question into a few queries whose results are fused
    rewrite_queries: bool = False
    rewrite_count: int = 3
    rewrite_timeout: float = 10.0
    # Hits retrieved for an answer before the token budget trims them (generous on purpose)
    answer_candidates: int = 200
    # HTTP API (`kb-qa serve`)
    host: str = "127.0.0.1"
    port: int = 8321
    # Origins allowed to call the API from a browser, comma-separated; "*" allows any
    cors_origins: tuple[str, ...] = ()
    # When set, every /api request needs "Authorization: Bearer <api_token>"
    api_token: str = dataclasses.field(default="", repr=False)  # a secret: kept out of logs
    # Requests per minute per client address, with bursts up to rate_burst (0 switches it off)
    rate_limit: float = 60.0
    rate_burst: int = 20
    max_question_chars: int = 2_000
    max_history_messages: int = 20
    max_history_chars: int = 20_000
    max_body_bytes: int = 65_536
    # Record every question the API answers (kb_qa.owners.questionlog), for `kb-qa insights`; rows
    # older than question_log_days are deleted, and all but the newest question_log_max (0
    # keeps them). No address or agent is kept.
    question_log: bool = True
    question_log_days: int = 90
    question_log_max: int = 100_000
    # Readers may rate answers (POST /api/feedback: the rating, their question, the start of
    # the answer); off: answers carry no answer id (no thumbs in the widget) and ratings are
    # refused. Ratings older than feedback_days are deleted, and all but the newest
    # feedback_max (0 keeps them)
    ratings: bool = True
    feedback_days: int = 365
    feedback_max: int = 10_000
    # Signs the answer ids a rating must carry (kb_qa.owners.answer_ids); empty: a secret
    # made in <index folder>/answer-secret. Give replicas behind one address the same one
    feedback_secret: str = dataclasses.field(default="", repr=False)  # kept out of logs
    # When set, GET /insights serves the report to "Authorization: Bearer <admin_token>", and
    # to a browser signed in at /insights/sign-in with it (kb_qa.serve.admin)
    admin_token: str = dataclasses.field(default="", repr=False)  # a secret: kept out of logs
    # How long a browser stays signed in to /insights (hours); signing out ends it at once
    admin_session_hours: float = 8.0
    # Proxies whose X-Forwarded-For / X-Forwarded-Proto are believed (comma-separated IPs or
    # networks, or "*"); empty trusts none, so a client cannot pick its own address to dodge
    # rate_limit
    forwarded_allow_ips: tuple[str, ...] = ()
    # Host names requests may carry in their Host header besides loopback names (127.0.0.1,
    # localhost, [::1]) and IP addresses, any port; "*.example.com" matches subdomains, "*"
    # any name. Other names get 400: a DNS-rebinding page cannot reach a local server
    allowed_hosts: tuple[str, ...] = ()
    # Slow and oversized clients: request line + headers at most max_header_bytes and
    # max_headers lines (431 beyond); headers must arrive within header_timeout seconds of
    # the connection (or of the request's first byte), a body within body_timeout of its
    # headers, else the connection is closed; at most max_connections open at once (503)
    max_header_bytes: int = 16_384
    max_headers: int = 100
    header_timeout: float = 10.0
    body_timeout: float = 30.0
    max_connections: int = 500
    # On SIGTERM or Ctrl-C, answers still streaming get this many seconds to end, then they
    # are cut and the server stops (0 waits for every one, however long its model takes)
    shutdown_timeout: float = 5.0
    # uvicorn's access log (one INFO line per request with the client's address and port and
    # the request line, query string included); off, the log holds no address or question
    access_log: bool = False

    def __post_init__(self) -> None:
        # Checked however made: Settings(top_k=-1) in code was taken as it was, and failed
        # deep inside (a setting of the wrong type with an AttributeError).
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if value is None:  # Settings(model=os.environ.get("MODEL")): as not given
                object.__setattr__(self, f.name, f.default)
            elif value is not f.default and value != f.default:
                object.__setattr__(self, f.name, _coerce(f.default, f.name, value))

    @property
    def index_path(self) -> Path:
        """Folder of the embedded index and manifest."""
        return self.index_dir if self.index_dir is not None else self.vault / ".kb-qa"

    @property
    def answer_mode(self) -> str:
        """How answers are written, as a start-up line says it."""
        return f"model {self.model}" if self.model else "extractive answers"

    def replace(self, **changes: Any) -> Settings:
        """A copy with some settings changed (``None`` values are ignored)."""
        clean = {k: v for k, v in changes.items() if v is not None}
        unknown = set(clean) - {f.name for f in dataclasses.fields(self)}
        if unknown:
            raise ConfigError(f"Unknown setting(s): {', '.join(sorted(unknown))}.")
        return dataclasses.replace(self, **clean)  # checked by __post_init__

    @classmethod
    def from_env(cls, vault: str | Path | None = None, **overrides: Any) -> Settings:
        """Settings from ``KBQA_*`` environment variables, then explicit overrides."""
        base = cls()
        values: dict[str, Any] = {}
        fields = {f.name: f for f in dataclasses.fields(cls)}
        for f in fields.values():
            raw = os.environ.get(ENV_PREFIX + f.name.upper())
            # An empty value leaves the default, but switches a flag off, as documented
            if raw is not None and (raw != "" or isinstance(f.default, bool)):
                values[f.name] = raw
        for name in os.environ:
            unknown = name.startswith(ENV_PREFIX) and name[len(ENV_PREFIX) :].lower() not in fields
            if unknown and name not in _NOT_SETTINGS:
                _NOT_SETTINGS.add(name)
                log.warning("%s is not a kb-qa setting and is ignored: is it misspelt?", name)
        if vault is not None:
            values["vault"] = vault
        values.update({k: v for k, v in overrides.items() if v is not None})
        settings = base.replace(**values)
        return settings.replace(vault=Path(settings.vault).expanduser().resolve())


MAX_TOP_K = 100  # the most results a search returns (top_k, and k of every request)
# Waits, periods and sizes that 0 would break (every answer timed out, a replica polling
# without pause, a chunk per block, a prompt of no excerpt, every question too long);
# elsewhere 0 means off: no rate limit, no parse, header or body time limit.
_MORE_THAN_ZERO = frozenset(
    """replica_poll llm_timeout rewrite_timeout admin_session_hours embed_batch chunk_chars
    token_budget candidates answer_candidates max_question_chars max_body_bytes
    max_header_bytes""".split()
)
_TRUE = ("1", "true", "yes", "y", "on", "enabled")
_FALSE = ("0", "false", "no", "n", "off", "disabled", "")


def _origin(given: str) -> str:
    """A CORS origin as browsers send it, ``scheme://host[:port]``: "https://docs.example.com/"
    is that origin (a browser's never ends in "/", and the slash silently refused every
    request); one with a path names no origin."""
    origin = given.strip().rstrip("/")
    url = urlparse(origin)
    if origin != "*" and (url.scheme not in ("http", "https") or not url.netloc or url.path):
        raise ValueError(
            f"{given!r} is not an origin: write scheme://host[:port] without a path, such as "
            "https://docs.example.com"
        )
    return origin


def _proxy(given: str) -> str:
    """A proxy whose X-Forwarded-For is believed: an IP address, a network or "*". A host
    name ("nginx-proxy", "localhost") was taken and never matched a connection's address,
    so every reader shared the proxy's rate-limit bucket."""
    if given == "*":
        return given
    try:
        ipaddress.ip_network(given, strict=False)
    except ValueError:
        raise ValueError(
            f"{given!r} is not an IP address or network: write the proxy's address "
            "(10.0.0.5), a network (10.0.0.0/8) or *; a host name is never matched (look its "
            "address up, e.g. getent hosts NAME)"
        ) from None
    return given


def _host(given: str) -> str:
    """A host name requests may carry: "docs.example.com", "*.example.com" or "*"; a URL
    was taken and then matched no request."""
    if "/" in given or any(c.isspace() for c in given):
        name = urlparse(given).hostname if "://" in given else None
        example = f" ({name})" if name else ", such as docs.example.com"
        raise ValueError(f"{given!r} is not a host name: write the name alone{example}")
    return given


def _coerce(current: object, name: str, value: Any) -> Any:
    """Turn strings from the environment or CLI into the type of the field (``current``, its
    default, tells which), with a clear error."""
    env = ENV_PREFIX + name.upper()
    try:
        if name in ("vault", "index_dir"):
            # Absolute from the start: a process that changes its directory later (a host
            # application) must not index, or make .kb-qa, somewhere else.
            if value in (None, ""):
                return None
            given = Path(value).expanduser()
            return given.resolve() if name == "vault" else given.absolute()  # as from_env
        if isinstance(current, bool):
            if isinstance(value, bool):
                return value
            said = str(value).strip().lower()
            if said not in _TRUE + _FALSE:  # "treu" must not quietly switch a flag off
                raise ValueError("must be true or false (1/0, yes/no, on/off, enabled/disabled)")
            return said in _TRUE
        if isinstance(current, int):
            try:
                result = int(value)
            except (TypeError, ValueError):  # not "invalid literal for int() with base 10"
                raise ValueError("must be a whole number, such as 10") from None
            if result < 0:
                raise ValueError("must not be negative")
            if result == 0 and name in _MORE_THAN_ZERO:
                raise ValueError("must be more than 0")
            if name == "top_k" and not 1 <= result <= MAX_TOP_K:
                raise ValueError(f"must be between 1 and {MAX_TOP_K}")
            if name == "port" and result > 65535:
                raise ValueError("must be a port number, 0 to 65535")
            return result
        if isinstance(current, float):
            positive = name in _MORE_THAN_ZERO
            wrong = f"must be a number, {'more than 0' if positive else '0 or more'}"
            try:
                number = float(value)
            except (TypeError, ValueError):
                raise ValueError(wrong) from None
            if not math.isfinite(number) or number < 0 or (number == 0 and positive):
                raise ValueError(wrong)
            return number
        if isinstance(current, tuple):
            items = (
                [p.strip() for p in value.split(",") if p.strip()]
                if isinstance(value, str)
                else value
            )
            if name == "cors_origins":
                return tuple(_origin(str(o)) for o in items)
            if name == "forwarded_allow_ips":
                return tuple(_proxy(str(a)) for a in items)
            if name == "allowed_hosts":
                return tuple(_host(str(h)) for h in items)
            return tuple(items)
        if isinstance(current, str):
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                value = str(value)  # workspace: 2024 in mkdocs.yml
            elif not isinstance(value, str):
                raise ValueError("must be text")
        if name == "chroma_url" and value:
            url = urlparse(str(value))
            if url.scheme not in ("http", "https") or not url.hostname or url.port == 0:
                raise ValueError("use an http(s) URL such as http://127.0.0.1:8000")
            if url.path.strip("/"):  # chromadb's client takes a host and a port, nothing more
                raise ValueError(
                    f"it has a path ({url.path}), which the Chroma client cannot use: give the "
                    "server's own address, such as http://127.0.0.1:8000"
                )
        if name == "api_base" and value:
            url = urlparse(str(value).strip())
            if url.scheme not in ("http", "https") or not url.hostname:
                # litellm reports a URL without its scheme as the server's "HTTP 500"
                raise ValueError(
                    "use the model server's http(s) URL, such as http://127.0.0.1:8080/v1"
                )
        if name == "workspace" and value and not any(c.isascii() and c.isalnum() for c in value):
            # slugged to nothing, the vault folder's name was used in its place, unsaid
            raise ValueError(
                "a workspace is named with ASCII letters and digits ('My Docs' is my-docs): "
                "use a name such as docs"
            )
        if name == "site_version" and "/" in str(value).strip("/ "):
            raise ValueError("name the version's folder alone, such as 1.0 (as `mike deploy`)")
        if name in _CHOICES:
            said = str(value).strip().lower()
            if said not in _CHOICES[name]:
                named = ", ".join(c for c in _CHOICES[name] if c)
                empty = ", or leave it empty" if "" in _CHOICES[name] else ""
                raise ValueError(f"use one of {named}{empty}")
            return said
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"Setting {name} ({env}) has an invalid value {value!r}: {exc}.") from exc
    return value
