/** Passage matching: where the words of a cited Markdown passage lie in the text a page renders.
 *
 * Pure functions (no DOM): tokenize (CJK characters are words of their own), stripMarkdown
 * (Markdown as the text a reader sees), align (Smith-Waterman over words), fingerprint (the
 * first and last words a link carries) and findPassage.
 */

import { entityAt, mathEnd } from "./inline.js";

const FP_WORDS = 12; // words kept from each end of a long passage in a link
const TAIL_REPEATS = 8; // at most this many back-to-back repeats of a link's last words are followed
const TAIL_PLACES = 16; // ... and, knowing the passage's length, this many places of its last words
// The punctuation before a passage's first word and after its last ("<arguments>", "is
// disabled)."): carried in its link and marked with it, where the page has it too.
// Chinese and Japanese ones too ("…最大32文字です。", "「設定」"), full-width forms included,
// and the markup a code example opens or ends with ("**bold**", "> quote", "`code`"), with
// the space French sets inside « » and before ? ! : ; (" »", "\u00a0!", "«\u202f"). A trail
// takes "(" too, and four marks, for a call's empty parentheses: the link of "lumen.serve()"
// had ended in ")" and that of "print(client.zones())." in "))." (three at most), which the
// page's "()" and "())." do not begin with, so the mark stopped at "serve" and "zones".
const LEAD = /^[([{<"'“‘«¿¡「『（【《〈［｛＜*`~>#_-]{1,3}(?:[ \u00a0\u202f](?=\S))?/u;
const TRAIL = /(?:[ \u00a0\u202f]?[()\]}>"'”’».,;:!?…。、，．！？：；」』）】》〉］｝＞*`~_]){1,4}$/u;
const SPACES = /[\u00a0\u202f]/g;
const CJK = /[\u2e80-\u2fdf\u3040-\u30ff\u3100-\u312f\u31a0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff65-\uff9f\u{20000}-\u{2fa1f}]/u;
const WORD = /[\p{L}\p{M}\p{N}]+|\uE000/gu;
// A formula, as one word: typeset math (MathJax, KaTeX) shows no TeX, so a passage's math span
// and the page's math element each read as this (highlight.js).
export const ATOM = "\uE000";
// Code spans (backtick runs), math openers, and the escapes that keep "\$" and "\\(" from opening math.
const VERBATIM = /`+|\\[\\$]|\\[([]|\$/g;

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
  return tokenize(text).map((t) => t.t);
}

function joinWords(list) {
  let s = "";
  for (let i = 0; i < list.length; i++) {
    if (i && !(CJK.test(list[i - 1]) && CJK.test(list[i]))) s += " ";
    s += list[i];
  }
  return s;
}

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
    .replace(/&#?\w{1,32};/g, (ref) => (entityAt(ref, 0) || { text: " " }).text) // as the answer shows them (inline.js)
    .replace(/\*\*|__|~~|==|\^\^|\*/g, "")
    .replace(/(^|[^\p{L}\p{N}])_+|_+(?=[^\p{L}\p{N}]|$)/gu, "$1")
    .replace(/\|/g, " ");
}

/** Inline Markdown to text; code spans and math are kept verbatim (they render as text), or
 * each math span is one ATOM with ``atoms`` (for matching: typeset math shows other text). */
function plainLine(s, atoms) {
  let out = "";
  let from = 0;
  let memo = {};
  let m;
  VERBATIM.lastIndex = 0;
  while ((m = VERBATIM.exec(s))) {
    let b = m.index;
    let run = m[0];
    let end;
    if (run[0] === "`") {
      let close = b + run.length;
      for (;;) {
        close = s.indexOf(run, close);
        if (close === -1 || s[close + run.length] !== "`") break;
        while (s[close] === "`") close++;
      }
      if (close === -1) continue; // no closing run: text
      out += plainInline(s.slice(from, b)) + s.slice(b + run.length, close);
      end = close + run.length;
    } else if (run.length > 1 && run[1] !== "(" && run[1] !== "[") {
      continue; // an escaped backslash or dollar
    } else if ((end = mathEnd(s, b, memo)) > 0) {
      out += plainInline(s.slice(from, b)) + (atoms ? ATOM : s.slice(b, end));
    } else {
      VERBATIM.lastIndex = b + 1;
      continue;
    }
    from = VERBATIM.lastIndex = end;
  }
  return out + plainInline(s.slice(from));
}

/** A Markdown passage as the text a reader sees once MkDocs has rendered it; each math span
 * one ATOM with ``atoms``. */
export function stripMarkdown(md, atoms) {
  let lines = String(md || "")
    .replace(/\r\n?/g, "\n")
    .replace(/<!--[\s\S]*?(?:-->|$)/g, " ")
    // What Logseq (and the vault's /view) hides: a block's id:: and collapsed:: lines, its drawers
    .replace(/^[ \t]*(?:(?:id|collapsed)::.*|:(?:LOGBOOK|PROPERTIES):[\s\S]*?\n[ \t]*:END:[ \t]*)$/gm, "")
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
    let d = /^\s*(\$\$|\\\[)/.exec(line);
    if (d) {
      // Display math over several lines: the lines up to its closing delimiter are one.
      let close = d[1] === "$$" ? "$$" : "\\]";
      for (let j = d[0].length; lines[k].indexOf(close, j) < 0 && k + 1 < lines.length; j = 0) line += "\n" + lines[++k];
    }
    let note = /^\s{0,3}\[\^[^\]]+\]:\s?(.*)$/.exec(line);
    if (note) {
      out.push(plainLine(note[1], atoms)); // a footnote's text is shown (at the page's end)
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
    out.push(plainLine(line, atoms));
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
  let shown = stripMarkdown(passage, true);
  let list = words(shown);
  if (!list.length) return "";
  let end = ends(shown);
  if (list.length <= FP_WORDS * 2 + 4) return end.lead + joinWords(list) + end.trail;
  // With the passage's length between its ends: where its last words also occur earlier
  // (a traceback whose last line repeats its first), the place that length reaches is its end.
  return end.lead + joinWords(list.slice(0, FP_WORDS)) + ".." + list.length + ".." + joinWords(list.slice(-FP_WORDS)) + end.trail;
}

/** The punctuation ``text`` opens and ends with ({lead, trail}: "" when none). */
function ends(text) {
  let t = String(text || "").trim();
  return { lead: (LEAD.exec(t) || [""])[0], trail: (TRAIL.exec(t) || [""])[0] };
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
  let length = 0; // the passage's words, when the link says
  let shown = typeof spec === "string" ? spec : stripMarkdown(spec && spec.passage, true);
  let end0 = ends(shown);
  if (typeof spec === "string") {
    // From a link anyone can write: no more words than a fingerprint holds, or the
    // alignment (words of spec times words of the section) holds the page for seconds.
    let most = FP_WORDS * 2 + 4;
    let cut = spec.indexOf("..");
    head = words((cut === -1 ? spec : spec.slice(0, cut)).slice(0, most * 64)).slice(0, most);
    if (cut !== -1) {
      let rest = spec.slice(cut + 2);
      let counted = /^(\d{1,6})\.\./.exec(rest); // "head..N..tail" (a link of an older widget has no N)
      if (counted) {
        length = Number(counted[1]);
        rest = rest.slice(counted[0].length);
      }
      tail = words(rest.slice(-most * 64)).slice(-most);
    }
  } else {
    head = words(shown);
  }
  let first = align(head, tokens, 0);
  if (!good(first, head.length)) return null;
  let end = first.end;
  if (tail && tail.length) {
    let last = align(tail, tokens, first.start);
    if (good(last, tail.length) && last.end >= first.end) {
      if (length) last = nearestPlace(tail, tokens, last, first.start + length - 1);
      else {
        // Of equally good places for the last words, align finds the first. Where they
        // repeat back to back (a passage ending in two lines of code with the same words),
        // the passage ends where the run does: a next place as good that starts in or right
        // after this one.
        for (let k = 0; k < TAIL_REPEATS; k++) {
          let next = align(tail, tokens, last.start + 1);
          if (!next || next.score < last.score || next.start > last.end + 1) break;
          last = next;
        }
      }
      end = last.end;
    }
  }
  return widened(text, tokens[first.start].s, tokens[end].e, end0);
}

/** Of the places where a passage's last words are as good as at ``found`` (the first), the
 * one ending nearest ``want``, the token its length reaches from its first word. */
function nearestPlace(tail, tokens, found, want) {
  let best = found;
  let last = found;
  for (let k = 0; k < TAIL_PLACES && last.end < want; k++) {
    let next = align(tail, tokens, last.start + 1);
    if (!next || next.score < found.score) break;
    if (Math.abs(next.end - want) < Math.abs(best.end - want)) best = next;
    last = next;
  }
  return best;
}

/** ``start``..``end`` of ``text`` with as much of the passage's own punctuation before its
 * first word and after its last (``ends``) as the page has there (any of its spaces for
 * one, never a space alone at the mark's edge). */
function widened(text, start, end, punct) {
  const same = (a, b) => a.replace(SPACES, " ") === b.replace(SPACES, " ");
  for (let k = punct.lead.length; k > 0; k--) {
    if (start >= k && /^\S/.test(punct.lead.slice(-k)) && same(text.slice(start - k, start), punct.lead.slice(-k))) {
      start -= k;
      break;
    }
  }
  for (let k = punct.trail.length; k > 0; k--) {
    if (/\S$/.test(punct.trail.slice(0, k)) && same(text.slice(end, end + k), punct.trail.slice(0, k))) {
      end += k;
      break;
    }
  }
  return { start: start, end: end };
}
