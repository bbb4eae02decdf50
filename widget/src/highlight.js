/** Highlighting in the page: find the cited passage in its section, wrap it in <mark>, open the
 * collapsed admonition or tab that holds it, and scroll it into view. */
import { ATOM, findPassage } from "./passage.js";

// Material's code annotations (.md-annotation: a marker and, once the code block has been in view,
// the tooltip its list item moved into) are not text of the code the reader sees.
const SKIP = ".headerlink, script, style, noscript, template, button, textarea, select, svg, .md-clipboard, .linenos, .linenodiv, .md-annotation, [data-kb-qa-host]";
const BLOCKS = "p, li, dt, dd, td, th, pre, h1, h2, h3, h4, h5, h6, blockquote, figcaption, summary, caption, div, section, details, article";
// The block a keyboard user is taken to when the panel closes over a highlighted passage.
const FOCUS_BLOCKS = "p, li, dt, dd, td, th, pre, h1, h2, h3, h4, h5, h6, blockquote, figcaption, summary, caption";
// Math as arithmatex writes it (its TeX, or what MathJax or KaTeX typeset in it) and as the
// renderers write it elsewhere: one formula each, read as ATOM to match a passage's math span.
// `kb-qa serve`'s /view pages show math as written in span.math and div.math: its TeX read as
// words (a_1*b_1*c_1: six) outweighed the words around it, and the mark stopped or began there.
const MATH = ".arithmatex, mjx-container, .katex-display, .katex, .math";
const FOCUSABLE = "data-kb-qa-focus"; // on a block given tabindex=-1 here, until the highlight goes
const FADE_MS = 4000;
let highlightTimer = 0;

function contentRoot() {
  return document.querySelector(".md-content__inner, article, main, [role=main]") || document.body;
}

function squash(text) {
  return String(text).normalize("NFKC").toLowerCase().replace(/[^\p{L}\p{N}]+/gu, "");
}

/** On a page whose generator gave its headings other ids than MkDocs' (GitHub's and Hugo's
 * ``options-1``, or none): the heading whose words ``anchor`` spells, the (n+1)th of them for
 * MkDocs' repeat suffix ``_n`` (``options_1``: the second "Options"). */
function headingNamed(anchor) {
  let headings = Array.prototype.filter.call(contentRoot().querySelectorAll("h1, h2, h3, h4, h5, h6"), (h) => !h.closest(SKIP));
  let repeat = /^(.*\D)_(\d+)$/.exec(anchor);
  let tries = repeat ? [[repeat[1], +repeat[2]], [anchor, 0]] : [[anchor, 0]];
  for (let i = 0; i < tries.length; i++) {
    let key = squash(tries[i][0]);
    let same = key ? headings.filter((h) => squash(h.textContent) === key) : [];
    if (same[tries[i][1]]) return same[tries[i][1]];
  }
  return null;
}

const HEADINGS = "h1, h2, h3, h4, h5, h6";

/** The heading with ``anchor`` and its section: siblings up to the next heading as high, and
 * when the heading sits in a wrapper (mkdocstrings' div.doc-object) what follows the wrapper
 * up to one holding such a heading; with the footnotes the section refers to. */
function section(anchor) {
  let el = anchor ? document.getElementById(anchor) || headingNamed(anchor) : null;
  if (!el) return { nodes: [contentRoot()], heading: null };
  let m = /^H([1-6])$/.exec(el.tagName);
  let level = m ? +m[1] : 7;
  let ends = (n) => {
    let h = /^H([1-6])$/.exec(n.tagName);
    return !!h && +h[1] <= level;
  };
  let holdsEnd = (n) => ends(n) || Array.prototype.some.call(n.querySelectorAll(HEADINGS), ends);
  let nodes = [el];
  let root = contentRoot();
  let at = el;
  let stop = false;
  for (let n = at.nextElementSibling; n && !(stop = ends(n)); n = n.nextElementSibling) nodes.push(n);
  while (m && !stop && at.parentElement && at.parentElement !== root && root.contains(at.parentElement)) {
    at = at.parentElement;
    for (let n = at.nextElementSibling; n && !(stop = holdsEnd(n)); n = n.nextElementSibling) nodes.push(n);
  }
  nodes.forEach((node) => {
    node.querySelectorAll("a.footnote-ref[href^='#']").forEach((ref) => {
      let note = document.getElementById(decodeURIComponent(ref.getAttribute("href").slice(1)));
      if (note && nodes.indexOf(note) === -1) nodes.push(note);
    });
  });
  return { nodes: nodes, heading: m ? el : null };
}

/** The heading element with ``anchor``, if the anchor names a heading. */
export function headingOf(anchor) {
  return section(anchor).heading;
}

function collectText(nodes, heading) {
  let segs = [];
  let text = "";
  let lastBlock = null;
  let headingEnd = 0;
  let read = (node) => {
    let atom = node.nodeType === Node.ELEMENT_NODE && node.matches(MATH);
    if (node.nodeType === Node.ELEMENT_NODE && !atom) {
      if (!node.matches(SKIP)) Array.prototype.forEach.call(readingOrder(node), read);
      return;
    }
    if (!atom && node.nodeType !== Node.TEXT_NODE) return;
    let data = atom ? ATOM : node.data;
    let block = (atom ? node : node.parentElement).closest(BLOCKS);
    if (block !== lastBlock) text += "\n";
    lastBlock = block;
    segs.push({ node: node, start: text.length, end: text.length + data.length, atom: atom });
    text += data;
    if (heading && heading.contains(node)) headingEnd = text.length;
  };
  nodes.forEach((root) => {
    if (!(root.parentElement && root.parentElement.closest(SKIP))) read(root);
  });
  return { text: text, segs: segs, headingEnd: headingEnd };
}

/** An element's children in the order the Markdown has them: Material renders a tab set's
 * labels together above its blocks, the Markdown puts each label before its own block. */
function readingOrder(el) {
  if (el.classList.contains("tabbed-set")) {
    let labels = el.querySelectorAll(":scope > .tabbed-labels > label");
    let blocks = el.querySelectorAll(":scope > .tabbed-content > .tabbed-block");
    if (labels.length && labels.length === blocks.length) {
      let rest = Array.prototype.filter.call(el.children, (child) => !child.matches(".tabbed-labels, .tabbed-content"));
      return rest.concat(Array.prototype.flatMap.call(labels, (label, i) => [label, blocks[i]]));
    }
  }
  return el.childNodes;
}

export function clearHighlights() {
  clearTimeout(highlightTimer);
  document.querySelectorAll("[" + FOCUSABLE + "]").forEach((block) => {
    block.removeAttribute("tabindex");
    block.removeAttribute(FOCUSABLE);
  });
  document.querySelectorAll("mark.kb-qa-highlight").forEach((mark) => {
    let parent = mark.parentNode;
    while (mark.firstChild) parent.insertBefore(mark.firstChild, mark);
    parent.removeChild(mark);
    parent.normalize();
  });
}

function wrap(segs, start, end) {
  let marks = [];
  segs.forEach((seg) => {
    if (seg.end <= start || seg.start >= end) return;
    let node = seg.node;
    let from = Math.max(start, seg.start) - seg.start;
    let to = Math.min(end, seg.end) - seg.start;
    let mark = document.createElement("mark");
    mark.className = "kb-qa-highlight";
    if (seg.atom) {
      // The whole formula, in a mark as wide as it is (the math stays where the renderer put it).
      if (getComputedStyle(node).display === "block") mark.className += " kb-qa-highlight--block";
    } else {
      if (!node.data.slice(from, to).trim()) return;
      if (from > 0) node = node.splitText(from);
      if (to - from < node.data.length) node.splitText(to - from);
    }
    node.parentNode.insertBefore(mark, node);
    mark.appendChild(node);
    marks.push(mark);
  });
  return marks;
}

/** Open the collapsed admonitions that hold marks, and in each tab set select the tab where the
 * passage begins: a passage over two tabs showed only the last (and linked tab sets flipped to it). */
function reveal(marks) {
  let sets = [];
  marks.forEach((el) => {
    for (let d = el.closest("details"); d; d = d.parentElement && d.parentElement.closest("details")) d.open = true;
    // Docusaurus' tabs: a hidden panel's tab, the same in order among its tab list's, is clicked
    let p = el.closest("[role=tabpanel][hidden]");
    if (p) p.parentElement.parentElement.querySelectorAll("[role=tab]")[[...p.parentElement.children].indexOf(p)]?.click();
    let block = el.closest(".tabbed-block");
    let set = block && block.closest(".tabbed-set");
    if (!set || sets.includes(set)) return;
    sets.push(set);
    let input = set.querySelectorAll(":scope > input")[Array.prototype.indexOf.call(block.parentElement.children, block)];
    if (input && !input.checked) {
      input.checked = true;
      // As a click would: Material moves the tab's underline (and linked tabs follow) on it.
      input.dispatchEvent(new Event("change", { bubbles: true }));
    }
  });
}

/** Highlight the passage ``spec`` (fingerprint or {passage}) in the section of ``anchor``. */
export function highlight(anchor, spec, smooth) {
  clearHighlights();
  let sec = section(anchor);
  let col = collectText(sec.nodes, sec.heading);
  let span = findPassage(col.text, spec);
  if (!span && sec.heading) {
    // Not in the section the id names: a heading renamed since indexing may have handed
    // its id to another ("options" to the second "Options"). The passage, where on the page
    // it is, before the heading alone.
    const page = { nodes: [contentRoot()], heading: null };
    const all = collectText(page.nodes, null);
    const found = findPassage(all.text, spec);
    if (found) [sec, col, span] = [page, all, found];
  }
  if (span && sec.heading && span.start < col.headingEnd && span.end > col.headingEnd) {
    // The passage starts with its own heading: mark the text under it, not the title.
    let body = /\S/.exec(col.text.slice(col.headingEnd, span.end));
    if (body) span.start = col.headingEnd + body.index;
  }
  let marks = span ? wrap(col.segs, span.start, span.end) : [];
  if (!marks.length && sec.heading) marks = wrap(col.segs, 0, col.headingEnd || col.text.length);
  if (!marks.length) return [];
  reveal(marks);
  scrollToMarks(marks, smooth, sec.heading);
  highlightTimer = setTimeout(() => marks.forEach((mark) => mark.classList.add("kb-qa-highlight--faded")), FADE_MS);
  return marks;
}

/** Move keyboard focus to the block holding the first mark (without scrolling: the page is
 * already where the passage shows). Returns false when it could not take focus. */
export function focusPassage(marks) {
  if (!marks.length) return false;
  const block = marks[0].parentElement.closest(FOCUS_BLOCKS) || marks[0];
  if (!block.hasAttribute("tabindex")) {
    block.setAttribute("tabindex", "-1");
    block.setAttribute(FOCUSABLE, "");
  }
  block.focus({ preventScroll: true });
  return document.activeElement === block;
}

/** Show the section's heading and the passage under the sticky header when both fit; else
 * centre the passage in the window, or show its start below the header when it is tall. */
export function scrollToMarks(marks, smooth, heading) {
  let reduce = window.matchMedia && matchMedia("(prefers-reduced-motion: reduce)").matches;
  let behavior = smooth && !reduce ? "smooth" : "auto";
  let doc = document.scrollingElement || document.documentElement;
  if (doc.scrollHeight <= window.innerHeight) {
    marks[0].scrollIntoView({ block: "center", behavior: behavior }); // an inner scroller
    return;
  }
  let top = Infinity;
  let bottom = -Infinity;
  marks.forEach((m) => {
    let r = m.getBoundingClientRect();
    top = Math.min(top, r.top);
    bottom = Math.max(bottom, r.bottom);
  });
  let header = document.querySelector(".md-header, header");
  let offset = (header && getComputedStyle(header).position !== "static" ? header.getBoundingClientRect().bottom : 0) + 16;
  let room = window.innerHeight - offset;
  let y = bottom - top <= room ? top - offset - (room - (bottom - top)) / 2 : top - offset;
  let above = heading ? heading.getBoundingClientRect().top : Infinity;
  if (above < top && bottom - above <= room) y = Math.min(y, above - offset); // heading in view too
  window.scrollTo({ top: Math.max(0, window.scrollY + y), behavior: behavior });
}
