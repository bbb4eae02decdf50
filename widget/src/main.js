/*! kb-qa chat widget: grounded answers whose citations open and highlight the cited passage.
 * Built from widget/src/ by esbuild (widget/README.md); no dependencies, no requests except to
 * the kb-qa API. Model and document text reach the page only as text nodes.
 */
/* How it is included (the tag's attributes: docs/pages/site-generators.md):
 *
 *   MkDocs: plugins: [search, kb-qa]   (injects this file with data-kb-qa-options="{json}")
 *   Any static site:
 *     <script src="/kb-qa/kb-qa.js" defer data-endpoint="https://docs-api.example.com"></script>
 *     (optional: data-title, data-placeholder, data-suggested="a|b", data-shortcut="mod+k",
 *      data-root="/docs/", data-site-url="https://docs.example.com/",
 *      data-labels='{"send": "Ask"}': any of the words of src/lang/en.js)
 *   The words are in the page's <html lang> (src/strings.js), English for other languages.
 *
 * Model and document text only ever reach the page as text nodes: nothing here parses HTML from
 * the API.
 */
import { initChat } from "./chat.js";
import { el } from "./dom.js";
import { flushFeedback, sendFeedback } from "./feedback.js";
import { highlight } from "./highlight.js";
import { citationHref, citationUrl, HL_PARAM, safeHref } from "./links.js";
import { parseBlocks, parseInline, renderMarkdown } from "./markdown.js";
import { renderAll } from "./messages.js";
import { onPage, openCitation } from "./navigate.js";
import { readOptions, widgetScript } from "./options.js";
import { buildPanel, initPanel } from "./panel.js";
import { findPassage, fingerprint, stripMarkdown, tokenize } from "./passage.js";
import { matchesShortcut, parseShortcut } from "./shortcut.js";
import { parseSSE } from "./sse.js";
import { createStore } from "./state.js";
import { initTooltip, preview, sourceTarget } from "./tooltip.js";

/** Where sites' own light/dark switches write the scheme: Material's data-md-color-scheme
 * ("slate" is dark), data-theme (Docusaurus and many others), Bootstrap's data-bs-theme. */
const SCHEME_ATTRIBUTES = ["data-md-color-scheme", "data-theme", "data-bs-theme"];

/** The widget follows the page's scheme: one of SCHEME_ATTRIBUTES on <body> or <html>, or a
 * "dark" class on either (Tailwind, VitePress); elsewhere its CSS follows prefers-color-scheme. */
function syncScheme(host) {
  const places = [document.body, document.documentElement];
  for (const name of SCHEME_ATTRIBUTES) {
    const place = places.find((p) => p.hasAttribute(name));
    if (!place) continue;
    const scheme = place.getAttribute(name);
    host.setAttribute("data-scheme", scheme === "slate" || /dark/i.test(scheme) ? "dark" : "light");
    return;
  }
  if (places.some((p) => p.classList.contains("dark"))) host.setAttribute("data-scheme", "dark");
  else host.removeAttribute("data-scheme");
}

/** The widget: one object the modules share (options, state, elements, and their behaviours). */
function create() {
  const options = readOptions(widgetScript());
  const apple = /Mac|iPhone|iPad|iPod/.test((navigator.userAgentData && navigator.userAgentData.platform) || navigator.platform || "");
  const shortcut = parseShortcut(options.shortcut, apple);
  const store = createStore("kb-qa:v1:" + (options.endpoint || location.origin), options.t("interrupted"));
  const w = {
    options: options,
    links: { root: options.root, siteUrl: options.siteUrl },
    shortcut: shortcut,
    state: store.state,
    save: store.save,
    ui: buildPanel(options, shortcut, apple),
    timing: null,
  };
  w.renderAll = () => renderAll(w);
  w.sendFeedback = (m, reason) => sendFeedback(w, m, reason);
  w.flushFeedback = () => flushFeedback(w);
  initTooltip(w);
  initChat(w);
  initPanel(w);
  w.ui.log.addEventListener("click", (ev) => {
    const t = sourceTarget(ev);
    if (!t || !t._href || ev.button !== 0 || ev.metaKey || ev.ctrlKey || ev.shiftKey || ev.altKey) return;
    ev.preventDefault();
    w.hideTip();
    // Where the reader was: a phone's panel closes over the passage, and a page swapped in
    // resets the log's scroll; opening it again comes back here (panel.js).
    w.state.place = { count: w.state.messages.length, top: w.ui.log.scrollTop };
    openCitation(w, t._href);
  });
  return w;
}

/** The reader's default text size over 16 px (a browser set to larger text: 2 at 32 px),
 * from 0.75 to 3: the widget's text follows it, as the page's does. */
function textScale() {
  const probe = el("span", { "aria-hidden": "true" });
  probe.style.fontSize = "medium"; // the reader's setting, whatever the page's own sizes
  probe.style.position = "absolute";
  document.body.appendChild(probe);
  const px = parseFloat(getComputedStyle(probe).fontSize) || 16;
  probe.remove();
  return Math.min(3, Math.max(0.75, px / 16));
}

function mount(w) {
  const host = w.ui.host;
  if (!document.body.contains(host)) document.body.appendChild(host);
  w.ui.frame.style.setProperty("--kbq-text", String(textScale()));
  // Light-DOM styles (the passage highlight, docking) for drop-in use without the <link> tag.
  if (!document.querySelector("link[data-kb-qa]")) document.head.appendChild(el("link", { rel: "stylesheet", href: w.options.css, "data-kb-qa": "" }));
  syncScheme(host);
  const watched = { attributes: true, attributeFilter: [...SCHEME_ATTRIBUTES, "class"] };
  const observer = new MutationObserver(() => syncScheme(host));
  observer.observe(document.body, watched);
  observer.observe(document.documentElement, watched);
  if (w.state.open) w.setOpen(true, false);
  else w.renderAll();
  w.autosize();
  window.addEventListener("pagehide", () => {
    w.left = 1; // an answer the browser cancels now was interrupted (state.js), not cut off
    w.flushFeedback();
    w.save(true);
  });
  let shown = location.pathname; // the page in the document
  const material = window.document$ && typeof window.document$.subscribe === "function";
  if (material) {
    // Material re-renders the page on instant navigation; the body (and our host) stays.
    window.document$.subscribe(() => {
      if (!document.body.contains(host)) document.body.appendChild(host);
      shown = location.pathname;
      onPage(w);
    });
  } else onPage(w);
  // Back and Forward between this page's citations (navigate.js pushes them); Material swaps
  // another page in itself.
  window.addEventListener("popstate", () => {
    if (!material || location.pathname === shown) onPage(w);
  });
}

// Loaded once, even if a page includes the script twice.
if (typeof window !== "undefined" && !(window.KbQa && window.KbQa.mounted)) {
  const w = create();
  // _test: the pure parts, for tests and benchmarks in a real browser.
  window.KbQa = {
    mounted: true,
    version: "0.2.0",
    open: () => w.setOpen(true),
    close: () => w.setOpen(false),
    ask: (q) => {
      w.setOpen(true);
      w.ui.input.value = q;
      w.submit();
    },
    highlight: highlight,
    state: w.state,
    get timing() {
      return w.timing;
    },
    options: w.options,
    _test: { HL_PARAM, tokenize, stripMarkdown, fingerprint, findPassage, citationUrl, citationHref, safeHref, parseSSE, parseBlocks, parseInline, renderMarkdown, parseShortcut, matchesShortcut, preview },
  };
  if (document.body) mount(w);
  else document.addEventListener("DOMContentLoaded", () => mount(w));
}
