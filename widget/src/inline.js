/** Inline Markdown -> nodes (text, code, strong, em, link, cite), in time linear in the input.
 *
 * Model output can be steered by document content, so a reply may be built to be slow to parse
 * ("*a " ten thousand times, runs of "[" or backticks). Nothing here rescans: one left-to-right
 * pass cuts the text into pieces; code spans find their closing run through a table built in
 * one pass; links use a bracket stack; emphasis is CommonMark's delimiter algorithm (each
 * closer looks back at most once past any opener, thanks to its `openersBottom`). Link
 * targets and titles are read up to a fixed length. Nesting deeper than MAX_DEPTH stays text,
 * so rendering never recurses deeply.
 */

export const MAX_DEPTH = 12;
const MAX_TARGET = 2048; // characters of a link's target and title
const ESCAPABLE = /[\\`*_{}[\]()#+\-.!|<>~$&]/;
const SPACE = /\s/u;
const PUNCT = /[\p{P}\p{S}]/u;
const WORDY = /[\p{L}\p{N}]/u;
const GLUE = /[A-Za-z0-9_\]]/; // "arr[0]": a marker glued to this is indexing unless known
const CITE = /\[(\d{1,3})\]/y;
const AUTOLINK = /<(https?:\/\/[^\s<>]+)>/y;
const SPECIAL = /[\\`[\]<hH*_$&]/g;
const TRAILING = /[).,;:!?'"\]]/;
const BARE_URL = /https?:\/\/[^\s<>"'`]+/iy;
// Character references: a model copies them from a page's Markdown ("&plusmn;0.5&nbsp;&deg;C")
// and the chat had shown them as written. The names docs use; any other stays as written.
const ENTITY = /&(?:#(\d{1,7})|#[xX]([\da-fA-F]{1,6})|([A-Za-z][A-Za-z\d]{1,31}));/y;
const NAMED = {
  amp: "&", lt: "<", gt: ">", quot: '"', apos: "'", nbsp: "\u00a0", thinsp: "\u2009", ensp: "\u2002", emsp: "\u2003",
  copy: "©", reg: "®", trade: "™", mdash: "—", ndash: "–", minus: "−", hellip: "…", bull: "•", middot: "·",
  lsquo: "‘", rsquo: "’", ldquo: "“", rdquo: "”", laquo: "«", raquo: "»", sect: "§", para: "¶",
  plusmn: "±", deg: "°", times: "×", divide: "÷", micro: "µ", frac12: "½", frac14: "¼", frac34: "¾", sup2: "²", sup3: "³",
  le: "≤", ge: "≥", ne: "≠", asymp: "≈", infin: "∞", euro: "€", pound: "£", yen: "¥", cent: "¢", check: "✓", cross: "✗",
  larr: "←", rarr: "→", uarr: "↑", darr: "↓", harr: "↔", lArr: "⇐", rArr: "⇒", hArr: "⇔",
  alpha: "α", beta: "β", gamma: "γ", delta: "δ", lambda: "λ", mu: "μ", pi: "π", sigma: "σ", Delta: "Δ", Omega: "Ω",
};

/**
 * The character reference at ``s[i]`` ("&deg;", "&#176;", "&#xB0;"): {text, end}, or null
 * for a name not known. As CommonMark says, a code point that is no character is U+FFFD; a
 * bidi control is "" (markdown.js drops those written as characters: decoded, "&#x202e;"
 * would have reversed the rest of the answer).
 */
export function entityAt(s, i) {
  ENTITY.lastIndex = i;
  const m = ENTITY.exec(s);
  if (!m) return null;
  const end = i + m[0].length;
  if (m[3]) return typeof NAMED[m[3]] === "string" ? { text: NAMED[m[3]], end: end } : null; // not "constructor"
  const code = m[1] ? parseInt(m[1], 10) : parseInt(m[2], 16);
  if (!code || code > 0x10ffff || (code >= 0xd800 && code < 0xe000)) return { text: "\ufffd", end: end };
  return { text: /[\u202a-\u202e\u2066-\u2069]/.test(String.fromCodePoint(code)) ? "" : String.fromCodePoint(code), end: end };
}

/**
 * Where the math span opening at ``s[i]`` ends (past its closing delimiter), or -1: ``$$..$$``,
 * ``\[..\]`` opening a line, ``\(..\)``, and ``$..$`` by pandoc's and arithmatex's rule, so
 * prices are not math ("costs $5 and $10"): the opening ``$`` is followed by a non-space, and
 * the closing one (the next ``$`` not escaped) is preceded by a non-space and not followed by a
 * digit.
 * ``memo`` (one per string) records the closers found missing: a run of openers with no closer
 * reads the text once, not once per opener.
 */
export function mathEnd(s, i, memo) {
  const two = s.substr(i, 2);
  let close = two === "$$" ? two : two === "\\(" ? "\\)" : "";
  if (two === "\\[") {
    // Only first on its line (as arithmatex reads it: a block's start); "step \[2\]" is "[2]".
    let k = i;
    while (s[k - 1] === " " || s[k - 1] === "\t") k--;
    if (!k || s[k - 1] === "\n") close = "\\]";
  }
  if (close) {
    const j = memo[close] ? -1 : s.indexOf(close, i + 2);
    if (j < 0) memo[close] = 1;
    return j < 0 ? j : j + 2;
  }
  if (two[0] !== "$" || !/\S/.test(two[1] || " ")) return -1;
  for (let j = i + 1; j < s.length; j++) {
    if (s[j] === "\\") j++;
    else if (s[j] === "$") return /\s/.test(s[j - 1]) || /\d/.test(s[j + 1]) ? -1 : j + 1;
  }
  return -1;
}

/** For each backtick run, the index of the next run of the same length (or -1). */
function backtickRuns(s) {
  const runs = [];
  for (let i = s.indexOf("`"); i !== -1; i = s.indexOf("`", i)) {
    let j = i;
    while (s[j] === "`") j++;
    runs.push({ at: i, len: j - i, next: -1 });
    i = j;
  }
  const last = new Map();
  for (let r = runs.length - 1; r >= 0; r--) {
    const seen = last.get(runs[r].len);
    runs[r].next = seen === undefined ? -1 : seen;
    last.set(runs[r].len, r);
  }
  return runs;
}

/** `(target "title")` right after a link's `]` at ``i``: {href, end} or null. Bounded. */
function linkTarget(s, i) {
  if (s[i] !== "(") return null;
  let j = i + 1;
  const limit = Math.min(s.length, i + MAX_TARGET);
  while (j < limit && (s[j] === " " || s[j] === "\t")) j++;
  const angle = s[j] === "<";
  if (angle) j++;
  const from = j;
  let depth = 0;
  for (; j < limit; j++) {
    const ch = s[j];
    if (SPACE.test(ch) || ch === "<") break;
    if (ch === ">") {
      if (angle) break;
      return null;
    }
    if (ch === "(") {
      if (++depth > 1) return null;
    } else if (ch === ")") {
      if (depth === 0) break;
      depth--;
    }
  }
  const href = s.slice(from, j);
  if (angle) {
    if (s[j] !== ">") return null;
    j++;
  }
  while (j < limit && SPACE.test(s[j])) j++;
  if (s[j] === '"') {
    for (j++; j < limit && s[j] !== '"'; j++);
    if (j >= limit) return null;
    for (j++; j < limit && SPACE.test(s[j]); j++);
  }
  return s[j] === ")" ? { href: href, end: j + 1 } : null;
}

/** A run of ``*`` or ``_`` from ``i``: can it open, can it close (CommonMark's flanking rules)? */
function delimiter(s, i, ch) {
  let j = i;
  while (s[j] === ch) j++;
  const before = i > 0 ? s[i - 1] : " ";
  const after = j < s.length ? s[j] : " ";
  const left = !SPACE.test(after) && (!PUNCT.test(after) || SPACE.test(before) || PUNCT.test(before));
  const right = !SPACE.test(before) && (!PUNCT.test(before) || SPACE.test(after) || PUNCT.test(after));
  const open = ch === "*" ? left : left && (!right || PUNCT.test(before));
  const close = ch === "*" ? right : right && (!left || PUNCT.test(after));
  return { t: "delim", ch: ch, count: j - i, orig: j - i, open: open, close: close, opens: null, closes: null, prev: null, next: null };
}

/**
 * Match emphasis among the delimiters after ``bottom`` (CommonMark "process emphasis"), then
 * drop them from the list. Every delimiter is looked at a bounded number of times.
 */
function processEmphasis(list, bottom) {
  const openersBottom = new Map();
  let closer = bottom ? bottom.next : list.head;
  while (closer) {
    if (!closer.close) {
      closer = closer.next;
      continue;
    }
    const key = closer.ch + (closer.open ? "1" : "0") + (closer.orig % 3);
    const floor = openersBottom.get(key);
    let opener = closer.prev;
    let found = false;
    while (opener && opener !== bottom && opener !== floor) {
      if (opener.ch === closer.ch && opener.open) {
        const odd = (opener.close || closer.open) && (opener.orig + closer.orig) % 3 === 0 && !(opener.orig % 3 === 0 && closer.orig % 3 === 0);
        if (!odd) {
          found = true;
          break;
        }
      }
      opener = opener.prev;
    }
    if (!found) {
      openersBottom.set(key, closer.prev);
      const next = closer.next;
      if (!closer.open) unlink(list, closer);
      closer = next;
      continue;
    }
    const use = opener.count >= 2 && closer.count >= 2 ? 2 : 1;
    const type = use === 2 ? "strong" : "em";
    opener.count -= use;
    closer.count -= use;
    (opener.opens || (opener.opens = [])).push(type);
    (closer.closes || (closer.closes = [])).push(type);
    opener.next = closer; // the delimiters in between can no longer match
    closer.prev = opener;
    if (!opener.count) unlink(list, opener);
    if (!closer.count) {
      const next = closer.next;
      unlink(list, closer);
      closer = next;
    }
  }
  // What is left above the bottom stays text.
  if (bottom) bottom.next = null;
  else list.head = null;
  list.tail = bottom;
}

function unlink(list, d) {
  if (d.prev) d.prev.next = d.next;
  else if (list.head === d) list.head = d.next;
  if (d.next) d.next.prev = d.prev;
  else if (list.tail === d) list.tail = d.prev;
  d.prev = d.next = null;
}

function push(list, d) {
  d.prev = list.tail;
  if (list.tail) list.tail.next = d;
  else list.head = d;
  list.tail = d;
}

/** Pieces of ``s`` in order: text, code, cite, brackets and delimiter runs. */
function scan(s) {
  const pieces = [];
  const delims = { head: null, tail: null };
  const brackets = []; // the "[" pieces still open
  let inactiveBelow = 0; // brackets below this index were open around a link: never links
  const runs = backtickRuns(s);
  const memo = {};
  let run = 0;
  // Text is taken from the source as slices: s[from, i) is text not yet added to ``text``.
  let text = "";
  let from = 0;
  const piece = (p, end) => {
    text += s.slice(from, i);
    if (text) pieces.push({ t: "text", v: text });
    text = "";
    pieces.push(p);
    i = from = end;
  };
  let i = 0;
  while (i < s.length) {
    SPECIAL.lastIndex = i;
    const next = SPECIAL.exec(s);
    if (!next) break;
    i = next.index;
    const ch = s[i];
    let m;
    if ((ch === "$" || ch === "\\") && (m = mathEnd(s, i, memo)) > 0) {
      // Math (LaTeX) is its own characters, as code is: no escapes, emphasis or links.
      text += s.slice(from, m);
      i = from = m;
    } else if (ch === "&" && (m = entityAt(s, i))) {
      // Its character is text (a "&#42;" is no emphasis); code spans and math keep the reference.
      text += s.slice(from, i) + m.text;
      i = from = m.end;
    } else if (ch === "\\" && ESCAPABLE.test(s[i + 1] || "")) {
      text += s.slice(from, i) + s[i + 1];
      i = from = i + 2;
    } else if (ch === "`") {
      while (runs[run].at + runs[run].len <= i) run++;
      const open = runs[run];
      if (open.at === i && open.next !== -1) {
        const close = runs[open.next];
        const code = s.slice(i + open.len, close.at);
        piece({ t: "code", v: /^ [^]* $/.test(code) && code.trim() ? code.slice(1, -1) : code }, close.at + close.len);
        run = open.next + 1;
      } else {
        // No closing run (or the rest of a run whose first backtick was escaped): text.
        i = open.at + open.len;
        run++;
      }
    } else if (ch === "[" && ((CITE.lastIndex = i), (m = CITE.exec(s))) && s[i + m[0].length] !== "(") {
      const before = i > from ? s[i - 1] : text[text.length - 1];
      const prev = pieces[pieces.length - 1];
      const glued = before ? GLUE.test(before) : !!prev && prev.t === "code";
      piece({ t: "cite", n: parseInt(m[1], 10), glued: glued }, i + m[0].length);
    } else if (ch === "[") {
      const open = { t: "bracket", link: null, delims: delims.tail };
      brackets.push(open);
      piece(open, i + 1);
    } else if (ch === "]" && brackets.length) {
      const opener = brackets.pop();
      const target = brackets.length >= inactiveBelow ? linkTarget(s, i + 1) : null;
      inactiveBelow = Math.min(inactiveBelow, brackets.length);
      if (target) {
        processEmphasis(delims, opener.delims);
        opener.link = target.href;
        piece({ t: "end" }, target.end);
        // No links inside links: the brackets still open around this one stay text.
        inactiveBelow = brackets.length;
      } else {
        i++;
      }
    } else if (ch === "<" && ((AUTOLINK.lastIndex = i), (m = AUTOLINK.exec(s)))) {
      piece({ t: "url", v: m[1] }, i + m[0].length);
    } else if ((ch === "h" || ch === "H") && !WORDY.test(s[i - 1] || "") && ((BARE_URL.lastIndex = i), (m = BARE_URL.exec(s)))) {
      let end = m[0].length;
      while (end > 0 && TRAILING.test(m[0][end - 1])) end--; // a loop: a regex here rescans
      piece({ t: "url", v: m[0].slice(0, end) }, i + end);
    } else if (ch === "*" || ch === "_") {
      const d = delimiter(s, i, ch);
      push(delims, d);
      piece(d, i + d.count);
    } else {
      i++;
    }
  }
  i = s.length;
  text += s.slice(from, i);
  if (text) pieces.push({ t: "text", v: text });
  processEmphasis(delims, null);
  return pieces;
}

/** Inline Markdown -> nodes: text, code, strong, em, link {href, children}, cite {n, glued}. */
export function parseInline(s) {
  const root = { children: [] };
  const stack = [{ node: root, after: "" }];
  // Adjacent text is joined once, not by repeated "+=" (a million one-character pieces
  // would make a rope that long).
  let parts = [];
  const settle = () => {
    if (!parts.length) return;
    const joined = parts.join("");
    parts = [];
    if (joined) stack[stack.length - 1].node.children.push({ type: "text", text: joined });
  };
  const add = (node) => {
    if (node.type === "text") {
      parts.push(node.text);
      return;
    }
    settle();
    stack[stack.length - 1].node.children.push(node);
  };
  const open = (node, before, after) => {
    // Past MAX_DEPTH the markup stays as the characters it was written with.
    if (stack.length > MAX_DEPTH) {
      add({ type: "text", text: before });
      stack.push({ node: stack[stack.length - 1].node, after: after, flat: true });
      return;
    }
    add(node);
    stack.push({ node: node, after: "" });
  };
  const close = () => {
    if (stack[stack.length - 1].flat) add({ type: "text", text: stack.pop().after });
    else {
      settle(); // the text so far belongs inside the element being closed
      stack.pop();
    }
  };
  scan(String(s || "")).forEach((p) => {
    if (p.t === "text") add({ type: "text", text: p.v });
    else if (p.t === "code") add({ type: "code", text: p.v });
    else if (p.t === "cite") add({ type: "cite", n: p.n, glued: p.glued });
    else if (p.t === "url") add({ type: "link", href: p.v, children: [{ type: "text", text: p.v }] });
    else if (p.t === "bracket") {
      if (p.link === null) add({ type: "text", text: "[" });
      else open({ type: "link", href: p.link, children: [] }, "[", "](" + p.link + ")");
    } else if (p.t === "end") {
      close();
    } else {
      // A delimiter run: closes use its first characters, opens its last ones.
      if (p.closes) p.closes.forEach(close);
      add({ type: "text", text: p.ch.repeat(p.count) });
      for (let k = p.opens ? p.opens.length - 1 : -1; k >= 0; k--) {
        const mark = p.opens[k] === "strong" ? p.ch + p.ch : p.ch;
        open({ type: p.opens[k], children: [] }, mark, mark);
      }
    }
  });
  settle();
  return root.children;
}
