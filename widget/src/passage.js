/** Passage matching: where the words of a cited Markdown passage lie in the text a page renders.
 *
 * Pure functions (no DOM): tokenize (CJK characters are words of their own), stripMarkdown
 * (Markdown as the text a reader sees), align (Smith-Waterman over words), fingerprint (the
 * first and last words a link carries) and findPassage.
 */

const FP_WORDS = 12; // words kept from each end of a long passage in a link
const TAIL_REPEATS = 8; // at most this many back-to-back repeats of a link's last words are followed
const CJK = /[\u2e80-\u2fdf\u3040-\u30ff\u3100-\u312f\u31a0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u{20000}-\u{2fa1f}]/u;
const WORD = /[\p{L}\p{M}\p{N}]+/gu;

function norm(word) {
  return word.normalize("NFKC").toLowerCase();
}

/** Words of ``text`` with their offsets; each CJK character is a word of its own. */
export function tokenize(text) {
  let out = [];
  let m;
  text = String(text || "");
  WORD.lastIndex = 0;
  while ((m = WORD.exec(text))) {
    let word = m[0];
    let at = m.index;
    if (!CJK.test(word)) {
      out.push({ t: norm(word), s: at, e: at + word.length });
      continue;
    }
    let run = -1;
    let i = 0;
    for (let ch of word) {
      if (CJK.test(ch)) {
        if (run >= 0) out.push({ t: norm(word.slice(run, i)), s: at + run, e: at + i });
        run = -1;
        out.push({ t: norm(ch), s: at + i, e: at + i + ch.length });
      } else if (run < 0) {
        run = i;
      }
      i += ch.length;
    }
    if (run >= 0) out.push({ t: norm(word.slice(run)), s: at + run, e: at + word.length });
  }
  return out;
}

export function words(text) {
  return tokenize(text).map(function (t) {
    return t.t;
  });
}

function joinWords(list) {
  let s = "";
  for (let i = 0; i < list.length; i++) {
    if (i && !(CJK.test(list[i - 1]) && CJK.test(list[i]))) s += " ";
    s += list[i];
  }
  return s;
}

const ENTITIES = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'", nbsp: " ", copy: "©", reg: "®", mdash: "—", ndash: "–", hellip: "…" };

function plainInline(s) {
  return s
    .replace(/\\([\\`*_{}[\]()#+\-.!|<>~])/g, "$1")
    // Each pattern stops at the next opener and reaches a bounded distance (as
    // kb_qa/answer/blocks.py's do): one that scanned from every "[" to the line's end
    // took 13 s over a cited section of 60 KB of "[".
    .replace(/!\[[^[\]]{0,500}\](\([^()]{0,2000}\)|\[[^[\]]{0,500}\])/g, "") // images render no text
    .replace(/\[([^[\]]{0,500})\]\((?:[^()\s]|\([^()]{0,500}\)){0,2000}(?:\s{1,32}"[^"]{0,500}")?\)/g, "$1") // links keep their text
    .replace(/\[([^[\]]{1,500})\]\[[^[\]]{0,500}\]/g, "$1")
    // The end of a link whose text holds a code span ("[the `x` attack](url)"): plainLine reads
    // the text around the span on its own, so its target is met without the "[" that opened it.
    .replace(/\]\((?:[^()\s]|\([^()]{0,500}\)){0,2000}(?:\s{1,32}"[^"]{0,500}")?\)|\]\[[^[\]]{0,500}\]/g, " ")
    .replace(/\[\^[^[\]]{1,500}\]/g, "") // footnote references
    .replace(/<((?:https?|mailto):[^<>\s]{1,2000})>/g, "$1")
    .replace(/<\/?[A-Za-z][^<>]{0,1000}>/g, " ") // raw HTML renders as elements, not as text
    .replace(/\{[ \t]{0,32}:?[ \t]{0,32}[#.][^{}]{0,500}\}/g, "") // attribute lists
    .replace(/:[a-z][a-z0-9_+-]*:/g, " ") // emoji / icon shortcodes
    .replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, function (all, name) {
      if (name[0] === "#") {
        let code = name[1] === "x" || name[1] === "X" ? parseInt(name.slice(2), 16) : parseInt(name.slice(1), 10);
        return code > 0 && code < 0x110000 ? String.fromCodePoint(code) : " ";
      }
      return ENTITIES[name.toLowerCase()] || " ";
    })
    .replace(/\*\*|__|~~|==|\^\^|\*/g, "")
    .replace(/(^|[^\p{L}\p{N}])_+|_+(?=[^\p{L}\p{N}]|$)/gu, "$1")
    .replace(/\|/g, " ");
}

/** Inline Markdown to text; code spans are kept verbatim (they render as text). */
function plainLine(s) {
  let out = "";
  let i = 0;
  while (i < s.length) {
    let b = s.indexOf("`", i);
    if (b === -1) {
      out += plainInline(s.slice(i));
      break;
    }
    let run = /^`+/.exec(s.slice(b))[0];
    let close = b + run.length;
    for (;;) {
      close = s.indexOf(run, close);
      if (close === -1 || s[close + run.length] !== "`") break;
      while (s[close] === "`") close++;
    }
    if (close === -1) {
      out += plainInline(s.slice(i, b)) + run;
      i = b + run.length;
      continue;
    }
    out += plainInline(s.slice(i, b)) + s.slice(b + run.length, close);
    i = close + run.length;
  }
  return out;
}

/** A Markdown passage as the text a reader sees once MkDocs has rendered it. */
export function stripMarkdown(md) {
  let lines = String(md || "")
    .replace(/\r\n?/g, "\n")
    .replace(/<!--[\s\S]*?(?:-->|$)/g, " ")
    .split("\n");
  let out = [];
  let fence = null;
  for (let k = 0; k < lines.length; k++) {
    let line = lines[k];
    let f = /^\s*(`{3,}|~{3,})/.exec(line);
    if (fence) {
      if (f && f[1][0] === fence[0] && f[1].length >= fence.length && /^\s*[`~]+\s*$/.test(line)) fence = null;
      else out.push(line.replace(/^\s+/, ""));
      continue;
    }
    if (f) {
      fence = f[1];
      let title = /\stitle="([^"]*)"/.exec(line);
      if (title) out.push(title[1]); // Material shows a code block's title above it
      continue;
    }
    let note = /^\s{0,3}\[\^[^\]]+\]:\s?(.*)$/.exec(line);
    if (note) {
      out.push(plainLine(note[1])); // a footnote's text is shown (at the page's end)
      continue;
    }
    if (/^\s{0,3}\[[^\]]+\]:\s/.test(line) || /^\s*\*\[[^\]]+\]:/.test(line)) continue; // definitions
    if (/^\s*-{2,}8<-{2,}/.test(line)) continue; // snippet includes
    if (/^\s*(?:\|\s*)?:?-+:?\s*(?:\|\s*:?-+:?\s*)+(?:\|\s*)?$/.test(line)) continue; // table rule
    if (/^\s*([-*_])(\s*\1){2,}\s*$/.test(line)) continue; // horizontal rule
    let adm = /^\s*(?:!!!|\?\?\?\+?)\s*([\w-]+)?(?:[^"]*"([^"]*)")?/.exec(line);
    if (adm) {
      // Material shows the quoted title, or the type as the title when there is none.
      out.push(plainLine(adm[2] != null ? adm[2] : adm[1] || ""));
      continue;
    }
    let tab = /^\s*===\+?\s*"([^"]*)"/.exec(line);
    if (tab) {
      out.push(plainLine(tab[1])); // a label's icons (":material-x:") show no words
      continue;
    }
    line = line
      .replace(/^\s*#{1,6}(\s+|$)/, "")
      .replace(/\s#+\s*$/, "") // the blanks before it go with the rest, below
      .replace(/^\s*(>\s?)+/, "")
      .replace(/^\s*(?:[-*+]|\d{1,9}[.)])\s+(\[[ xX]\]\s+)?/, "");
    out.push(plainLine(line));
  }
  return out
    .join("\n")
    .replace(/[ \t\u00a0]+/g, " ")
    .replace(/ *\n */g, "\n")
    .replace(/\n{3,}/g, "\n\n")
    .trim();
}

// ---------------------------------------------------------------- passage matching

/**
 * Best local alignment (Smith-Waterman over words) of ``query`` inside ``text`` tokens from
 * index ``from``: tolerant of words the page adds (admonition titles, line numbers) or drops
 * (link targets, markup) compared with the Markdown.
 */
export function align(query, text, from) {
  let n = query.length;
  let m = text.length;
  from = from || 0;
  if (!n || from >= m) return null;
  let prevH = new Float64Array(m + 1);
  let prevS = new Int32Array(m + 1);
  let prevC = new Int32Array(m + 1);
  let curH = new Float64Array(m + 1);
  let curS = new Int32Array(m + 1);
  let curC = new Int32Array(m + 1);
  let best = { score: 0, start: -1, end: -1, matched: 0 };
  for (let i = 1; i <= n; i++) {
    let q = query[i - 1];
    curH[from] = 0;
    for (let j = from + 1; j <= m; j++) {
      let hit = q === text[j - 1].t;
      let diag = prevH[j - 1] + (hit ? 2 : -1);
      let up = prevH[j] - 1;
      let left = curH[j - 1] - 1;
      let h = 0;
      let s = j;
      let c = 0;
      if (diag > 0 && diag >= up && diag >= left) {
        h = diag;
        s = prevH[j - 1] > 0 ? prevS[j - 1] : j - 1;
        c = (prevH[j - 1] > 0 ? prevC[j - 1] : 0) + (hit ? 1 : 0);
      } else if (up > 0 && up >= left) {
        h = up;
        s = prevS[j];
        c = prevC[j];
      } else if (left > 0) {
        h = left;
        s = curS[j - 1];
        c = curC[j - 1];
      }
      curH[j] = h;
      curS[j] = s;
      curC[j] = c;
      if (h > best.score) best = { score: h, start: s, end: j - 1, matched: c };
    }
    let t;
    t = prevH; prevH = curH; curH = t;
    t = prevS; prevS = curS; curS = t;
    t = prevC; prevC = curC; curC = t;
  }
  return best.matched ? best : null;
}

function good(result, wanted) {
  return !!result && result.matched >= Math.min(3, wanted) && result.matched >= wanted * 0.4;
}

/** {head, tail} words for a link: the whole passage when short, else both ends. */
export function fingerprint(passage) {
  let list = words(stripMarkdown(passage));
  if (!list.length) return "";
  if (list.length <= FP_WORDS * 2 + 4) return joinWords(list);
  return joinWords(list.slice(0, FP_WORDS)) + ".." + joinWords(list.slice(-FP_WORDS));
}

/**
 * Where a passage lies in rendered ``text``: ``spec`` is a fingerprint from a link
 * ("first words..last words") or {passage: markdown}. Returns {start, end} character offsets
 * or null.
 */
export function findPassage(text, spec) {
  let tokens = tokenize(text);
  let head;
  let tail = null;
  if (typeof spec === "string") {
    // From a link anyone can write: no more words than a fingerprint holds, or the
    // alignment (words of spec times words of the section) holds the page for seconds.
    let most = FP_WORDS * 2 + 4;
    let cut = spec.indexOf("..");
    head = words((cut === -1 ? spec : spec.slice(0, cut)).slice(0, most * 64)).slice(0, most);
    if (cut !== -1) tail = words(spec.slice(cut + 2).slice(-most * 64)).slice(-most);
  } else {
    head = words(stripMarkdown(spec && spec.passage));
  }
  let first = align(head, tokens, 0);
  if (!good(first, head.length)) return null;
  let end = first.end;
  if (tail && tail.length) {
    let last = align(tail, tokens, first.start);
    if (good(last, tail.length) && last.end >= first.end) {
      // Of equally good places for the last words, align finds the first. Where they repeat
      // back to back (a passage ending in two lines of code with the same words), the passage
      // ends where the run does: a next place as good that starts in or right after this one.
      for (let k = 0; k < TAIL_REPEATS; k++) {
        let next = align(tail, tokens, last.start + 1);
        if (!next || next.score < last.score || next.start > last.end + 1) break;
        last = next;
      }
      end = last.end;
    }
  }
  return { start: tokens[first.start].s, end: tokens[end].e };
}
