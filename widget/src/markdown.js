/** The Markdown of answers -> DOM nodes, never HTML: blocks here, inline markup in inline.js.
 *
 * The subset models write: paragraphs, headings, fenced code, lists, quotes, tables, rules;
 * emphasis, code, links and citation numbers inline. Elements are made with createElement and
 * text with createTextNode, so model or document text can never become markup.
 */
import { MAX_DEPTH, parseInline } from "./inline.js";
import { safeHref } from "./links.js";

export { parseInline };
const FENCE = /^ {0,3}(`{3,}|~{3,})\s*([\w+#.-]*)/;
const BULLET = /^(\s*)([-*+]|\d{1,9}[.)])\s+(.*)$/;
const RULE = /^\s*\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$/;
// A display formula: a line opening with "$$" (markdown-it's dollarmath, as the server quotes it).
const MATH = /^ {0,3}\$\$/;

/** The opening fence of a code block on ``line``, or null ("``` a ```" is inline code). */
function fenceOf(line) {
  const f = FENCE.exec(line);
  if (f && f[1][0] === "`" && line.indexOf("`", f[0].length) !== -1) return null;
  return f;
}

function startsBlock(line) {
  return !!fenceOf(line) || MATH.test(line) || /^\s{0,3}#{1,6}\s/.test(line) || /^\s{0,3}>/.test(line) || BULLET.test(line);
}

/** [columns, characters] of ``line``'s indentation, counted to ``width`` columns (or one tab
 * past them). A tab reaches the next multiple of 4 columns, as CommonMark and
 * kb_qa/answer/indents.py count it: a Logseq note's "\t- Debian 12", cut by a count of columns
 * as characters, lost its "\t-" and ran into its parent's line. */
function measure(line, width = Infinity) {
  let col = 0;
  let at = 0;
  for (; col < width && /\s/.test(line[at]); at++) col += line[at] === "\t" ? 4 - (col % 4) : 1;
  return [col, at];
}
const indentOf = (line) => measure(line)[0];

/** ``line`` without ``width`` columns of its indentation (all of it when it has less); a tab
 * reaching past them leaves the columns beyond as spaces. */
function unindent(line, width) {
  const [col, at] = measure(line, width);
  return " ".repeat(Math.max(0, col - width)) + line.slice(at);
}

function cells(line) {
  let parts = [];
  let cur = "";
  let code = false;
  let body = line.trim().replace(/^\|/, "").replace(/\|$/, "");
  for (let i = 0; i < body.length; i++) {
    let ch = body[i];
    if (ch === "\\" && body[i + 1] === "|") {
      cur += "|";
      i++;
    } else if (ch === "`") {
      code = !code;
      cur += ch;
    } else if (ch === "|" && !code) {
      parts.push(cur.trim());
      cur = "";
    } else {
      cur += ch;
    }
  }
  parts.push(cur.trim());
  return parts;
}

/** An ATX heading line -> {level, text}, or null. A loop, not a regex: "# " and a million
 * spaces must not be rescanned. */
function heading(line) {
  const m = /^ {0,3}(#{1,6})(?=\s)/.exec(line);
  if (!m) return null;
  let end = line.length;
  while (end > m[0].length && /\s/.test(line[end - 1])) end--;
  let hashes = end;
  while (hashes > m[0].length && line[hashes - 1] === "#") hashes--;
  if (hashes < end && /\s/.test(line[hashes - 1])) end = hashes; // a closing "###"
  return { level: m[1].length, text: line.slice(m[0].length, end).trim() };
}

/**
 * Markdown -> block nodes: {type: p|h|code|ul|ol|quote|table|hr, ...}. Never HTML. Quotes and
 * lists nested deeper than MAX_DEPTH are read as paragraphs, so each line is looked at a
 * bounded number of times.
 */
export function parseBlocks(md, depth) {
  depth = depth || 0;
  let lines = String(md || "").replace(/\r\n?/g, "\n").split("\n");
  let blocks = [];
  let i = 0;
  while (i < lines.length) {
    let line = lines[i];
    if (!line.trim()) {
      i++;
      continue;
    }
    const f = fenceOf(line);
    if (f) {
      let body = [];
      let closed = false;
      let pad = indentOf(line);
      for (i++; i < lines.length; i++) {
        let c = /^\s*(`{3,}|~{3,})\s*$/.exec(lines[i]);
        if (c && c[1][0] === f[1][0] && c[1].length >= f[1].length) {
          closed = true;
          i++;
          break;
        }
        body.push(unindent(lines[i], pad));
      }
      blocks.push({ type: "code", lang: f[2], text: body.join("\n"), closed: closed });
      continue;
    }
    if (MATH.test(line)) {
      // Its exact characters, to the line ending in "$$" ("$$x$$" ends on its own line): its
      // "- b" or "# x" lines are TeX, not a list or a heading.
      let body = [line];
      let end = line.trim().length > 3 && /\$\$\s*$/.test(line);
      for (i++; !end && i < lines.length; i++) end = /\$\$\s*$/.test(body[body.push(lines[i]) - 1]);
      blocks.push({ type: "p", text: body.join("\n").trim(), math: 1 });
      continue;
    }
    const h = heading(line);
    if (h) {
      blocks.push({ type: "h", level: h.level, text: h.text });
      i++;
      continue;
    }
    if (/^\s{0,3}([-*_])(\s*\1){2,}\s*$/.test(line)) {
      blocks.push({ type: "hr" });
      i++;
      continue;
    }
    if (depth < MAX_DEPTH && /^\s{0,3}>/.test(line)) {
      let quoted = [];
      while (i < lines.length && /^\s{0,3}>/.test(lines[i])) quoted.push(lines[i++].replace(/^\s{0,3}>\s?/, ""));
      blocks.push({ type: "quote", children: parseBlocks(quoted.join("\n"), depth + 1) });
      continue;
    }
    if (depth < MAX_DEPTH && BULLET.test(line)) {
      i = parseList(lines, i, blocks, depth);
      continue;
    }
    if (line.indexOf("|") !== -1 && i + 1 < lines.length && RULE.test(lines[i + 1]) && lines[i + 1].indexOf("-") !== -1) {
      let head = cells(line);
      let rows = [];
      for (i += 2; i < lines.length && lines[i].trim() && lines[i].indexOf("|") !== -1; i++) rows.push(cells(lines[i]));
      blocks.push({ type: "table", head: head, rows: rows });
      continue;
    }
    let para = [line.trim()];
    for (i++; i < lines.length && lines[i].trim() && !(depth < MAX_DEPTH && startsBlock(lines[i])); i++) para.push(lines[i].trim());
    blocks.push({ type: "p", text: para.join("\n") });
  }
  return blocks;
}

function parseList(lines, i, blocks, depth) {
  let first = BULLET.exec(lines[i]);
  let base = indentOf(lines[i]);
  let ordered = /\d/.test(first[2]);
  let list = { type: ordered ? "ol" : "ul", start: ordered ? parseInt(first[2], 10) : 1, items: [] };
  while (i < lines.length) {
    let m = BULLET.exec(lines[i]);
    if (!m || indentOf(lines[i]) > base + 1 || /\d/.test(m[2]) !== ordered) break;
    let inner = indentOf(lines[i]) + m[2].length + 1;
    let content = [m[3]];
    for (i++; i < lines.length; i++) {
      let line = lines[i];
      if (!line.trim()) {
        let next = lines[i + 1];
        if (next !== undefined && next.trim() && indentOf(next) > base) {
          content.push("");
          continue;
        }
        break;
      }
      if (indentOf(line) > base) content.push(unindent(line, inner));
      else if (!startsBlock(line) && !BULLET.test(line)) content.push(line.trim());
      else break;
    }
    list.items.push(parseBlocks(content.join("\n"), depth + 1));
    while (i < lines.length && !lines[i].trim() && lines[i + 1] !== undefined && BULLET.test(lines[i + 1]) && indentOf(lines[i + 1]) <= base + 1) i++;
  }
  blocks.push(list);
  return i;
}

const BLOCK_TAGS = { p: "p", ul: "ul", ol: "ol", quote: "blockquote", hr: "hr" };

/**
 * Block nodes -> a DocumentFragment built with createElement / createTextNode only.
 * ``ctx.cite(n)`` makes a citation element; ``ctx.copy(text)`` a code block's copy button;
 * ``ctx.base`` resolves relative links.
 */
function renderBlocks(blocks, doc, ctx) {
  let frag = doc.createDocumentFragment();
  blocks.forEach(function (b) {
    let el;
    if (b.type === "code") {
      el = doc.createElement("div");
      el.className = "kbq-code";
      let pre = doc.createElement("pre");
      let code = doc.createElement("code");
      if (b.lang) code.setAttribute("data-lang", b.lang);
      code.appendChild(doc.createTextNode(b.text));
      pre.appendChild(code);
      el.appendChild(pre);
      if (ctx && ctx.copy && b.closed) el.appendChild(ctx.copy(b.text));
    } else if (b.type === "h") {
      el = doc.createElement("h" + Math.min(6, Math.max(3, b.level + 2)));
      el.appendChild(renderInline(parseInline(b.text), doc, ctx));
      autoDirection(el);
    } else if (b.type === "ul" || b.type === "ol") {
      el = doc.createElement(b.type);
      if (b.type === "ol" && b.start !== 1) el.setAttribute("start", String(b.start));
      b.items.forEach(function (item) {
        let li = doc.createElement("li");
        // A tight item is one paragraph: show it without the paragraph's margins.
        if (item.length === 1 && item[0].type === "p") {
          let text = item[0].text;
          let task = TASK.exec(text);
          if (task) {
            // "- [ ] Book the venue": a note's task, shown as the note shows it.
            let box = doc.createElement("input");
            box.setAttribute("type", "checkbox");
            box.setAttribute("disabled", "");
            if (task[1] !== " ") box.setAttribute("checked", "");
            li.setAttribute("class", "kbq-task");
            li.appendChild(box);
            text = text.slice(task[0].length);
          }
          li.appendChild(renderInline(parseInline(text), doc, ctx));
        } else li.appendChild(renderBlocks(item, doc, ctx));
        autoDirection(li);
        el.appendChild(li);
      });
    } else if (b.type === "quote") {
      el = doc.createElement("blockquote");
      el.appendChild(renderBlocks(b.children, doc, ctx));
    } else if (b.type === "table") {
      el = doc.createElement("div");
      el.className = "kbq-table";
      let table = doc.createElement("table");
      let thead = doc.createElement("thead");
      let tbody = doc.createElement("tbody");
      let row = function (list, tag, parent) {
        let tr = doc.createElement("tr");
        list.forEach(function (cell) {
          let td = doc.createElement(tag);
          td.appendChild(renderInline(parseInline(cell), doc, ctx));
          tr.appendChild(td);
        });
        parent.appendChild(tr);
      };
      row(b.head, "th", thead);
      b.rows.forEach(function (r) {
        row(r, "td", tbody);
      });
      table.appendChild(thead);
      table.appendChild(tbody);
      el.appendChild(table);
    } else {
      el = doc.createElement(BLOCK_TAGS[b.type] || "p");
      if (b.type === "p") {
        el.appendChild(b.math ? doc.createTextNode(b.text) : renderInline(parseInline(b.text), doc, ctx));
        autoDirection(el); // a Hebrew or Arabic passage reads right to left
      }
    }
    frag.appendChild(el);
  });
  return frag;
}

// A task list item's box: "[ ] ", "[x] " (Obsidian and GitHub).
const TASK = /^\[([ xX])\]\s+/;

/** At most this many inline elements per rendered answer (``ctx.laid`` counts them): many
 * tiny inline boxes (a reply of whitespace-only code spans) are what Chromium lays out slowly. */
export const MAX_INLINE_ELEMENTS = 3000;

// Punctuation that closes what a citation chip ends: kept on the chip's line.
const AFTER_CHIP = /^[.,;:!?)\]}»”’。，；：！？、）]+/;

/** ``dir="auto"``, set once an element holds its content: set first, Chromium resolves the
 * direction again at each child appended, and a paragraph of 3,000 code spans took 0.6 s. */
function autoDirection(el) {
  el.setAttribute("dir", "auto");
}

function renderInline(nodes, doc, ctx) {
  let frag = doc.createDocumentFragment();
  // A citation chip waits for the text after it: a chip is a box, which a line may end
  // after, leaving its period alone on the next line; with it, the two do not part.
  let chip = null;
  const layChip = function (closing) {
    if (!chip) return;
    if (closing) {
      let keep = doc.createElement("span");
      keep.className = "kbq-nobr";
      keep.appendChild(chip);
      keep.appendChild(doc.createTextNode(closing));
      frag.appendChild(keep);
    } else {
      frag.appendChild(chip);
    }
    chip = null;
  };
  nodes.forEach(function (n) {
    if (ctx && n.type !== "text") {
      ctx.laid = (ctx.laid || 0) + 1;
      if (ctx.laid > MAX_INLINE_ELEMENTS) {
        ctx.truncated = true;
        return;
      }
    }
    if (ctx && ctx.truncated) return;
    const closing = chip && n.type === "text" ? AFTER_CHIP.exec(n.text) : null;
    layChip(closing ? closing[0] : "");
    if (n.type === "text") {
      const text = closing ? n.text.slice(closing[0].length) : n.text;
      if (text) frag.appendChild(doc.createTextNode(text));
    } else if (n.type === "code") {
      let code = doc.createElement("code");
      code.appendChild(doc.createTextNode(n.text));
      frag.appendChild(code);
    } else if (n.type === "strong" || n.type === "em") {
      let el = doc.createElement(n.type);
      el.appendChild(renderInline(n.children, doc, ctx));
      frag.appendChild(el);
    } else if (n.type === "cite") {
      // Citations count from 1; "arr[1]" is indexing unless the answer cites a source 1.
      const known = n.n > 0 && (!n.glued || (ctx && ctx.known && ctx.known(n.n)));
      if (known && ctx && ctx.cite) {
        chip = ctx.cite(n.n);
        const before = frag.lastChild; // the space before a marker ctx.cite drops goes too
        if (!chip && before && before.nodeType === 3) before.data = before.data.trimEnd();
      } else frag.appendChild(doc.createTextNode("[" + n.n + "]"));
    } else if (n.type === "link") {
      let href = safeHref(n.href, ctx && ctx.base);
      let inner = renderInline(n.children, doc, ctx);
      // A page the model read may ask it to link anywhere: a link is live only into this
      // site (its origin, root or site_url); any other shows its address after its text.
      if (!ctx || ![ctx.origin + "/", ctx.base, ctx.site].some((s) => s && href && !href.indexOf(s))) {
        frag.appendChild(inner);
        if (href && href !== (n.children[0] || {}).text) frag.appendChild(doc.createTextNode(" (" + href + ")"));
        return;
      }
      let a = doc.createElement("a");
      a.setAttribute("href", href);
      if (href.indexOf(ctx.origin + "/")) {
        a.setAttribute("target", "_blank");
        a.setAttribute("rel", "noopener noreferrer");
      }
      a.appendChild(inner);
      frag.appendChild(a);
    }
  });
  layChip("");
  return frag;
}

export { renderBlocks };

// Bidi embeddings, overrides and isolates: one left open ("\u202e") reverses the rest of a
// paragraph, citation chips included, so a reply could show a file name or a command as
// what it is not. Marks (LRM, RLM) stay: they only nudge neutral characters.
const BIDI_CONTROLS = /[\u202a-\u202e\u2066-\u2069]/g;

/** ``text`` without bidi embeddings, overrides and isolates: what a model, a page's heading
 * or its passage says is shown in the order it was written. */
export function withoutBidi(text) {
  return String(text || "").replace(BIDI_CONTROLS, "");
}

/** Markdown -> a DocumentFragment of elements and text nodes (see renderBlocks). */
export function renderMarkdown(md, doc, ctx) {
  return renderBlocks(parseBlocks(withoutBidi(md)), doc, ctx);
}

