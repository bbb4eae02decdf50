// Citation links: the page URL, #anchor and passage fingerprint a citation opens.
import { test } from "node:test";
import assert from "node:assert/strict";
import { citationHref, citationUrl, HL_PARAM } from "../src/links.js";

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
  const href = citationHref(citation, opts);
  const url = new URL(href);
  assert.equal(url.origin + url.pathname, "https://docs.example.com/v2/guides/retries/");
  assert.equal(url.hash, "#default-retry-policy");
  assert.equal(url.searchParams.get(HL_PARAM), "default retry policy out of the box every job gets the following policy.");
});

test("absolute URLs under site_url map onto the site the widget runs on", () => {
  const opts = { root: "http://127.0.0.1:8000/", siteUrl: "https://lumen.example.com/" };
  const absolute = { ...citation, url: "https://lumen.example.com/guides/retries/#default-retry-policy" };
  assert.equal(citationUrl(absolute, opts).href, "http://127.0.0.1:8000/guides/retries/#default-retry-policy");
  // Another site's URL is used as it is; other schemes never.
  const other = { ...citation, url: "https://elsewhere.example.org/page/#x" };
  assert.equal(citationUrl(other, opts).href, "https://elsewhere.example.org/page/#x");
  assert.equal(citationUrl({ ...citation, url: "javascript:alert(1)" }, opts), null);
  // A missing hash is filled from the anchor; a leading slash stays under the root.
  const bare = { ...citation, url: "/guides/retries/" };
  assert.equal(citationUrl(bare, { root: "https://x.org/docs/" }).href, "https://x.org/docs/guides/retries/#default-retry-policy");
});
