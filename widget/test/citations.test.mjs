// Citation links, the SSE reader and the keyboard shortcut.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createRequire } from "node:module";

const kbqa = createRequire(import.meta.url)("../kb-qa.js");

const citation = {
  number: 1,
  url: "guides/retries/#default-retry-policy",
  path: "docs/guides/retries.md",
  anchor: "default-retry-policy",
  heading_path: ["Retries and backoff", "Default retry policy"],
  text: "## Default retry policy\n\nOut of the box, every job gets the following policy.",
};

test("relative citation URLs resolve against the site root, keeping #anchor", () => {
  const opts = { root: "https://docs.example.com/v2/" };
  const href = kbqa.citationHref(citation, opts);
  const url = new URL(href);
  assert.equal(url.origin + url.pathname, "https://docs.example.com/v2/guides/retries/");
  assert.equal(url.hash, "#default-retry-policy");
  assert.equal(url.searchParams.get(kbqa.HL_PARAM), "default retry policy out of the box every job gets the following policy");
});

test("absolute URLs under site_url map onto the site the widget runs on", () => {
  const opts = { root: "http://127.0.0.1:8000/", siteUrl: "https://lumen.example.com/" };
  const absolute = { ...citation, url: "https://lumen.example.com/guides/retries/#default-retry-policy" };
  assert.equal(kbqa.citationUrl(absolute, opts).href, "http://127.0.0.1:8000/guides/retries/#default-retry-policy");
  // Another site's URL is used as it is; other schemes never.
  const other = { ...citation, url: "https://elsewhere.example.org/page/#x" };
  assert.equal(kbqa.citationUrl(other, opts).href, "https://elsewhere.example.org/page/#x");
  assert.equal(kbqa.citationUrl({ ...citation, url: "javascript:alert(1)" }, opts), null);
  // A missing hash is filled from the anchor; a leading slash stays under the root.
  const bare = { ...citation, url: "/guides/retries/" };
  assert.equal(kbqa.citationUrl(bare, { root: "https://x.org/docs/" }).href, "https://x.org/docs/guides/retries/#default-retry-policy");
});

test("SSE frames split across reads are reassembled", () => {
  const stream =
    'event: status\ndata: {"stage": "searching", "message": "Searching your sources…"}\n\n' +
    'event: delta\ndata: {"text": "Retries [1]"}\n\n: keep-alive comment\n\n' +
    'event: done\r\ndata: {"text": "Retries [1]"}\r\n\r\n';
  for (let cut = 0; cut <= stream.length; cut++) {
    const first = kbqa.parseSSE(stream.slice(0, cut));
    const second = kbqa.parseSSE(first.rest + stream.slice(cut));
    const events = [...first.events, ...second.events];
    assert.deepEqual(
      events.map((e) => e.event),
      ["status", "delta", "done"],
      `cut at ${cut}`
    );
    assert.equal(JSON.parse(events[1].data).text, "Retries [1]");
    assert.equal(second.rest, "");
  }
});

test("multi-line data fields join with newlines", () => {
  const { events } = kbqa.parseSSE("event: delta\ndata: a\ndata: b\n\n");
  assert.deepEqual(events, [{ event: "delta", data: "a\nb" }]);
});

test("shortcuts: mod is Cmd on Apple systems and Ctrl elsewhere", () => {
  const key = (over) => ({ key: "k", code: "KeyK", ctrlKey: false, metaKey: false, altKey: false, shiftKey: false, ...over });
  const pc = kbqa.parseShortcut("mod+k", false);
  const mac = kbqa.parseShortcut("mod+k", true);
  assert.ok(kbqa.matchesShortcut(key({ ctrlKey: true }), pc));
  assert.ok(!kbqa.matchesShortcut(key({ metaKey: true }), pc));
  assert.ok(kbqa.matchesShortcut(key({ metaKey: true }), mac));
  assert.ok(!kbqa.matchesShortcut(key({}), pc));
  assert.ok(!kbqa.matchesShortcut(key({ ctrlKey: true, shiftKey: true }), pc));
  const slash = kbqa.parseShortcut("/", false);
  assert.ok(kbqa.matchesShortcut(key({ key: "/", code: "Slash" }), slash));
  const alt = kbqa.parseShortcut("ctrl+alt+j", false);
  assert.ok(kbqa.matchesShortcut(key({ key: "∆", code: "KeyJ", ctrlKey: true, altKey: true }), alt));
});
