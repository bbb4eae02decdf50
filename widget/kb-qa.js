/*! kb-qa chat widget: grounded answers whose citations open and highlight the cited passage.
 *
 * Plain script, no build step, no dependencies, no requests except to the kb-qa API.
 *
 *   MkDocs: plugins: [search, kb-qa]   (injects this file with data-kb-qa-options="{json}")
 *   Any static site:
 *     <script src="/kb-qa/kb-qa.js" defer data-endpoint="https://docs-api.example.com"></script>
 *     (optional: data-title, data-placeholder, data-suggested="a|b", data-shortcut="mod+k",
 *      data-root="/docs/", data-site-url="https://docs.example.com/")
 *
 * Reading order: pure helpers (Markdown subset, SSE, citation links, passage matching; node tests
 * import them through module.exports) -> highlighting in the page -> the chat panel -> boot.
 * Model and document text only ever reach the page as text nodes: nothing here parses HTML from
 * the API.
 */
(function () {
  "use strict";

  var HL_PARAM = "kbqa-hl"; // ?kbqa-hl=<first words>..<last words> next to #anchor: shareable
  var FP_WORDS = 12; // words kept from each end of a long passage in the link
  var FADE_MS = 4000;
  var HISTORY_MESSAGES = 8;
  var HISTORY_CHARS = 12000;

  // ---------------------------------------------------------------- text and tokens

  var CJK = /[\u2e80-\u2fdf\u3040-\u30ff\u3100-\u312f\u31a0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u{20000}-\u{2fa1f}]/u;
  var WORD = /[\p{L}\p{M}\p{N}]+/gu;

  function norm(word) {
    return word.normalize("NFKC").toLowerCase();
  }

  /** Words of ``text`` with their offsets; each CJK character is a word of its own. */
  function tokenize(text) {
    var out = [];
    var m;
    text = String(text || "");
    WORD.lastIndex = 0;
    while ((m = WORD.exec(text))) {
      var word = m[0];
      var at = m.index;
      if (!CJK.test(word)) {
        out.push({ t: norm(word), s: at, e: at + word.length });
        continue;
      }
      var run = -1;
      var i = 0;
      for (var ch of word) {
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

  function words(text) {
    return tokenize(text).map(function (t) {
      return t.t;
    });
  }

  function joinWords(list) {
    var s = "";
    for (var i = 0; i < list.length; i++) {
      if (i && !(CJK.test(list[i - 1]) && CJK.test(list[i]))) s += " ";
      s += list[i];
    }
    return s;
  }

  var ENTITIES = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'", nbsp: " ", copy: "©", reg: "®", mdash: "—", ndash: "–", hellip: "…" };

  function plainInline(s) {
    return s
      .replace(/\\([\\`*_{}[\]()#+\-.!|<>~])/g, "$1")
      .replace(/!\[[^\]]*\](\([^)]*\)|\[[^\]]*\])/g, "") // images render no text
      .replace(/\[([^\]]*)\]\((?:[^()\s]|\([^)]*\))*(?:\s+"[^"]*")?\)/g, "$1") // links keep their text
      .replace(/\[([^\]]+)\]\[[^\]]*\]/g, "$1")
      .replace(/\[\^[^\]]+\]/g, "") // footnote references
      .replace(/<((?:https?|mailto):[^>\s]+)>/g, "$1")
      .replace(/<\/?[A-Za-z][^>]*>/g, " ") // raw HTML renders as elements, not as text
      .replace(/\{\s*:?\s*[#.][^}]*\}/g, "") // attribute lists
      .replace(/:[a-z][a-z0-9_+-]*:/g, " ") // emoji / icon shortcodes
      .replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, function (all, name) {
        if (name[0] === "#") {
          var code = name[1] === "x" || name[1] === "X" ? parseInt(name.slice(2), 16) : parseInt(name.slice(1), 10);
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
    var out = "";
    var i = 0;
    while (i < s.length) {
      var b = s.indexOf("`", i);
      if (b === -1) {
        out += plainInline(s.slice(i));
        break;
      }
      var run = /^`+/.exec(s.slice(b))[0];
      var close = b + run.length;
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
  function stripMarkdown(md) {
    var lines = String(md || "")
      .replace(/\r\n?/g, "\n")
      .replace(/<!--[\s\S]*?(?:-->|$)/g, " ")
      .split("\n");
    var out = [];
    var fence = null;
    for (var k = 0; k < lines.length; k++) {
      var line = lines[k];
      var f = /^\s*(`{3,}|~{3,})/.exec(line);
      if (fence) {
        if (f && f[1][0] === fence[0] && f[1].length >= fence.length && /^\s*[`~]+\s*$/.test(line)) fence = null;
        else out.push(line.replace(/^\s+/, ""));
        continue;
      }
      if (f) {
        fence = f[1];
        continue;
      }
      if (/^\s{0,3}\[[^\]]+\]:\s/.test(line) || /^\s*\*\[[^\]]+\]:/.test(line)) continue; // definitions
      if (/^\s*-{2,}8<-{2,}/.test(line)) continue; // snippet includes
      if (/^\s*\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)+\|?\s*$/.test(line)) continue; // table rule
      if (/^\s*([-*_])(\s*\1){2,}\s*$/.test(line)) continue; // horizontal rule
      var adm = /^\s*(?:!!!|\?\?\?\+?)\s*([\w-]+)?(?:[^"]*"([^"]*)")?/.exec(line);
      if (adm) {
        // Material shows the quoted title, or the type as the title when there is none.
        out.push(adm[2] != null ? adm[2] : adm[1] || "");
        continue;
      }
      var tab = /^\s*===\+?\s*"([^"]*)"/.exec(line);
      if (tab) {
        out.push(tab[1]);
        continue;
      }
      line = line
        .replace(/^\s*#{1,6}(\s+|$)/, "")
        .replace(/\s+#+\s*$/, "")
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
  function align(query, text, from) {
    var n = query.length;
    var m = text.length;
    from = from || 0;
    if (!n || from >= m) return null;
    var prevH = new Float64Array(m + 1);
    var prevS = new Int32Array(m + 1);
    var prevC = new Int32Array(m + 1);
    var curH = new Float64Array(m + 1);
    var curS = new Int32Array(m + 1);
    var curC = new Int32Array(m + 1);
    var best = { score: 0, start: -1, end: -1, matched: 0 };
    for (var i = 1; i <= n; i++) {
      var q = query[i - 1];
      curH[from] = 0;
      for (var j = from + 1; j <= m; j++) {
        var hit = q === text[j - 1].t;
        var diag = prevH[j - 1] + (hit ? 2 : -1);
        var up = prevH[j] - 1;
        var left = curH[j - 1] - 1;
        var h = 0;
        var s = j;
        var c = 0;
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
      var t;
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
  function fingerprint(passage) {
    var list = words(stripMarkdown(passage));
    if (!list.length) return "";
    if (list.length <= FP_WORDS * 2 + 4) return joinWords(list);
    return joinWords(list.slice(0, FP_WORDS)) + ".." + joinWords(list.slice(-FP_WORDS));
  }

  /**
   * Where a passage lies in rendered ``text``: ``spec`` is a fingerprint from a link
   * ("first words..last words") or {passage: markdown}. Returns {start, end} character offsets
   * or null.
   */
  function findPassage(text, spec) {
    var tokens = tokenize(text);
    var head;
    var tail = null;
    if (typeof spec === "string") {
      var cut = spec.indexOf("..");
      head = words(cut === -1 ? spec : spec.slice(0, cut));
      if (cut !== -1) tail = words(spec.slice(cut + 2));
    } else {
      head = words(stripMarkdown(spec && spec.passage));
    }
    var first = align(head, tokens, 0);
    if (!good(first, head.length)) return null;
    var end = first.end;
    if (tail && tail.length) {
      var last = align(tail, tokens, first.start);
      if (good(last, tail.length) && last.end >= first.end) end = last.end;
    }
    return { start: tokens[first.start].s, end: tokens[end].e };
  }

  // ---------------------------------------------------------------- citations and links

  /** The page URL of a citation: absolute, resolved against the site root; null if unsafe. */
  function citationUrl(citation, opts) {
    // `link` is relative to the site root, so it works wherever the site is served from.
    var raw = String((citation && (citation.link || citation.url)) || "").trim();
    var site = String(opts.siteUrl || "").replace(/\/?$/, "/");
    if (site !== "/") {
      var bare = function (u) {
        return u.replace(/^https?:/i, "");
      };
      if (bare(raw).indexOf(bare(site)) === 0) raw = bare(raw).slice(bare(site).length);
    }
    var url;
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
  function citationHref(citation, opts) {
    var url = citationUrl(citation, opts);
    if (!url) return null;
    var fp = fingerprint(citation.text);
    if (fp) url.searchParams.set(HL_PARAM, fp);
    return url.href;
  }

  /** Only http(s) and relative links survive; anything else (javascript:, data:) is text. */
  function safeHref(href, base) {
    var clean = String(href || "").replace(/[\u0000-\u0020\u007f-\u009f]/g, "");
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

  // ---------------------------------------------------------------- Server-Sent Events

  /** Complete events in ``buffer`` and the unfinished rest: {events: [{event, data}], rest}. */
  function parseSSE(buffer) {
    var events = [];
    var text = buffer.replace(/\r\n/g, "\n");
    var keep = "";
    if (text[text.length - 1] === "\r") {
      keep = "\r";
      text = text.slice(0, -1);
    }
    text = text.replace(/\r/g, "\n");
    var at;
    while ((at = text.indexOf("\n\n")) !== -1) {
      var block = text.slice(0, at);
      text = text.slice(at + 2);
      var name = "message";
      var data = [];
      block.split("\n").forEach(function (line) {
        if (!line || line[0] === ":") return;
        var colon = line.indexOf(":");
        var field = colon === -1 ? line : line.slice(0, colon);
        var value = colon === -1 ? "" : line.slice(colon + 1).replace(/^ /, "");
        if (field === "event") name = value;
        else if (field === "data") data.push(value);
      });
      if (data.length) events.push({ event: name, data: data.join("\n") });
    }
    return { events: events, rest: text + keep };
  }

  // ---------------------------------------------------------------- Markdown subset

  var FENCE = /^ {0,3}(`{3,}|~{3,})\s*([\w+#.-]*)/;
  var BULLET = /^(\s*)([-*+]|\d{1,9}[.)])\s+(.*)$/;
  var RULE = /^\s*\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$/;

  function startsBlock(line) {
    return FENCE.test(line) || /^\s{0,3}#{1,6}\s/.test(line) || /^\s{0,3}>/.test(line) || BULLET.test(line);
  }

  function indentOf(line) {
    return /^\s*/.exec(line)[0].replace(/\t/g, "    ").length;
  }

  function cells(line) {
    var parts = [];
    var cur = "";
    var code = false;
    var body = line.trim().replace(/^\|/, "").replace(/\|$/, "");
    for (var i = 0; i < body.length; i++) {
      var ch = body[i];
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

  /** Markdown -> block nodes: {type: p|h|code|ul|ol|quote|table|hr, ...}. Never HTML. */
  function parseBlocks(md) {
    var lines = String(md || "").replace(/\r\n?/g, "\n").split("\n");
    var blocks = [];
    var i = 0;
    while (i < lines.length) {
      var line = lines[i];
      if (!line.trim()) {
        i++;
        continue;
      }
      var f = FENCE.exec(line);
      if (f) {
        var body = [];
        var closed = false;
        var pad = indentOf(line);
        for (i++; i < lines.length; i++) {
          var c = /^\s*(`{3,}|~{3,})\s*$/.exec(lines[i]);
          if (c && c[1][0] === f[1][0] && c[1].length >= f[1].length) {
            closed = true;
            i++;
            break;
          }
          body.push(lines[i].slice(Math.min(pad, indentOf(lines[i]))));
        }
        blocks.push({ type: "code", lang: f[2], text: body.join("\n"), closed: closed });
        continue;
      }
      var h = /^\s{0,3}(#{1,6})\s+(.*?)(\s+#+)?\s*$/.exec(line);
      if (h) {
        blocks.push({ type: "h", level: h[1].length, text: h[2] });
        i++;
        continue;
      }
      if (/^\s{0,3}([-*_])(\s*\1){2,}\s*$/.test(line)) {
        blocks.push({ type: "hr" });
        i++;
        continue;
      }
      if (/^\s{0,3}>/.test(line)) {
        var quoted = [];
        while (i < lines.length && /^\s{0,3}>/.test(lines[i])) quoted.push(lines[i++].replace(/^\s{0,3}>\s?/, ""));
        blocks.push({ type: "quote", children: parseBlocks(quoted.join("\n")) });
        continue;
      }
      if (BULLET.test(line)) {
        i = parseList(lines, i, blocks);
        continue;
      }
      if (line.indexOf("|") !== -1 && i + 1 < lines.length && RULE.test(lines[i + 1]) && lines[i + 1].indexOf("-") !== -1) {
        var head = cells(line);
        var rows = [];
        for (i += 2; i < lines.length && lines[i].trim() && lines[i].indexOf("|") !== -1; i++) rows.push(cells(lines[i]));
        blocks.push({ type: "table", head: head, rows: rows });
        continue;
      }
      var para = [line.trim()];
      for (i++; i < lines.length && lines[i].trim() && !startsBlock(lines[i]); i++) para.push(lines[i].trim());
      blocks.push({ type: "p", text: para.join("\n") });
    }
    return blocks;
  }

  function parseList(lines, i, blocks) {
    var first = BULLET.exec(lines[i]);
    var base = indentOf(lines[i]);
    var ordered = /\d/.test(first[2]);
    var list = { type: ordered ? "ol" : "ul", start: ordered ? parseInt(first[2], 10) : 1, items: [] };
    while (i < lines.length) {
      var m = BULLET.exec(lines[i]);
      if (!m || indentOf(lines[i]) > base + 1 || /\d/.test(m[2]) !== ordered) break;
      var inner = indentOf(lines[i]) + m[2].length + 1;
      var content = [m[3]];
      for (i++; i < lines.length; i++) {
        var line = lines[i];
        if (!line.trim()) {
          var next = lines[i + 1];
          if (next !== undefined && next.trim() && indentOf(next) > base) {
            content.push("");
            continue;
          }
          break;
        }
        if (indentOf(line) > base) content.push(line.slice(Math.min(inner, indentOf(line))));
        else if (!startsBlock(line) && !BULLET.test(line)) content.push(line.trim());
        else break;
      }
      list.items.push(parseBlocks(content.join("\n")));
      while (i < lines.length && !lines[i].trim() && lines[i + 1] !== undefined && BULLET.test(lines[i + 1]) && indentOf(lines[i + 1]) <= base + 1) i++;
    }
    blocks.push(list);
    return i;
  }

  function closingRun(s, from, run) {
    for (var at = s.indexOf(run, from); at !== -1; at = s.indexOf(run, at + 1)) {
      if (s[at + run.length] !== "`" && s[at - 1] !== "`") return at;
    }
    return -1;
  }

  /** Inline Markdown -> nodes: text, code, strong, em, link, cite (a citation number). */
  function parseInline(s) {
    var out = [];
    var text = "";
    var flush = function () {
      if (text) out.push({ type: "text", text: text });
      text = "";
    };
    var i = 0;
    while (i < s.length) {
      var ch = s[i];
      var rest = s.slice(i);
      var m;
      if (ch === "\\" && /[\\`*_{}[\]()#+\-.!|<>~]/.test(s[i + 1] || "")) {
        text += s[i + 1];
        i += 2;
        continue;
      }
      if (ch === "`") {
        var run = /^`+/.exec(rest)[0];
        var close = closingRun(s, i + run.length, run);
        if (close !== -1) {
          flush();
          var code = s.slice(i + run.length, close);
          out.push({ type: "code", text: /^ .* $/.test(code) && code.trim() ? code.slice(1, -1) : code });
          i = close + run.length;
        } else {
          text += run;
          i += run.length;
        }
        continue;
      }
      if (ch === "[") {
        if ((m = /^\[(\d{1,3})\]/.exec(rest)) && rest[m[0].length] !== "(") {
          flush();
          out.push({ type: "cite", n: parseInt(m[1], 10) });
          i += m[0].length;
          continue;
        }
        if ((m = /^\[((?:[^\][]|\[[^\]]*\])*)\]\(\s*<?([^\s()<>]*(?:\([^\s()]*\)[^\s()<>]*)*)>?(?:\s+"[^"]*")?\s*\)/.exec(rest))) {
          flush();
          out.push({ type: "link", href: m[2], children: parseInline(m[1]) });
          i += m[0].length;
          continue;
        }
      }
      if (ch === "<" && (m = /^<(https?:\/\/[^\s<>]+)>/.exec(rest))) {
        flush();
        out.push({ type: "link", href: m[1], children: [{ type: "text", text: m[1] }] });
        i += m[0].length;
        continue;
      }
      if ((ch === "h" || ch === "H") && !/[\p{L}\p{N}]/u.test(s[i - 1] || "") && (m = /^https?:\/\/[^\s<>"'`]+/i.exec(rest))) {
        var url = m[0].replace(/[).,;:!?'"\]]+$/, "");
        flush();
        out.push({ type: "link", href: url, children: [{ type: "text", text: url }] });
        i += url.length;
        continue;
      }
      if ((ch === "*" || ch === "_") && s[i + 1] === ch && s[i + 2] && !/\s/.test(s[i + 2])) {
        var end = s.indexOf(ch + ch, i + 3);
        if (ch === "_" && end !== -1 && /[\p{L}\p{N}]/u.test(s[end + 2] || "")) end = -1; // snake__case
        if (end !== -1 && !/\s/.test(s[end - 1]) && !(ch === "_" && /[\p{L}\p{N}]/u.test(s[i - 1] || ""))) {
          flush();
          out.push({ type: "strong", children: parseInline(s.slice(i + 2, end)) });
          i = end + 2;
          continue;
        }
      }
      if ((ch === "*" || ch === "_") && s[i + 1] && !/\s/.test(s[i + 1]) && s[i + 1] !== ch && !(ch === "_" && /[\p{L}\p{N}]/u.test(s[i - 1] || ""))) {
        var stop = -1;
        for (var k = i + 1; k < s.length; k++) {
          if (s[k] === "`") break;
          if (s[k] === ch && s[k + 1] !== ch && s[k - 1] !== ch && !/\s/.test(s[k - 1]) && !(ch === "_" && /[\p{L}\p{N}]/u.test(s[k + 1] || ""))) {
            stop = k;
            break;
          }
        }
        if (stop !== -1) {
          flush();
          out.push({ type: "em", children: parseInline(s.slice(i + 1, stop)) });
          i = stop + 1;
          continue;
        }
      }
      text += ch;
      i++;
    }
    flush();
    return out;
  }

  var BLOCK_TAGS = { p: "p", ul: "ul", ol: "ol", quote: "blockquote", hr: "hr" };

  /**
   * Block nodes -> a DocumentFragment built with createElement / createTextNode only.
   * ``ctx.cite(n)`` makes a citation element; ``ctx.copy(text)`` a code block's copy button;
   * ``ctx.base`` resolves relative links.
   */
  function renderBlocks(blocks, doc, ctx) {
    var frag = doc.createDocumentFragment();
    blocks.forEach(function (b) {
      var el;
      if (b.type === "code") {
        el = doc.createElement("div");
        el.className = "kbq-code";
        var pre = doc.createElement("pre");
        var code = doc.createElement("code");
        if (b.lang) code.setAttribute("data-lang", b.lang);
        code.appendChild(doc.createTextNode(b.text));
        pre.appendChild(code);
        el.appendChild(pre);
        if (ctx && ctx.copy && b.closed) el.appendChild(ctx.copy(b.text));
      } else if (b.type === "h") {
        el = doc.createElement("h" + Math.min(6, Math.max(3, b.level + 2)));
        el.appendChild(renderInline(parseInline(b.text), doc, ctx));
      } else if (b.type === "ul" || b.type === "ol") {
        el = doc.createElement(b.type);
        if (b.type === "ol" && b.start !== 1) el.setAttribute("start", String(b.start));
        b.items.forEach(function (item) {
          var li = doc.createElement("li");
          // A tight item is one paragraph: show it without the paragraph's margins.
          if (item.length === 1 && item[0].type === "p") li.appendChild(renderInline(parseInline(item[0].text), doc, ctx));
          else li.appendChild(renderBlocks(item, doc, ctx));
          el.appendChild(li);
        });
      } else if (b.type === "quote") {
        el = doc.createElement("blockquote");
        el.appendChild(renderBlocks(b.children, doc, ctx));
      } else if (b.type === "table") {
        el = doc.createElement("div");
        el.className = "kbq-table";
        var table = doc.createElement("table");
        var thead = doc.createElement("thead");
        var tbody = doc.createElement("tbody");
        var row = function (list, tag, parent) {
          var tr = doc.createElement("tr");
          list.forEach(function (cell) {
            var td = doc.createElement(tag);
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
        if (b.type === "p") el.appendChild(renderInline(parseInline(b.text), doc, ctx));
      }
      frag.appendChild(el);
    });
    return frag;
  }

  function renderInline(nodes, doc, ctx) {
    var frag = doc.createDocumentFragment();
    nodes.forEach(function (n) {
      if (n.type === "text") {
        frag.appendChild(doc.createTextNode(n.text));
      } else if (n.type === "code") {
        var code = doc.createElement("code");
        code.appendChild(doc.createTextNode(n.text));
        frag.appendChild(code);
      } else if (n.type === "strong" || n.type === "em") {
        var el = doc.createElement(n.type);
        el.appendChild(renderInline(n.children, doc, ctx));
        frag.appendChild(el);
      } else if (n.type === "cite") {
        frag.appendChild(ctx && ctx.cite ? ctx.cite(n.n) : doc.createTextNode("[" + n.n + "]"));
      } else if (n.type === "link") {
        var href = safeHref(n.href, ctx && ctx.base);
        var inner = renderInline(n.children, doc, ctx);
        if (!href) {
          frag.appendChild(inner);
          return;
        }
        var a = doc.createElement("a");
        a.setAttribute("href", href);
        if (/^https?:/i.test(href) && !(ctx && ctx.origin && href.indexOf(ctx.origin + "/") === 0)) {
          a.setAttribute("target", "_blank");
          a.setAttribute("rel", "noopener noreferrer");
        }
        a.appendChild(inner);
        frag.appendChild(a);
      }
    });
    return frag;
  }

  function renderMarkdown(md, doc, ctx) {
    return renderBlocks(parseBlocks(md), doc, ctx);
  }

  // ---------------------------------------------------------------- keyboard shortcut

  /** "mod+k" -> {key, ctrl, meta, alt, shift}; "mod" is ⌘ on Apple systems, Ctrl elsewhere. */
  function parseShortcut(spec, apple) {
    var parts = String(spec || "mod+k").toLowerCase().split("+");
    var key = parts.pop() || "k";
    var mods = { ctrl: false, meta: false, alt: false, shift: false };
    parts.forEach(function (p) {
      if (p === "mod") mods[apple ? "meta" : "ctrl"] = true;
      else if (p in mods) mods[p] = true;
    });
    mods.key = key;
    return mods;
  }

  function matchesShortcut(ev, sc) {
    var key = (ev.key || "").toLowerCase();
    var code = ev.code || "";
    var same = key === sc.key || code === "Key" + sc.key.toUpperCase() || code === "Digit" + sc.key;
    var letter = /^[a-z0-9]$/.test(sc.key);
    return same && ev.ctrlKey === sc.ctrl && ev.metaKey === sc.meta && ev.altKey === sc.alt && (!letter || ev.shiftKey === sc.shift);
  }

  function shortcutLabel(sc, apple) {
    var out = [];
    if (sc.ctrl) out.push(apple ? "⌃" : "Ctrl");
    if (sc.alt) out.push(apple ? "⌥" : "Alt");
    if (sc.shift) out.push(apple ? "⇧" : "Shift");
    if (sc.meta) out.push(apple ? "⌘" : "Meta");
    out.push(sc.key.toUpperCase());
    return out.join(apple ? "" : "+");
  }

  function ariaShortcut(sc) {
    var out = [];
    if (sc.ctrl) out.push("Control");
    if (sc.alt) out.push("Alt");
    if (sc.shift) out.push("Shift");
    if (sc.meta) out.push("Meta");
    out.push(sc.key.toUpperCase());
    return out.join("+");
  }

  var pure = {
    HL_PARAM: HL_PARAM,
    tokenize: tokenize,
    stripMarkdown: stripMarkdown,
    align: align,
    fingerprint: fingerprint,
    findPassage: findPassage,
    citationUrl: citationUrl,
    citationHref: citationHref,
    safeHref: safeHref,
    parseSSE: parseSSE,
    parseBlocks: parseBlocks,
    parseInline: parseInline,
    renderMarkdown: renderMarkdown,
    parseShortcut: parseShortcut,
    matchesShortcut: matchesShortcut,
  };

  if (typeof module === "object" && module && module.exports) module.exports = pure;
  if (typeof window === "undefined" || typeof document === "undefined") return;
  if (window.KbQa && window.KbQa.mounted) return; // loaded once, even if a page includes it twice

  // ---------------------------------------------------------------- highlighting in the page

  var SKIP = ".headerlink, script, style, noscript, template, button, textarea, select, svg, .md-clipboard, .linenos, .linenodiv, .md-annotation__index, [data-kb-qa-host]";
  var BLOCKS = "p, li, dt, dd, td, th, pre, h1, h2, h3, h4, h5, h6, blockquote, figcaption, summary, caption, div, section, details, article";
  var highlightTimer = 0;

  function contentRoot() {
    return document.querySelector(".md-content__inner, article, main, [role=main]") || document.body;
  }

  /** The heading with ``anchor`` and its section: siblings up to the next heading as high. */
  function section(anchor) {
    var el = anchor ? document.getElementById(anchor) : null;
    if (!el) return { nodes: [contentRoot()], heading: null };
    var m = /^H([1-6])$/.exec(el.tagName);
    var level = m ? +m[1] : 7;
    var nodes = [el];
    for (var n = el.nextElementSibling; n; n = n.nextElementSibling) {
      var h = /^H([1-6])$/.exec(n.tagName);
      if (h && +h[1] <= level) break;
      nodes.push(n);
    }
    return { nodes: nodes, heading: m ? el : null };
  }

  function collectText(nodes, heading) {
    var segs = [];
    var text = "";
    var lastBlock = null;
    var headingEnd = 0;
    nodes.forEach(function (root) {
      var walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT, {
        acceptNode: function (node) {
          var parent = node.parentElement;
          return parent && !parent.closest(SKIP) ? NodeFilter.FILTER_ACCEPT : NodeFilter.FILTER_REJECT;
        },
      });
      for (var node = walker.nextNode(); node; node = walker.nextNode()) {
        var block = node.parentElement.closest(BLOCKS);
        if (block !== lastBlock) text += "\n";
        lastBlock = block;
        segs.push({ node: node, start: text.length, end: text.length + node.data.length });
        text += node.data;
        if (heading && heading.contains(node)) headingEnd = text.length;
      }
    });
    return { text: text, segs: segs, headingEnd: headingEnd };
  }

  function clearHighlights() {
    clearTimeout(highlightTimer);
    document.querySelectorAll("mark.kb-qa-highlight").forEach(function (mark) {
      var parent = mark.parentNode;
      while (mark.firstChild) parent.insertBefore(mark.firstChild, mark);
      parent.removeChild(mark);
      parent.normalize();
    });
  }

  function wrap(segs, start, end) {
    var marks = [];
    segs.forEach(function (seg) {
      if (seg.end <= start || seg.start >= end) return;
      var node = seg.node;
      var from = Math.max(start, seg.start) - seg.start;
      var to = Math.min(end, seg.end) - seg.start;
      if (!node.data.slice(from, to).trim()) return;
      if (from > 0) node = node.splitText(from);
      if (to - from < node.data.length) node.splitText(to - from);
      var mark = document.createElement("mark");
      mark.className = "kb-qa-highlight";
      node.parentNode.insertBefore(mark, node);
      mark.appendChild(node);
      marks.push(mark);
    });
    return marks;
  }

  function reveal(el) {
    // Open collapsed admonitions and select the content tab that holds the passage.
    for (var d = el.closest("details"); d; d = d.parentElement && d.parentElement.closest("details")) d.open = true;
    var block = el.closest(".tabbed-block");
    if (block && block.parentElement) {
      var index = Array.prototype.indexOf.call(block.parentElement.children, block);
      var set = block.closest(".tabbed-set");
      var input = set && set.querySelectorAll(":scope > input")[index];
      if (input) input.checked = true;
    }
  }

  /** Highlight the passage ``spec`` (fingerprint or {passage}) in the section of ``anchor``. */
  function highlight(anchor, spec, smooth) {
    clearHighlights();
    var sec = section(anchor);
    var col = collectText(sec.nodes, sec.heading);
    var span = findPassage(col.text, spec);
    if (span && sec.heading && span.start < col.headingEnd && span.end > col.headingEnd) {
      // The passage starts with its own heading: mark the text under it, not the title.
      var body = /\S/.exec(col.text.slice(col.headingEnd, span.end));
      if (body) span.start = col.headingEnd + body.index;
    }
    var marks = span ? wrap(col.segs, span.start, span.end) : [];
    if (!marks.length && sec.heading) marks = wrap(col.segs, 0, col.headingEnd || col.text.length);
    if (!marks.length) return [];
    marks.forEach(reveal);
    scrollToMarks(marks, smooth);
    highlightTimer = setTimeout(function () {
      marks.forEach(function (mark) {
        mark.classList.add("kb-qa-highlight--faded");
      });
    }, FADE_MS);
    return marks;
  }

  /** Centre the passage in the window, or show its start below the header when it is tall. */
  function scrollToMarks(marks, smooth) {
    var reduce = window.matchMedia && matchMedia("(prefers-reduced-motion: reduce)").matches;
    var behavior = smooth && !reduce ? "smooth" : "auto";
    var doc = document.scrollingElement || document.documentElement;
    if (doc.scrollHeight <= window.innerHeight) {
      marks[0].scrollIntoView({ block: "center", behavior: behavior }); // an inner scroller
      return;
    }
    var top = Infinity;
    var bottom = -Infinity;
    marks.forEach(function (m) {
      var r = m.getBoundingClientRect();
      top = Math.min(top, r.top);
      bottom = Math.max(bottom, r.bottom);
    });
    var header = document.querySelector(".md-header, header");
    var offset = (header && getComputedStyle(header).position !== "static" ? header.getBoundingClientRect().bottom : 0) + 16;
    var room = window.innerHeight - offset;
    var y = bottom - top <= room ? top - offset - (room - (bottom - top)) / 2 : top - offset;
    window.scrollTo({ top: Math.max(0, window.scrollY + y), behavior: behavior });
  }

  /** True when the open panel hides part of the highlighted passage. */
  function panelCovers(marks) {
    if (panel.hidden || !marks.length) return false;
    var p = panel.getBoundingClientRect();
    return marks.some(function (m) {
      var r = m.getBoundingClientRect();
      return r.right > p.left && r.left < p.right;
    });
  }

  function anchorOf(url) {
    try {
      return decodeURIComponent(url.hash.slice(1));
    } catch (e) {
      return url.hash.slice(1);
    }
  }

  /** Per page: highlight the passage named in the URL (after Material scrolled to #anchor). */
  function onPage() {
    var url = new URL(location.href);
    var spec = url.searchParams.get(HL_PARAM);
    if (!spec) return;
    setTimeout(function () {
      showPassage(anchorOf(url), spec, false);
    }, 30);
  }

  // ---------------------------------------------------------------- options

  var script =
    document.currentScript ||
    document.querySelector("script[data-kb-qa-options]") ||
    document.querySelector('script[src*="kb-qa.js"]');

  function readOptions() {
    var opts = {};
    var data = script && script.getAttribute("data-kb-qa-options");
    if (data) {
      try {
        opts = JSON.parse(data) || {};
      } catch (e) {
        opts = {};
      }
    } else if (script) {
      var d = script.dataset;
      opts = {
        endpoint: d.endpoint,
        title: d.title,
        placeholder: d.placeholder,
        suggested: d.suggested ? d.suggested.split("|").filter(Boolean) : [],
        shortcut: d.shortcut,
        root: d.root,
        site_url: d.siteUrl,
      };
    }
    var src = script && script.src ? script.src : location.href;
    return {
      endpoint: String(opts.endpoint || "").replace(/\/+$/, ""),
      title: opts.title || "Ask the docs",
      placeholder: opts.placeholder || "Ask a question about these docs…",
      suggested: Array.isArray(opts.suggested) ? opts.suggested.slice(0, 6).map(String) : [],
      shortcut: opts.shortcut || "mod+k",
      // Resolved once: after instant navigation the page URL no longer matches this script tag.
      root: new URL(opts.root != null ? opts.root : "/", location.href).href,
      siteUrl: opts.site_url || "",
      css: src.replace(/\.js(\?.*)?$/, ".css$1"),
    };
  }

  var options = readOptions();
  var apple = /Mac|iPhone|iPad|iPod/.test((navigator.userAgentData && navigator.userAgentData.platform) || navigator.platform || "");
  var shortcut = parseShortcut(options.shortcut, apple);
  var storeKey = "kb-qa:v1:" + (options.endpoint || location.origin);

  // ---------------------------------------------------------------- state

  var state = { open: false, messages: [], draft: "", highlighted: 0 };
  try {
    var saved = JSON.parse(sessionStorage.getItem(storeKey) || "null");
    if (saved && Array.isArray(saved.messages)) {
      state.open = !!saved.open;
      state.draft = String(saved.draft || "");
      state.messages = saved.messages.map(function (m) {
        // An answer still streaming when the page was left cannot resume.
        if (m.role === "assistant" && !m.done && !m.error && !m.stopped) m.error = "The answer was interrupted when the page changed. Ask again to get a full answer.";
        return m;
      });
    }
  } catch (e) {
    /* storage blocked or corrupt: start empty */
  }

  var saveTimer = 0;
  function save(now) {
    clearTimeout(saveTimer);
    var write = function () {
      try {
        var messages = state.messages.map(function (m) {
          var copy = {};
          for (var k in m) if (k[0] !== "_") copy[k] = m[k];
          return copy;
        });
        sessionStorage.setItem(storeKey, JSON.stringify({ open: state.open, draft: state.draft, messages: messages.slice(-40) }));
      } catch (e) {
        /* quota or privacy mode: the conversation just does not survive a reload */
      }
    };
    if (now) write();
    else saveTimer = setTimeout(write, 300);
  }

  // ---------------------------------------------------------------- DOM helpers

  var ICONS = {
    chat: "M12 3C6.5 3 2 6.58 2 11a7.2 7.2 0 0 0 2.87 5.6c0 .6-.42 2.17-2.87 4.4 2.33-.1 4.46-1.03 6.16-2.44A11 11 0 0 0 12 19c5.5 0 10-3.58 10-8s-4.5-8-10-8m1 13h-2v-2h2zm1.07-5.25-.9.92C12.45 12.4 12 13 12 14.5h-2V14c0-1.1.45-2.1 1.17-2.83l1.24-1.26A1.97 1.97 0 0 0 13 8.5a2 2 0 0 0-4 0H7a4 4 0 0 1 8 0c0 .88-.36 1.68-.93 2.25",
    close: "M19 6.41 17.59 5 12 10.59 6.41 5 5 6.41 10.59 12 5 17.59 6.41 19 12 13.41 17.59 19 19 17.59 13.41 12z",
    send: "M2.01 21 23 12 2.01 3 2 10l15 2-15 2z",
    stop: "M6 6h12v12H6z",
    copy: "M19 21H8V7h11m0-2H8a2 2 0 0 0-2 2v14a2 2 0 0 0 2 2h11a2 2 0 0 0 2-2V7a2 2 0 0 0-2-2m-3-4H4a2 2 0 0 0-2 2v14h2V3h12z",
    check: "M21 7 9 19l-5.5-5.5 1.41-1.41L9 16.17 19.59 5.59z",
    up: "M5 9v12H1V9zm4 12a2 2 0 0 1-2-2V9c0-.55.22-1.05.59-1.41L14.17 1l1.06 1.06c.27.27.44.64.44 1.05l-.03.32L14.69 8H21a2 2 0 0 1 2 2v2c0 .26-.05.5-.14.73l-3.02 7.05C19.54 20.5 18.83 21 18 21zm0-2h9.03L21 12v-2h-8.79l1.13-5.32L9 9.03z",
    down: "M19 15V3h4v12zM15 3a2 2 0 0 1 2 2v10c0 .55-.22 1.05-.59 1.41L9.83 23l-1.06-1.06c-.27-.27-.44-.64-.44-1.06l.03-.31.95-4.57H3a2 2 0 0 1-2-2v-2c0-.26.05-.5.14-.73l3.02-7.05C4.46 3.5 5.17 3 6 3zm0 2H5.97L3 12v2h8.78l-1.13 5.32L15 14.97z",
    reset: "M17.65 6.35A7.96 7.96 0 0 0 12 4a8 8 0 1 0 7.73 10h-2.08A6 6 0 1 1 12 6c1.66 0 3.14.69 4.22 1.78L13 11h7V4z",
  };

  function el(tag, attrs, children) {
    var node = document.createElement(tag);
    if (attrs) {
      for (var k in attrs) {
        if (attrs[k] == null || attrs[k] === false) continue;
        if (k === "text") node.textContent = attrs[k];
        else if (k === "class") node.className = attrs[k];
        else node.setAttribute(k, attrs[k] === true ? "" : attrs[k]);
      }
    }
    (children || []).forEach(function (c) {
      if (c) node.appendChild(typeof c === "string" ? document.createTextNode(c) : c);
    });
    return node;
  }

  function icon(name) {
    var ns = "http://www.w3.org/2000/svg";
    var svg = document.createElementNS(ns, "svg");
    svg.setAttribute("viewBox", "0 0 24 24");
    svg.setAttribute("aria-hidden", "true");
    svg.setAttribute("focusable", "false");
    var path = document.createElementNS(ns, "path");
    path.setAttribute("d", ICONS[name]);
    svg.appendChild(path);
    return svg;
  }

  function iconButton(name, label, cls) {
    return el("button", { type: "button", class: "kbq-icon " + (cls || ""), "aria-label": label, title: label }, [icon(name)]);
  }

  function copyText(text) {
    if (navigator.clipboard && window.isSecureContext) return navigator.clipboard.writeText(text);
    return new Promise(function (resolve, reject) {
      var area = document.createElement("textarea");
      area.value = text;
      area.setAttribute("readonly", "");
      area.style.cssText = "position:fixed;top:-1000px;opacity:0";
      document.body.appendChild(area);
      area.select();
      var ok = false;
      try {
        ok = document.execCommand("copy");
      } catch (e) {
        ok = false;
      }
      area.remove();
      if (ok) resolve();
      else reject(new Error("copy failed"));
    });
  }

  function flashDone(button, label) {
    var old = button.getAttribute("aria-label");
    button.replaceChild(icon("check"), button.firstChild);
    button.setAttribute("aria-label", label);
    button.title = label;
    setTimeout(function () {
      button.replaceChild(icon("copy"), button.firstChild);
      button.setAttribute("aria-label", old);
      button.title = old;
    }, 1500);
  }

  // ---------------------------------------------------------------- the panel

  var host = el("div", { id: "kb-qa", "data-kb-qa-host": "" });
  var shadow = host.attachShadow({ mode: "open" });
  var ids = { panel: "kbq-panel", title: "kbq-title", input: "kbq-input", tip: "kbq-tip" };
  var keys = shortcutLabel(shortcut, apple);

  var styleLink = el("link", { rel: "stylesheet", href: options.css });
  var launcher = el("button", {
    type: "button",
    class: "kbq-launcher",
    "aria-haspopup": "dialog",
    "aria-expanded": "false",
    "aria-controls": ids.panel,
    "aria-keyshortcuts": ariaShortcut(shortcut),
    "aria-label": options.title + " (" + keys + ")",
    title: options.title + " (" + keys + ")",
  }, [icon("chat"), el("span", { class: "kbq-launcher-label", text: options.title })]);

  var newButton = iconButton("reset", "New conversation");
  var closeButton = iconButton("close", "Close");
  var log = el("div", { class: "kbq-log", role: "log", "aria-label": "Conversation", tabindex: "-1" });
  var input = el("textarea", { id: ids.input, class: "kbq-input", rows: "1", placeholder: options.placeholder, "aria-label": "Your question", maxlength: "2000", enterkeyhint: "send" });
  var sendButton = el("button", { type: "submit", class: "kbq-send", "aria-label": "Send question", title: "Send" }, [icon("send")]);
  var form = el("form", { class: "kbq-form" }, [input, sendButton]);
  var panel = el("div", { id: ids.panel, class: "kbq-panel", role: "dialog", "aria-modal": "true", "aria-labelledby": ids.title, hidden: true }, [
    el("div", { class: "kbq-head" }, [el("h2", { id: ids.title, class: "kbq-title", text: options.title }), newButton, closeButton]),
    log,
    form,
    el("p", { class: "kbq-foot", text: "Answers come from these docs and can be wrong: check the sources. " + keys + " opens, Esc closes." }),
  ]);
  var tip = el("div", { id: ids.tip, class: "kbq-tip", role: "tooltip", hidden: true });
  var frame = el("div", { class: "kbq", style: "visibility:hidden" }, [launcher, panel, tip]);
  styleLink.addEventListener("load", function () {
    frame.removeAttribute("style");
  });
  styleLink.addEventListener("error", function () {
    frame.removeAttribute("style");
  });
  shadow.appendChild(styleLink);
  shadow.appendChild(frame);

  var controller = null; // AbortController of the answer streaming now
  var lastFocus = null;

  function linkOptions() {
    return { root: options.root, siteUrl: options.siteUrl };
  }

  function setOpen(open, focusInput) {
    if (state.open === open && !panel.hidden === open) return;
    state.open = open;
    panel.hidden = !open;
    launcher.hidden = open;
    launcher.setAttribute("aria-expanded", String(open));
    hideTip();
    if (open) {
      var active = document.activeElement;
      if (active && active !== host && active !== document.body) lastFocus = active;
      renderAll();
      autosize();
      if (focusInput !== false) input.focus(); // at once: the next keystroke belongs here
    } else {
      flushFeedback();
      if (focusInput !== false) (lastFocus && document.contains(lastFocus) ? lastFocus : launcher).focus({ preventScroll: true });
      lastFocus = null;
    }
    save();
  }

  function focusables() {
    return Array.prototype.filter.call(panel.querySelectorAll("button, [href], textarea, input, [tabindex]:not([tabindex='-1'])"), function (n) {
      return !n.disabled && n.getClientRects().length > 0;
    });
  }

  // Keystrokes typed in the widget stay in it: Material (and other sites) bind single keys such
  // as "s", "/", "f", "n" and "p" on window and would see them, since document.activeElement is
  // the shadow host, not our textarea.
  ["keydown", "keyup", "keypress"].forEach(function (type) {
    host.addEventListener(type, function (ev) {
      ev.stopPropagation();
    });
  });

  frame.addEventListener("keydown", function (ev) {
    if (ev.key === "Escape") {
      ev.preventDefault();
      if (!tip.hidden) hideTip();
      else setOpen(false);
      return;
    }
    if (matchesShortcut(ev, shortcut)) {
      ev.preventDefault();
      setOpen(!state.open);
      return;
    }
    if (ev.key === "Tab" && state.open) {
      var list = focusables();
      if (!list.length) return;
      var active = shadow.activeElement;
      var at = list.indexOf(active);
      if (ev.shiftKey && (at <= 0)) {
        ev.preventDefault();
        list[list.length - 1].focus();
      } else if (!ev.shiftKey && (at === list.length - 1 || at === -1)) {
        ev.preventDefault();
        list[0].focus();
      }
    }
  });

  window.addEventListener("keydown", function (ev) {
    // A site that handles the same keys first (calls preventDefault) keeps them.
    if (ev.defaultPrevented || !matchesShortcut(ev, shortcut)) return;
    if (!(shortcut.ctrl || shortcut.meta || shortcut.alt)) {
      var t = ev.target;
      if (t && (t.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(t.tagName))) return;
    }
    ev.preventDefault();
    setOpen(!state.open);
  });

  launcher.addEventListener("click", function () {
    setOpen(true);
  });
  closeButton.addEventListener("click", function () {
    setOpen(false);
  });
  newButton.addEventListener("click", function () {
    if (controller) controller.abort();
    flushFeedback();
    state.messages = [];
    renderAll();
    save(true);
    input.focus();
  });

  input.value = state.draft;
  input.addEventListener("input", function () {
    state.draft = input.value;
    autosize();
    save();
  });
  input.addEventListener("keydown", function (ev) {
    if (ev.key === "Enter" && !ev.shiftKey && !ev.isComposing && ev.keyCode !== 229) {
      ev.preventDefault();
      submit();
    }
  });
  form.addEventListener("submit", function (ev) {
    ev.preventDefault();
    if (controller) controller.abort();
    else submit();
  });

  function autosize() {
    input.style.height = "auto";
    if (input.scrollHeight) input.style.height = Math.min(input.scrollHeight, 160) + "px";
  }

  function setBusy(busy) {
    sendButton.replaceChild(icon(busy ? "stop" : "send"), sendButton.firstChild);
    sendButton.setAttribute("aria-label", busy ? "Stop answering" : "Send question");
    sendButton.title = busy ? "Stop" : "Send";
    sendButton.classList.toggle("kbq-busy", busy);
  }

  // ---------------------------------------------------------------- rendering messages

  function renderAll() {
    log.textContent = "";
    if (!state.messages.length) {
      var empty = el("div", { class: "kbq-empty" }, [el("p", { text: "Ask anything about these docs. Every answer cites the passages it comes from: click a number to open and highlight it." })]);
      if (options.suggested.length) {
        var list = el("ul", { class: "kbq-suggest", "aria-label": "Suggested questions" });
        options.suggested.forEach(function (q) {
          var b = el("button", { type: "button", class: "kbq-chip", text: q });
          b.addEventListener("click", function () {
            input.value = q;
            submit();
          });
          list.appendChild(el("li", null, [b]));
        });
        empty.appendChild(list);
      }
      log.appendChild(empty);
      return;
    }
    state.messages.forEach(function (m) {
      m._node = null;
      log.appendChild(renderMessage(m));
    });
    log.scrollTop = log.scrollHeight;
  }

  function renderMessage(m) {
    if (m.role === "user") {
      m._node = el("div", { class: "kbq-msg kbq-user" }, [el("div", { class: "kbq-bubble", text: m.text })]);
      return m._node;
    }
    if (!m._node) {
      m._node = el("div", { class: "kbq-msg kbq-bot" });
      m._status = el("p", { class: "kbq-status", role: "status" });
      m._answer = el("div", { class: "kbq-answer" });
      m._extra = el("div", { class: "kbq-extra" });
      m._node.appendChild(m._status);
      m._node.appendChild(m._answer);
      m._node.appendChild(m._extra);
    }
    var streaming = !m.done && !m.error && !m.stopped;
    m._node.setAttribute("aria-busy", String(streaming));
    // Status line
    var st = streaming ? m.status : null;
    m._status.hidden = !st;
    if (st) {
      m._status.setAttribute("data-stage", st.stage || "");
      m._status.textContent = "";
      m._status.appendChild(el("span", { class: "kbq-spin", "aria-hidden": "true" }));
      m._status.appendChild(document.createTextNode((st.message || "").replace(/(…|\.\.\.)?$/, st.message ? "…" : "")));
    }
    // Answer text
    var byNumber = {};
    (m.citations || []).forEach(function (c) {
      byNumber[c.number] = c;
    });
    m._answer.textContent = "";
    m._answer.appendChild(
      renderMarkdown(m.text || "", document, {
        base: options.root,
        origin: location.origin,
        cite: function (n) {
          return citeChip(n, byNumber[n]);
        },
        copy: codeCopyButton,
      })
    );
    if (streaming && m.text) m._answer.appendChild(el("span", { class: "kbq-caret", "aria-hidden": "true" }));
    // Sources, errors, actions
    m._extra.textContent = "";
    if (m.done && !m.text) m._extra.appendChild(el("p", { class: "kbq-note", text: "No answer was returned." }));
    if (m.stopped) m._extra.appendChild(el("p", { class: "kbq-note", text: "Stopped." }));
    if (m.error) m._extra.appendChild(el("p", { class: "kbq-error", role: "alert", text: m.error }));
    if (m.citations && m.citations.length) m._extra.appendChild(sourcesList(m.citations));
    if (m.done && m.text) m._extra.appendChild(actions(m));
    return m._node;
  }

  function updateMessage(m) {
    var stick = log.scrollHeight - log.scrollTop - log.clientHeight < 48;
    if (!m._node || !m._node.parentNode) renderAll();
    else renderMessage(m);
    if (stick) log.scrollTop = log.scrollHeight;
  }

  function headingPath(c) {
    return (c.heading_path && c.heading_path.length ? c.heading_path : [c.path || c.url || "Source"]).join(" › ");
  }

  function citeChip(n, c) {
    var href = c ? citationHref(c, linkOptions()) : null;
    var chip = el(href ? "a" : "span", {
      class: "kbq-cite",
      href: href,
      "data-n": String(n),
      "aria-label": c ? "Source " + n + ": " + headingPath(c) : "Source " + n,
      "aria-describedby": c ? ids.tip : null,
      tabindex: href ? null : "-1",
    }, [String(n)]);
    if (c) {
      chip._citation = c;
      chip._href = href;
    }
    return el("sup", { class: "kbq-sup" }, [chip]);
  }

  function sourcesList(citations) {
    var list = el("ol", { class: "kbq-sources", "aria-label": "Sources" });
    citations.forEach(function (c) {
      var href = citationHref(c, linkOptions());
      var link = el(href ? "a" : "span", { class: "kbq-source", href: href }, [
        el("span", { class: "kbq-source-n", text: String(c.number) }),
        el("span", { class: "kbq-source-t", text: headingPath(c) }),
      ]);
      link._citation = c;
      link._href = href;
      list.appendChild(el("li", null, [link]));
    });
    return list;
  }

  function codeCopyButton(text) {
    var b = iconButton("copy", "Copy code", "kbq-copy-code");
    b.addEventListener("click", function () {
      copyText(text).then(function () {
        flashDone(b, "Copied");
      }, function () {});
    });
    return b;
  }

  function answerAsText(m) {
    var out = m.text;
    if (m.citations && m.citations.length) {
      out += "\n\nSources:\n" + m.citations.map(function (c) {
        return "[" + c.number + "] " + headingPath(c) + " — " + (citationHref(c, linkOptions()) || c.url);
      }).join("\n");
    }
    return out;
  }

  function actions(m) {
    var row = el("div", { class: "kbq-actions" });
    var copy = iconButton("copy", "Copy answer");
    copy.addEventListener("click", function () {
      copyText(answerAsText(m)).then(function () {
        flashDone(copy, "Copied");
      }, function () {});
    });
    row.appendChild(copy);
    if (m.feedbackSent) {
      row.appendChild(el("span", { class: "kbq-note", text: "Thanks for the feedback." }));
      return row;
    }
    ["up", "down"].forEach(function (rating) {
      var b = iconButton(rating, rating === "up" ? "Helpful" : "Not helpful", "kbq-rate");
      b.setAttribute("aria-pressed", String(m.rating === rating));
      b.addEventListener("click", function () {
        m.rating = rating;
        save();
        renderMessage(m);
        var box = m._node.querySelector(".kbq-reason input");
        if (box) box.focus();
      });
      row.appendChild(b);
    });
    var wrapRow = el("div", null, [row]);
    if (m.rating) {
      var reason = el("input", { type: "text", maxlength: "1000", "aria-label": "Reason (optional)", placeholder: m.rating === "up" ? "What helped? (optional)" : "What was wrong or missing? (optional)" });
      var reasonForm = el("form", { class: "kbq-reason" }, [reason, el("button", { type: "submit", class: "kbq-small", text: "Send" })]);
      reasonForm.addEventListener("submit", function (ev) {
        ev.preventDefault();
        sendFeedback(m, reason.value.trim());
        renderMessage(m);
        input.focus();
      });
      wrapRow.appendChild(reasonForm);
    }
    return wrapRow;
  }

  // ---------------------------------------------------------------- feedback

  function questionOf(m) {
    var at = state.messages.indexOf(m);
    for (var i = at - 1; i >= 0; i--) if (state.messages[i].role === "user") return state.messages[i].text;
    return "";
  }

  function sendFeedback(m, reason) {
    if (!m.rating || m.feedbackSent) return;
    m.feedbackSent = true;
    save();
    var body = { question: questionOf(m), answer: m.text, citations: m.citations || [], rating: m.rating };
    if (reason) body.reason = reason;
    try {
      fetch(apiUrl("/api/feedback"), {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify(body),
        keepalive: true,
        credentials: "omit",
      }).catch(function () {});
    } catch (e) {
      /* feedback is best effort */
    }
  }

  function flushFeedback() {
    // A thumb pressed but no reason sent yet still counts.
    state.messages.forEach(function (m) {
      if (m.rating && !m.feedbackSent) sendFeedback(m, "");
    });
  }

  // ---------------------------------------------------------------- tooltip

  var tipFor = null;
  var tipTimer = 0;

  function showTip(target) {
    var c = target._citation;
    if (!c) return;
    clearTimeout(tipTimer);
    tipFor = target;
    tip.textContent = "";
    tip.appendChild(el("p", { class: "kbq-tip-path", text: headingPath(c) }));
    var passage = preview(c);
    if (passage.length > 420) passage = passage.slice(0, 420).replace(/\s+\S*$/, "") + " …";
    if (passage) tip.appendChild(el("p", { class: "kbq-tip-text", text: passage }));
    tip.appendChild(el("p", { class: "kbq-tip-hint", text: "Open the page with this passage highlighted" }));
    tip.hidden = false;
    var r = target.getBoundingClientRect();
    var w = Math.min(360, window.innerWidth - 16);
    tip.style.width = w + "px";
    var left = Math.max(8, Math.min(r.left + r.width / 2 - w / 2, window.innerWidth - w - 8));
    var h = tip.offsetHeight;
    var top = r.top - h - 8 >= 8 ? r.top - h - 8 : Math.min(r.bottom + 8, window.innerHeight - h - 8);
    tip.style.left = left + "px";
    tip.style.top = Math.max(8, top) + "px";
  }

  /** The passage as readable text: wrapped lines joined, tables and lists kept as lines. */
  function preview(c) {
    var blocks = String(c.text || "").replace(/\r\n?/g, "\n").split(/\n\s*\n/);
    var heading = c.heading_path && c.heading_path[c.heading_path.length - 1];
    var out = [];
    blocks.forEach(function (block, i) {
      var text = stripMarkdown(block);
      if (!text || i === 0 && /^\s*#/.test(block) && text === heading) return; // its own title
      out.push(/^\s*(\||[-*+]\s|\d{1,9}[.)]\s|```|~~~)/m.test(block) ? text : text.replace(/\s*\n\s*/g, " "));
    });
    return out.join("\n");
  }

  function hideTip() {
    clearTimeout(tipTimer);
    tip.hidden = true;
    tipFor = null;
  }

  function sourceTarget(ev) {
    var t = ev.target && ev.target.closest ? ev.target.closest(".kbq-cite, .kbq-source") : null;
    return t && t._citation ? t : null;
  }

  log.addEventListener("mouseover", function (ev) {
    var t = sourceTarget(ev);
    if (t && t !== tipFor) showTip(t);
  });
  log.addEventListener("mouseout", function (ev) {
    if (sourceTarget(ev) && !(ev.relatedTarget && tip.contains(ev.relatedTarget))) {
      tipTimer = setTimeout(hideTip, 150);
    }
  });
  tip.addEventListener("mouseleave", function () {
    tipTimer = setTimeout(hideTip, 150);
  });
  tip.addEventListener("mouseenter", function () {
    clearTimeout(tipTimer);
  });
  log.addEventListener("focusin", function (ev) {
    var t = sourceTarget(ev);
    if (t) showTip(t);
  });
  log.addEventListener("focusout", function (ev) {
    if (sourceTarget(ev)) hideTip();
  });
  log.addEventListener("scroll", hideTip, { passive: true });

  // ---------------------------------------------------------------- opening a citation

  log.addEventListener("click", function (ev) {
    var t = sourceTarget(ev);
    if (!t || !t._href || ev.button !== 0 || ev.metaKey || ev.ctrlKey || ev.shiftKey || ev.altKey) return;
    ev.preventDefault();
    hideTip();
    openCitation(t._href);
  });

  function showPassage(anchor, spec, smooth) {
    var marks = highlight(anchor, spec, smooth);
    state.highlighted = marks.length;
    // The reader came to check the passage: get the panel out of its way (it keeps the
    // conversation; the shortcut or the button brings it back).
    if (panelCovers(marks)) setOpen(false, false);
  }

  function openCitation(href) {
    var url = new URL(href);
    var spec = url.searchParams.get(HL_PARAM);
    if (url.origin === location.origin && url.pathname === location.pathname) {
      history.pushState(null, "", url.href);
      showPassage(anchorOf(url), spec, true);
      return;
    }
    save(true);
    if (url.origin === location.origin && window.document$ && document.querySelector("[data-md-component=container]")) {
      // Material's instant navigation handles clicks on light-DOM links inside <body>.
      var a = el("a", { href: url.href, hidden: true });
      document.body.appendChild(a);
      a.click();
      a.remove();
      return;
    }
    location.href = url.href;
  }

  // ---------------------------------------------------------------- asking

  function apiUrl(path) {
    return (options.endpoint || location.origin) + path;
  }

  function historyFor(before) {
    var turns = [];
    var chars = 0;
    for (var i = before - 1; i >= 0 && turns.length < HISTORY_MESSAGES; i--) {
      var m = state.messages[i];
      if (m.role === "assistant" && (!m.text || m.error && !m.done)) continue;
      var content = m.text; // the server drops old citation numbers itself
      if (chars + content.length > HISTORY_CHARS) break;
      chars += content.length;
      turns.unshift({ role: m.role, content: content });
    }
    // The API wants a user turn first.
    while (turns.length && turns[0].role !== "user") turns.shift();
    return turns;
  }

  function submit() {
    var question = input.value.trim();
    if (!question || controller) return;
    flushFeedback();
    var history = historyFor(state.messages.length);
    var user = { role: "user", text: question };
    var bot = { role: "assistant", text: "", citations: [], status: { stage: "sending", message: "" } };
    state.messages.push(user, bot);
    input.value = "";
    state.draft = "";
    autosize();
    if (state.messages.length === 2) renderAll();
    else {
      log.appendChild(renderMessage(user));
      log.appendChild(renderMessage(bot));
    }
    log.scrollTop = log.scrollHeight;
    save();
    stream(question, history, bot);
  }

  function fail(bot, message) {
    bot.error = message;
    updateMessage(bot);
  }

  function httpError(res) {
    return res.text().then(function (body) {
      var message = "";
      try {
        message = JSON.parse(body).error || "";
      } catch (e) {
        message = "";
      }
      if (res.status === 429) {
        var wait = parseInt(res.headers.get("Retry-After") || "", 10);
        return (message || "Too many questions right now.") + (wait > 0 ? " Try again in " + wait + " s." : "");
      }
      return message || "The answer service failed (HTTP " + res.status + "). Try again in a moment.";
    });
  }

  function stream(question, history, bot) {
    var ctl = new AbortController();
    controller = ctl;
    setBusy(true);
    var timing = { submitted: performance.now() };
    KbQa.timing = timing;
    var frameReq = 0;
    var schedule = function () {
      if (!frameReq) frameReq = requestAnimationFrame(function () {
        frameReq = 0;
        updateMessage(bot);
      });
    };
    var finished = false;
    var handle = function (ev) {
      var data;
      try {
        data = JSON.parse(ev.data);
      } catch (e) {
        return;
      }
      if (ev.event === "status") {
        if (!timing.status) timing.status = performance.now();
        bot.status = data;
        updateMessage(bot); // at once: the status line is the first sign of life
      } else if (ev.event === "delta") {
        if (!timing.delta) timing.delta = performance.now();
        bot.text += data.text || "";
        schedule();
      } else if (ev.event === "citations") {
        bot.citations = data.citations || [];
        schedule();
      } else if (ev.event === "done") {
        finished = true;
        timing.done = performance.now();
        if (typeof data.text === "string" && data.text) bot.text = data.text;
        bot.done = true;
        bot.mode = data.mode;
        updateMessage(bot);
      } else if (ev.event === "error") {
        finished = true;
        fail(bot, data.message || "The answer failed. Try again.");
      }
    };
    fetch(apiUrl("/api/ask"), {
      method: "POST",
      headers: { "Content-Type": "application/json", Accept: "text/event-stream" },
      body: JSON.stringify({ question: question, history: history }),
      signal: ctl.signal,
      credentials: "omit",
      cache: "no-store",
    })
      .then(function (res) {
        if (!res.ok) return httpError(res).then(function (message) {
          finished = true;
          fail(bot, message);
        });
        if (!res.body || !/event-stream/.test(res.headers.get("Content-Type") || "")) {
          return res.json().then(function (data) {
            finished = true;
            bot.text = data.answer || "";
            bot.citations = data.citations || [];
            bot.done = true;
            updateMessage(bot);
          });
        }
        var reader = res.body.getReader();
        var decoder = new TextDecoder();
        var buffer = "";
        var pump = function () {
          return reader.read().then(function (chunk) {
            if (chunk.done) {
              buffer += decoder.decode();
              parseSSE(buffer + "\n\n").events.forEach(handle);
              return;
            }
            var parsed = parseSSE(buffer + decoder.decode(chunk.value, { stream: true }));
            buffer = parsed.rest;
            parsed.events.forEach(handle);
            return pump();
          });
        };
        return pump();
      })
      .then(function () {
        if (!finished) fail(bot, "The answer was cut off: the connection closed early. Try again.");
      })
      .catch(function (err) {
        if (ctl.signal.aborted) {
          bot.stopped = true;
          updateMessage(bot);
        } else if (!finished) {
          var where = options.endpoint || location.origin;
          fail(bot, "Could not reach the answer service at " + where + " (" + (err && err.message ? err.message : "network error") + "). Check your connection and try again.");
        }
      })
      .then(function () {
        if (controller === ctl) controller = null;
        setBusy(false);
        save(true);
      });
  }

  // ---------------------------------------------------------------- colour scheme

  function syncScheme() {
    // Material: data-md-color-scheme="slate" is dark; elsewhere CSS follows prefers-color-scheme.
    var scheme = document.body.getAttribute("data-md-color-scheme") || document.documentElement.getAttribute("data-md-color-scheme");
    if (scheme) host.setAttribute("data-scheme", scheme === "slate" || /dark/.test(scheme) ? "dark" : "light");
    else host.removeAttribute("data-scheme");
  }

  // ---------------------------------------------------------------- boot

  var KbQa = {
    mounted: true,
    version: "0.1.0",
    open: function () {
      setOpen(true);
    },
    close: function () {
      setOpen(false);
    },
    ask: function (q) {
      setOpen(true);
      input.value = q;
      submit();
    },
    highlight: highlight,
    state: state,
    timing: null,
    options: options,
    _test: pure,
  };
  window.KbQa = KbQa;

  function mount() {
    if (!document.body.contains(host)) document.body.appendChild(host);
    // Light-DOM styles (the passage highlight) for drop-in use without the <link> tag.
    if (!document.querySelector("link[data-kb-qa]")) document.head.appendChild(el("link", { rel: "stylesheet", href: options.css, "data-kb-qa": "" }));
    syncScheme();
    new MutationObserver(syncScheme).observe(document.body, { attributes: true, attributeFilter: ["data-md-color-scheme"] });
    if (state.open) setOpen(true, false);
    else renderAll();
    autosize();
    window.addEventListener("pagehide", function () {
      flushFeedback();
      save(true);
    });
    if (window.document$ && typeof window.document$.subscribe === "function") {
      // Material re-renders the page on instant navigation; the body (and our host) stays.
      window.document$.subscribe(function () {
        if (!document.body.contains(host)) document.body.appendChild(host);
        onPage();
      });
    } else {
      onPage();
      window.addEventListener("popstate", onPage);
    }
  }

  if (document.body) mount();
  else document.addEventListener("DOMContentLoaded", mount);
})();
