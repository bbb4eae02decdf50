/** Citation links: the page URL a citation opens (with #anchor and the passage fingerprint),
 * and which links from model output are safe to render.
 */
import { fingerprint } from "./passage.js";

export const HL_PARAM = "kbqa-hl"; // ?kbqa-hl=<first words>..<last words> next to #anchor: shareable

/** The page URL of a citation: absolute, resolved against the site root; null if unsafe. */
export function citationUrl(citation, opts) {
  // `link` is relative to the site root, so it works wherever the site is served from.
  let raw = String((citation && (citation.link || citation.url)) || "").trim();
  let site = String(opts.siteUrl || "").replace(/\/?$/, "/");
  if (site !== "/") {
    let bare = function (u) {
      return u.replace(/^https?:/i, "");
    };
    if (bare(raw).indexOf(bare(site)) === 0) raw = bare(raw).slice(bare(site).length);
  }
  let url;
  try {
    if (/^[a-z][a-z0-9+.-]*:/i.test(raw)) {
      if (!/^https?:/i.test(raw)) return null;
      url = new URL(raw);
    } else {
      url = new URL(raw.replace(/^\/(?!\/)/, ""), opts.root);
    }
  } catch (e) {
    return null;
  }
  if (!url.hash && citation.anchor) url.hash = citation.anchor;
  return url;
}

/** The link a citation opens: its page and #anchor, plus the passage fingerprint. */
export function citationHref(citation, opts) {
  let url = citationUrl(citation, opts);
  if (!url) return null;
  let fp = fingerprint(citation.text);
  if (fp) url.searchParams.set(HL_PARAM, fp);
  return url.href;
}

/** Only http(s) and relative links survive; anything else (javascript:, data:) is text. */
export function safeHref(href, base) {
  let clean = String(href || "").replace(/[\u0000-\u0020\u007f-\u009f]/g, "");
  if (!clean || /^[a-z][a-z0-9+.-]*:/i.test(clean) && !/^https?:/i.test(clean)) return null;
  if (/^[a-z][a-z0-9+.-]*:/i.test(clean)) return clean;
  // The model sees the sources' Markdown, so relative links point at .md files.
  clean = clean.replace(/(^|\/)index\.md(?=$|#)/, "$1").replace(/\.md(?=$|#)/, "/");
  try {
    return base ? new URL(clean.replace(/^\/(?!\/)/, ""), base).href : clean;
  } catch (e) {
    return null;
  }
}
