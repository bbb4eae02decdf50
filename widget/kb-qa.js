/*! kb-qa chat widget: grounded answers whose citations open and highlight the cited passage.
 * Built from widget/src/ by esbuild (widget/README.md); no dependencies, no requests except to
 * the kb-qa API. Model and document text reach the page only as text nodes.
 */
(() => {
  // src/dom.js
  var ICONS = {
    chat: "M12 3C6.5 3 2 6.58 2 11a7.2 7.2 0 0 0 2.87 5.6c0 .6-.42 2.17-2.87 4.4 2.33-.1 4.46-1.03 6.16-2.44A11 11 0 0 0 12 19c5.5 0 10-3.58 10-8s-4.5-8-10-8m1 13h-2v-2h2zm1.07-5.25-.9.92C12.45 12.4 12 13 12 14.5h-2V14c0-1.1.45-2.1 1.17-2.83l1.24-1.26A1.97 1.97 0 0 0 13 8.5a2 2 0 0 0-4 0H7a4 4 0 0 1 8 0c0 .88-.36 1.68-.93 2.25",
    close: "M19 6.41 17.59 5 12 10.59 6.41 5 5 6.41 10.59 12 5 17.59 6.41 19 12 13.41 17.59 19 19 17.59 13.41 12z",
    send: "M2.01 21 23 12 2.01 3 2 10l15 2-15 2z",
    stop: "M6 6h12v12H6z",
    copy: "M19 21H8V7h11m0-2H8a2 2 0 0 0-2 2v14a2 2 0 0 0 2 2h11a2 2 0 0 0 2-2V7a2 2 0 0 0-2-2m-3-4H4a2 2 0 0 0-2 2v14h2V3h12z",
    check: "M21 7 9 19l-5.5-5.5 1.41-1.41L9 16.17 19.59 5.59z",
    up: "M5 9v12H1V9zm4 12a2 2 0 0 1-2-2V9c0-.55.22-1.05.59-1.41L14.17 1l1.06 1.06c.27.27.44.64.44 1.05l-.03.32L14.69 8H21a2 2 0 0 1 2 2v2c0 .26-.05.5-.14.73l-3.02 7.05C19.54 20.5 18.83 21 18 21zm0-2h9.03L21 12v-2h-8.79l1.13-5.32L9 9.03z",
    down: "M19 15V3h4v12zM15 3a2 2 0 0 1 2 2v10c0 .55-.22 1.05-.59 1.41L9.83 23l-1.06-1.06c-.27-.27-.44-.64-.44-1.06l.03-.31.95-4.57H3a2 2 0 0 1-2-2v-2c0-.26.05-.5.14-.73l3.02-7.05C4.46 3.5 5.17 3 6 3zm0 2H5.97L3 12v2h8.78l-1.13 5.32L15 14.97z",
    reset: "M17.65 6.35A7.96 7.96 0 0 0 12 4a8 8 0 1 0 7.73 10h-2.08A6 6 0 1 1 12 6c1.66 0 3.14.69 4.22 1.78L13 11h7V4z"
  };
  function el(tag, attrs, children) {
    let node = document.createElement(tag);
    if (attrs) {
      for (let k in attrs) {
        if (attrs[k] == null || attrs[k] === false) continue;
        if (k === "text") node.textContent = attrs[k];
        else if (k === "class") node.className = attrs[k];
        else node.setAttribute(k, attrs[k] === true ? "" : attrs[k]);
      }
    }
    (children || []).forEach((c) => {
      if (c) node.appendChild(typeof c === "string" ? document.createTextNode(c) : c);
    });
    return node;
  }
  function icon(name) {
    let ns = "http://www.w3.org/2000/svg";
    let svg = document.createElementNS(ns, "svg");
    svg.setAttribute("viewBox", "0 0 24 24");
    svg.setAttribute("aria-hidden", "true");
    svg.setAttribute("focusable", "false");
    let path = document.createElementNS(ns, "path");
    path.setAttribute("d", ICONS[name]);
    svg.appendChild(path);
    return svg;
  }
  function iconButton(name, label, cls) {
    return el("button", { type: "button", class: "kbq-icon " + (cls || ""), "aria-label": label, title: label }, [icon(name)]);
  }
  function copyText(text) {
    if (navigator.clipboard && window.isSecureContext) return navigator.clipboard.writeText(text);
    return new Promise((resolve, reject) => {
      let area = document.createElement("textarea");
      area.value = text;
      area.setAttribute("readonly", "");
      area.style.cssText = "position:fixed;top:-1000px;opacity:0";
      document.body.appendChild(area);
      area.select();
      let ok = false;
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
    let old = button.getAttribute("aria-label");
    button.replaceChild(icon("check"), button.firstChild);
    button.setAttribute("aria-label", label);
    button.title = label;
    setTimeout(() => {
      button.replaceChild(icon("copy"), button.firstChild);
      button.setAttribute("aria-label", old);
      button.title = old;
    }, 1500);
  }
  var ANNOUNCE_DELAY_MS = 50;
  function announce(announcer, text) {
    if (!announcer) return;
    clearTimeout(announcer._timer);
    announcer.textContent = "";
    if (!text) return;
    announcer._timer = setTimeout(() => announcer.textContent = text, ANNOUNCE_DELAY_MS);
  }
  function touchOnly() {
    return !!(window.matchMedia && matchMedia("(pointer: coarse) and (hover: none)").matches);
  }

  // src/inline.js
  var MAX_DEPTH = 12;
  var MAX_TARGET = 2048;
  var ESCAPABLE = /[\\`*_{}[\]()#+\-.!|<>~$]/;
  var SPACE = /\s/u;
  var PUNCT = /[\p{P}\p{S}]/u;
  var WORDY = /[\p{L}\p{N}]/u;
  var GLUE = /[A-Za-z0-9_\]]/;
  var CITE = /\[(\d{1,3})\]/y;
  var AUTOLINK = /<(https?:\/\/[^\s<>]+)>/y;
  var SPECIAL = /[\\`[\]<hH*_$]/g;
  var TRAILING = /[).,;:!?'"\]]/;
  var BARE_URL = /https?:\/\/[^\s<>"'`]+/iy;
  function mathEnd(s, i, memo) {
    const two = s.substr(i, 2);
    let close = two === "$$" ? two : two === "\\(" ? "\\)" : "";
    if (two === "\\[") {
      let k = i;
      while (s[k - 1] === " " || s[k - 1] === "	") k--;
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
  function backtickRuns(s) {
    const runs = [];
    for (let i = s.indexOf("`"); i !== -1; i = s.indexOf("`", i)) {
      let j = i;
      while (s[j] === "`") j++;
      runs.push({ at: i, len: j - i, next: -1 });
      i = j;
    }
    const last = /* @__PURE__ */ new Map();
    for (let r = runs.length - 1; r >= 0; r--) {
      const seen = last.get(runs[r].len);
      runs[r].next = seen === void 0 ? -1 : seen;
      last.set(runs[r].len, r);
    }
    return runs;
  }
  function linkTarget(s, i) {
    if (s[i] !== "(") return null;
    let j = i + 1;
    const limit = Math.min(s.length, i + MAX_TARGET);
    while (j < limit && (s[j] === " " || s[j] === "	")) j++;
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
      for (j++; j < limit && s[j] !== '"'; j++) ;
      if (j >= limit) return null;
      for (j++; j < limit && SPACE.test(s[j]); j++) ;
    }
    return s[j] === ")" ? { href, end: j + 1 } : null;
  }
  function delimiter(s, i, ch) {
    let j = i;
    while (s[j] === ch) j++;
    const before = i > 0 ? s[i - 1] : " ";
    const after = j < s.length ? s[j] : " ";
    const left = !SPACE.test(after) && (!PUNCT.test(after) || SPACE.test(before) || PUNCT.test(before));
    const right = !SPACE.test(before) && (!PUNCT.test(before) || SPACE.test(after) || PUNCT.test(after));
    const open = ch === "*" ? left : left && (!right || PUNCT.test(before));
    const close = ch === "*" ? right : right && (!left || PUNCT.test(after));
    return { t: "delim", ch, count: j - i, orig: j - i, open, close, opens: null, closes: null, prev: null, next: null };
  }
  function processEmphasis(list, bottom) {
    const openersBottom = /* @__PURE__ */ new Map();
    let closer = bottom ? bottom.next : list.head;
    while (closer) {
      if (!closer.close) {
        closer = closer.next;
        continue;
      }
      const key = closer.ch + (closer.open ? "1" : "0") + closer.orig % 3;
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
      opener.next = closer;
      closer.prev = opener;
      if (!opener.count) unlink(list, opener);
      if (!closer.count) {
        const next = closer.next;
        unlink(list, closer);
        closer = next;
      }
    }
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
  function scan(s) {
    const pieces = [];
    const delims = { head: null, tail: null };
    const brackets = [];
    let inactiveBelow = 0;
    const runs = backtickRuns(s);
    const memo = {};
    let run = 0;
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
        text += s.slice(from, m);
        i = from = m;
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
          i = open.at + open.len;
          run++;
        }
      } else if (ch === "[" && (CITE.lastIndex = i, m = CITE.exec(s)) && s[i + m[0].length] !== "(") {
        const before = i > from ? s[i - 1] : text[text.length - 1];
        const prev = pieces[pieces.length - 1];
        const glued = before ? GLUE.test(before) : !!prev && prev.t === "code";
        piece({ t: "cite", n: parseInt(m[1], 10), glued }, i + m[0].length);
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
          inactiveBelow = brackets.length;
        } else {
          i++;
        }
      } else if (ch === "<" && (AUTOLINK.lastIndex = i, m = AUTOLINK.exec(s))) {
        piece({ t: "url", v: m[1] }, i + m[0].length);
      } else if ((ch === "h" || ch === "H") && !WORDY.test(s[i - 1] || "") && (BARE_URL.lastIndex = i, m = BARE_URL.exec(s))) {
        let end = m[0].length;
        while (end > 0 && TRAILING.test(m[0][end - 1])) end--;
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
  function parseInline(s) {
    const root = { children: [] };
    const stack = [{ node: root, after: "" }];
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
      if (stack.length > MAX_DEPTH) {
        add({ type: "text", text: before });
        stack.push({ node: stack[stack.length - 1].node, after, flat: true });
        return;
      }
      add(node);
      stack.push({ node, after: "" });
    };
    const close = () => {
      if (stack[stack.length - 1].flat) add({ type: "text", text: stack.pop().after });
      else {
        settle();
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

  // src/passage.js
  var FP_WORDS = 12;
  var TAIL_REPEATS = 8;
  var TAIL_PLACES = 16;
  var LEAD = /^[([{<"'“‘«¿¡「『（【《〈［｛＜*`~>#_-]{1,3}(?:[ \u00a0\u202f](?=\S))?/u;
  var TRAIL = /(?:[ \u00a0\u202f]?[)\]}>"'”’».,;:!?…。、，．！？：；」』）】》〉］｝＞*`~_]){1,3}$/u;
  var SPACES = /[\u00a0\u202f]/g;
  var CJK = /[\u2e80-\u2fdf\u3040-\u30ff\u3100-\u312f\u31a0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff65-\uff9f\u{20000}-\u{2fa1f}]/u;
  var WORD = /[\p{L}\p{M}\p{N}]+|\uE000/gu;
  var ATOM = "";
  var VERBATIM = /`+|\\[\\$]|\\[([]|\$/g;
  function norm(word) {
    return word.normalize("NFKC").toLowerCase();
  }
  function tokenize(text) {
    let out = [];
    let m;
    text = String(text || "");
    WORD.lastIndex = 0;
    while (m = WORD.exec(text)) {
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
  function words(text) {
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
  var ENTITIES = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'", nbsp: " ", copy: "©", reg: "®", mdash: "—", ndash: "–", hellip: "…" };
  function plainInline(s) {
    return s.replace(/\\([\\`*_{}[\]()#+\-.!|<>~])/g, "$1").replace(/!\[[^[\]]{0,500}\](\([^()]{0,2000}\)|\[[^[\]]{0,500}\])/g, "").replace(/\[([^[\]]{0,500})\]\((?:[^()\s]|\([^()]{0,500}\)){0,2000}(?:\s{1,32}"[^"]{0,500}")?\)/g, "$1").replace(/\[([^[\]]{1,500})\]\[[^[\]]{0,500}\]/g, "$1").replace(/\]\((?:[^()\s]|\([^()]{0,500}\)){0,2000}(?:\s{1,32}"[^"]{0,500}")?\)|\]\[[^[\]]{0,500}\]/g, " ").replace(/\[\^[^[\]]{1,500}\]/g, "").replace(/<((?:https?|mailto):[^<>\s]{1,2000})>/g, "$1").replace(/<\/?[A-Za-z][^<>]{0,1000}>/g, " ").replace(/\{[ \t]{0,32}:?[ \t]{0,32}[#.][^{}]{0,500}\}/g, "").replace(/:[a-z][a-z0-9_+-]*:/g, " ").replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, function(all, name) {
      if (name[0] === "#") {
        let code = name[1] === "x" || name[1] === "X" ? parseInt(name.slice(2), 16) : parseInt(name.slice(1), 10);
        return code > 0 && code < 1114112 ? String.fromCodePoint(code) : " ";
      }
      return ENTITIES[name.toLowerCase()] || " ";
    }).replace(/\*\*|__|~~|==|\^\^|\*/g, "").replace(/(^|[^\p{L}\p{N}])_+|_+(?=[^\p{L}\p{N}]|$)/gu, "$1").replace(/\|/g, " ");
  }
  function plainLine(s, atoms) {
    let out = "";
    let from = 0;
    let memo = {};
    let m;
    VERBATIM.lastIndex = 0;
    while (m = VERBATIM.exec(s)) {
      let b = m.index;
      let run = m[0];
      let end;
      if (run[0] === "`") {
        let close = b + run.length;
        for (; ; ) {
          close = s.indexOf(run, close);
          if (close === -1 || s[close + run.length] !== "`") break;
          while (s[close] === "`") close++;
        }
        if (close === -1) continue;
        out += plainInline(s.slice(from, b)) + s.slice(b + run.length, close);
        end = close + run.length;
      } else if (run.length > 1 && run[1] !== "(" && run[1] !== "[") {
        continue;
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
  function stripMarkdown(md, atoms) {
    let lines = String(md || "").replace(/\r\n?/g, "\n").replace(/<!--[\s\S]*?(?:-->|$)/g, " ").replace(/^[ \t]*(?:(?:id|collapsed)::.*|:(?:LOGBOOK|PROPERTIES):[\s\S]*?\n[ \t]*:END:[ \t]*)$/gm, "").split("\n");
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
        if (title) out.push(title[1]);
        continue;
      }
      let d = /^\s*(\$\$|\\\[)/.exec(line);
      if (d) {
        let close = d[1] === "$$" ? "$$" : "\\]";
        for (let j = d[0].length; lines[k].indexOf(close, j) < 0 && k + 1 < lines.length; j = 0) line += "\n" + lines[++k];
      }
      let note = /^\s{0,3}\[\^[^\]]+\]:\s?(.*)$/.exec(line);
      if (note) {
        out.push(plainLine(note[1], atoms));
        continue;
      }
      if (/^\s{0,3}\[[^\]]+\]:\s/.test(line) || /^\s*\*\[[^\]]+\]:/.test(line)) continue;
      if (/^\s*-{2,}8<-{2,}/.test(line)) continue;
      if (/^\s*(?:\|\s*)?:?-+:?\s*(?:\|\s*:?-+:?\s*)+(?:\|\s*)?$/.test(line)) continue;
      if (/^\s*([-*_])(\s*\1){2,}\s*$/.test(line)) continue;
      let adm = /^\s*(?:!!!|\?\?\?\+?)\s*([\w-]+)?(?:[^"]*"([^"]*)")?/.exec(line);
      if (adm) {
        out.push(plainLine(adm[2] != null ? adm[2] : adm[1] || ""));
        continue;
      }
      let tab = /^\s*===\+?\s*"([^"]*)"/.exec(line);
      if (tab) {
        out.push(plainLine(tab[1]));
        continue;
      }
      line = line.replace(/^\s*#{1,6}(\s+|$)/, "").replace(/\s#+\s*$/, "").replace(/^\s*(>\s?)+/, "").replace(/^\s*(?:[-*+]|\d{1,9}[.)])\s+(\[[ xX]\]\s+)?/, "");
      out.push(plainLine(line, atoms));
    }
    return out.join("\n").replace(/[ \t\u00a0]+/g, " ").replace(/ *\n */g, "\n").replace(/\n{3,}/g, "\n\n").trim();
  }
  function align(query, text, from) {
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
      t = prevH;
      prevH = curH;
      curH = t;
      t = prevS;
      prevS = curS;
      curS = t;
      t = prevC;
      prevC = curC;
      curC = t;
    }
    return best.matched ? best : null;
  }
  function good(result, wanted) {
    return !!result && result.matched >= Math.min(3, wanted) && result.matched >= wanted * 0.4;
  }
  function fingerprint(passage) {
    let shown = stripMarkdown(passage, true);
    let list = words(shown);
    if (!list.length) return "";
    let end = ends(shown);
    if (list.length <= FP_WORDS * 2 + 4) return end.lead + joinWords(list) + end.trail;
    return end.lead + joinWords(list.slice(0, FP_WORDS)) + ".." + list.length + ".." + joinWords(list.slice(-FP_WORDS)) + end.trail;
  }
  function ends(text) {
    let t = String(text || "").trim();
    return { lead: (LEAD.exec(t) || [""])[0], trail: (TRAIL.exec(t) || [""])[0] };
  }
  function findPassage(text, spec) {
    let tokens = tokenize(text);
    let head;
    let tail = null;
    let length = 0;
    let shown = typeof spec === "string" ? spec : stripMarkdown(spec && spec.passage, true);
    let end0 = ends(shown);
    if (typeof spec === "string") {
      let most = FP_WORDS * 2 + 4;
      let cut = spec.indexOf("..");
      head = words((cut === -1 ? spec : spec.slice(0, cut)).slice(0, most * 64)).slice(0, most);
      if (cut !== -1) {
        let rest = spec.slice(cut + 2);
        let counted = /^(\d{1,6})\.\./.exec(rest);
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
    return { start, end };
  }

  // src/links.js
  var HL_PARAM = "kbqa-hl";
  function citationUrl(citation, opts) {
    let raw = String(citation && (citation.link || citation.url) || "").trim();
    let site = String(opts.siteUrl || "").replace(/\/?$/, "/");
    if (site !== "/") {
      let bare = function(u) {
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
  function citationHref(citation, opts) {
    let url = citationUrl(citation, opts);
    if (!url) return null;
    let fp = fingerprint(citation.text);
    if (fp) url.searchParams.set(HL_PARAM, fp);
    return url.href;
  }
  function safeHref(href, base) {
    let clean = String(href || "").replace(/[\u0000-\u0020\u007f-\u009f]/g, "");
    if (!clean || /^[a-z][a-z0-9+.-]*:/i.test(clean) && !/^https?:/i.test(clean)) return null;
    if (/^[a-z][a-z0-9+.-]*:/i.test(clean)) return clean;
    clean = clean.replace(/(^|\/)index\.md(?=$|#)/, "$1").replace(/\.md(?=$|#)/, "/");
    try {
      return base ? new URL(clean.replace(/^\/(?!\/)/, ""), base).href : clean;
    } catch (e) {
      return null;
    }
  }

  // src/markdown.js
  var FENCE = /^ {0,3}(`{3,}|~{3,})\s*([\w+#.-]*)/;
  var BULLET = /^(\s*)([-*+]|\d{1,9}[.)])\s+(.*)$/;
  var RULE = /^\s*\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$/;
  var MATH = /^ {0,3}\$\$/;
  function fenceOf(line) {
    const f = FENCE.exec(line);
    if (f && f[1][0] === "`" && line.indexOf("`", f[0].length) !== -1) return null;
    return f;
  }
  function startsBlock(line) {
    return !!fenceOf(line) || MATH.test(line) || /^\s{0,3}#{1,6}\s/.test(line) || /^\s{0,3}>/.test(line) || BULLET.test(line);
  }
  function measure(line, width = Infinity) {
    let col = 0;
    let at = 0;
    for (; col < width && /\s/.test(line[at]); at++) col += line[at] === "	" ? 4 - col % 4 : 1;
    return [col, at];
  }
  var indentOf = (line) => measure(line)[0];
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
  function heading(line) {
    const m = /^ {0,3}(#{1,6})(?=\s)/.exec(line);
    if (!m) return null;
    let end = line.length;
    while (end > m[0].length && /\s/.test(line[end - 1])) end--;
    let hashes = end;
    while (hashes > m[0].length && line[hashes - 1] === "#") hashes--;
    if (hashes < end && /\s/.test(line[hashes - 1])) end = hashes;
    return { level: m[1].length, text: line.slice(m[0].length, end).trim() };
  }
  function parseBlocks(md, depth) {
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
        blocks.push({ type: "code", lang: f[2], text: body.join("\n"), closed });
        continue;
      }
      if (MATH.test(line)) {
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
        blocks.push({ type: "table", head, rows });
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
          if (next !== void 0 && next.trim() && indentOf(next) > base) {
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
      while (i < lines.length && !lines[i].trim() && lines[i + 1] !== void 0 && BULLET.test(lines[i + 1]) && indentOf(lines[i + 1]) <= base + 1) i++;
    }
    blocks.push(list);
    return i;
  }
  var BLOCK_TAGS = { p: "p", ul: "ul", ol: "ol", quote: "blockquote", hr: "hr" };
  function renderBlocks(blocks, doc, ctx) {
    let frag = doc.createDocumentFragment();
    blocks.forEach(function(b) {
      let el2;
      if (b.type === "code") {
        el2 = doc.createElement("div");
        el2.className = "kbq-code";
        let pre = doc.createElement("pre");
        let code = doc.createElement("code");
        if (b.lang) code.setAttribute("data-lang", b.lang);
        code.appendChild(doc.createTextNode(b.text));
        pre.appendChild(code);
        el2.appendChild(pre);
        if (ctx && ctx.copy && b.closed) el2.appendChild(ctx.copy(b.text));
      } else if (b.type === "h") {
        el2 = doc.createElement("h" + Math.min(6, Math.max(3, b.level + 2)));
        el2.appendChild(renderInline(parseInline(b.text), doc, ctx));
        autoDirection(el2);
      } else if (b.type === "ul" || b.type === "ol") {
        el2 = doc.createElement(b.type);
        if (b.type === "ol" && b.start !== 1) el2.setAttribute("start", String(b.start));
        b.items.forEach(function(item) {
          let li = doc.createElement("li");
          if (item.length === 1 && item[0].type === "p") {
            let text = item[0].text;
            let task = TASK.exec(text);
            if (task) {
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
          el2.appendChild(li);
        });
      } else if (b.type === "quote") {
        el2 = doc.createElement("blockquote");
        el2.appendChild(renderBlocks(b.children, doc, ctx));
      } else if (b.type === "table") {
        el2 = doc.createElement("div");
        el2.className = "kbq-table";
        let table = doc.createElement("table");
        let thead = doc.createElement("thead");
        let tbody = doc.createElement("tbody");
        let row = function(list, tag, parent) {
          let tr = doc.createElement("tr");
          list.forEach(function(cell) {
            let td = doc.createElement(tag);
            td.appendChild(renderInline(parseInline(cell), doc, ctx));
            tr.appendChild(td);
          });
          parent.appendChild(tr);
        };
        row(b.head, "th", thead);
        b.rows.forEach(function(r) {
          row(r, "td", tbody);
        });
        table.appendChild(thead);
        table.appendChild(tbody);
        el2.appendChild(table);
      } else {
        el2 = doc.createElement(BLOCK_TAGS[b.type] || "p");
        if (b.type === "p") {
          el2.appendChild(b.math ? doc.createTextNode(b.text) : renderInline(parseInline(b.text), doc, ctx));
          autoDirection(el2);
        }
      }
      frag.appendChild(el2);
    });
    return frag;
  }
  var TASK = /^\[([ xX])\]\s+/;
  var MAX_INLINE_ELEMENTS = 3e3;
  var AFTER_CHIP = /^[.,;:!?)\]}»”’。，；：！？、）]+/;
  function autoDirection(el2) {
    el2.setAttribute("dir", "auto");
  }
  function renderInline(nodes, doc, ctx) {
    let frag = doc.createDocumentFragment();
    let chip = null;
    const layChip = function(closing) {
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
    nodes.forEach(function(n) {
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
        let el2 = doc.createElement(n.type);
        el2.appendChild(renderInline(n.children, doc, ctx));
        frag.appendChild(el2);
      } else if (n.type === "cite") {
        const known = n.n > 0 && (!n.glued || ctx && ctx.known && ctx.known(n.n));
        if (known && ctx && ctx.cite) {
          chip = ctx.cite(n.n);
          const before = frag.lastChild;
          if (!chip && before && before.nodeType === 3) before.data = before.data.trimEnd();
        } else frag.appendChild(doc.createTextNode("[" + n.n + "]"));
      } else if (n.type === "link") {
        let href = safeHref(n.href, ctx && ctx.base);
        let inner = renderInline(n.children, doc, ctx);
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
  var BIDI_CONTROLS = /[\u202a-\u202e\u2066-\u2069]/g;
  function withoutBidi(text) {
    return String(text || "").replace(BIDI_CONTROLS, "");
  }
  function renderMarkdown(md, doc, ctx) {
    return renderBlocks(parseBlocks(withoutBidi(md)), doc, ctx);
  }

  // src/lang/de.js
  var de_default = {
    title: "Doku fragen",
    placeholder: "Stellen Sie eine Frage zu dieser Dokumentation…",
    newConversation: "Neue Unterhaltung",
    close: "Schließen",
    conversation: "Unterhaltung",
    question: "Ihre Frage",
    send: "Senden",
    sendQuestion: "Frage senden",
    stop: "Stopp",
    stopAnswering: "Antwort abbrechen",
    disclaimer: "Die Antworten stammen aus dieser Dokumentation und können falsch sein: Prüfen Sie die Quellen.",
    keys: "{keys} öffnet, Esc schließt.",
    intro: "Fragen Sie alles zu dieser Dokumentation. Jede Antwort nennt die Stellen, aus denen sie stammt: Klicken Sie auf eine Nummer, um die Stelle zu öffnen und hervorzuheben.",
    suggested: "Vorgeschlagene Fragen",
    sources: "Quellen",
    sourcesCopied: "Quellen:",
    source: "Quelle",
    sourceN: "Quelle {n}",
    sourceCount: "{n:# Quelle|# Quellen}.",
    openHint: "Seite mit dieser Stelle hervorgehoben öffnen",
    passageShown: "Stelle hervorgehoben unter {where}.",
    rest: "… (der Rest steht in der Unterhaltung)",
    truncated: "Antwort gekürzt: Sie war zu lang, um vollständig angezeigt zu werden.",
    noAnswer: "Es kam keine Antwort.",
    stopped: "Abgebrochen.",
    copyCode: "Code kopieren",
    codeCopied: "Code kopiert",
    copyAnswer: "Antwort kopieren",
    answerCopied: "Antwort kopiert",
    copied: "Kopiert",
    helpful: "Hilfreich",
    notHelpful: "Nicht hilfreich",
    reason: "Begründung (optional)",
    whatHelped: "Was hat geholfen? (optional)",
    whatWasWrong: "Was war falsch oder hat gefehlt? (optional)",
    thanks: "Danke für Ihr Feedback.",
    indexing: "Die Dokumentation wird noch indiziert. Ihre Frage wird beantwortet, sobald das erledigt ist…",
    indexingOf: "Die Dokumentation wird noch indiziert: {done} von {total} Abschnitten. Ihre Frage wird beantwortet, sobald das erledigt ist…",
    tooLong: "Die Frage ist zu lang. Kürzen Sie sie und fragen Sie erneut.",
    tooMany: "Gerade kommen zu viele Fragen.",
    tryAgainIn: "Versuchen Sie es in {seconds} s erneut.",
    noService: "Unter {url} antwortet kein kb-qa-Dienst (HTTP {status}). Starten Sie kb-qa serve oder setzen Sie den Endpoint des Widgets.",
    serviceFailed: "Der Antwortdienst ist fehlgeschlagen (HTTP {status}). Versuchen Sie es gleich noch einmal.",
    webPage: "Der Antwortdienst unter {url} hat eine Webseite statt einer Antwort gesendet: Richten Sie den Endpoint des Widgets auf kb-qa serve.",
    noAnswerSent: "Der Antwortdienst hat keine Antwort gesendet. Versuchen Sie es erneut.",
    questionBack: "Ihre Frage steht wieder im Eingabefeld: Drücken Sie die Eingabetaste, um sie erneut zu stellen.",
    failed: "Die Antwort ist fehlgeschlagen. Versuchen Sie es erneut.",
    modelFailed: "Das Sprachmodell konnte die Antwort nicht beenden. Versuchen Sie es erneut.",
    modelTimeout: "Das Sprachmodell hat zu lange für die Antwort gebraucht. Versuchen Sie es erneut.",
    cutOff: "Die Antwort brach ab: Die Verbindung wurde vorzeitig geschlossen. Versuchen Sie es erneut.",
    silent: "Der Antwortdienst antwortet nicht mehr. Versuchen Sie es erneut.",
    offline: "Sie scheinen offline zu sein. Prüfen Sie Ihre Verbindung und versuchen Sie es erneut.",
    unreachable: "Der Antwortdienst unter {url} ist nicht erreichbar ({error}). Prüfen Sie Ihre Verbindung und versuchen Sie es erneut.",
    cors: "Läuft er, muss er den Ursprung dieser Website ({origin}) in cors_origins (KBQA_CORS_ORIGINS) erlauben.",
    interrupted: "Die Antwort wurde beim Seitenwechsel unterbrochen. Fragen Sie erneut, um die vollständige Antwort zu erhalten."
  };

  // src/lang/en.js
  var en_default = {
    title: "Ask the docs",
    placeholder: "Ask a question about these docs…",
    newConversation: "New conversation",
    close: "Close",
    conversation: "Conversation",
    question: "Your question",
    send: "Send",
    sendQuestion: "Send question",
    stop: "Stop",
    stopAnswering: "Stop answering",
    disclaimer: "Answers come from these docs and can be wrong: check the sources.",
    keys: "{keys} opens, Esc closes.",
    intro: "Ask anything about these docs. Every answer cites the passages it comes from: click a number to open and highlight it.",
    suggested: "Suggested questions",
    sources: "Sources",
    sourcesCopied: "Sources:",
    source: "Source",
    sourceN: "Source {n}",
    sourceCount: "{n:# source|# sources}.",
    openHint: "Open the page with this passage highlighted",
    passageShown: "Passage highlighted under {where}.",
    rest: "… (the rest is in the conversation)",
    truncated: "Reply truncated: this answer was too long to show in full.",
    noAnswer: "No answer was returned.",
    stopped: "Stopped.",
    copyCode: "Copy code",
    codeCopied: "Code copied",
    copyAnswer: "Copy answer",
    answerCopied: "Answer copied",
    copied: "Copied",
    helpful: "Helpful",
    notHelpful: "Not helpful",
    reason: "Reason (optional)",
    whatHelped: "What helped? (optional)",
    whatWasWrong: "What was wrong or missing? (optional)",
    thanks: "Thanks for the feedback.",
    indexing: "The docs are still being indexed. Your question is answered as soon as that is done…",
    indexingOf: "The docs are still being indexed: {done} of {total} sections. Your question is answered as soon as that is done…",
    tooLong: "The question is too long. Shorten it and ask again.",
    tooMany: "Too many questions right now.",
    tryAgainIn: "Try again in {seconds} s.",
    noService: "No kb-qa answer service at {url} (HTTP {status}). Start kb-qa serve, or set the widget's endpoint.",
    serviceFailed: "The answer service failed (HTTP {status}). Try again in a moment.",
    webPage: "The answer service at {url} sent a web page, not an answer: point the widget's endpoint at kb-qa serve.",
    noAnswerSent: "The answer service sent no answer. Try again.",
    questionBack: "Your question is back in the box: press Enter to ask it again.",
    failed: "The answer failed. Try again.",
    modelFailed: "The language model could not finish the answer. Try again.",
    modelTimeout: "The language model took too long to answer. Try again.",
    cutOff: "The answer was cut off: the connection closed early. Try again.",
    silent: "The answer service stopped responding. Try again.",
    offline: "You appear to be offline. Check your connection and try again.",
    unreachable: "Could not reach the answer service at {url} ({error}). Check your connection and try again.",
    cors: "If it is running, it must allow this site's origin ({origin}) in cors_origins (KBQA_CORS_ORIGINS).",
    interrupted: "The answer was interrupted when the page changed. Ask again to get a full answer."
  };

  // src/lang/es.js
  var es_default = {
    title: "Pregunta a la documentación",
    placeholder: "Haz una pregunta sobre esta documentación…",
    newConversation: "Nueva conversación",
    close: "Cerrar",
    conversation: "Conversación",
    question: "Tu pregunta",
    send: "Enviar",
    sendQuestion: "Enviar pregunta",
    stop: "Detener",
    stopAnswering: "Detener la respuesta",
    disclaimer: "Las respuestas salen de esta documentación y pueden tener errores: comprueba las fuentes.",
    keys: "{keys} abre, Esc cierra.",
    intro: "Pregunta lo que quieras sobre esta documentación. Cada respuesta cita los pasajes de los que procede: haz clic en un número para abrirlo y resaltarlo.",
    suggested: "Preguntas sugeridas",
    sources: "Fuentes",
    sourcesCopied: "Fuentes:",
    source: "Fuente",
    sourceN: "Fuente {n}",
    sourceCount: "{n:# fuente|# fuentes}.",
    openHint: "Abrir la página con este pasaje resaltado",
    passageShown: "Pasaje resaltado en {where}.",
    rest: "… (el resto está en la conversación)",
    truncated: "Respuesta truncada: era demasiado larga para mostrarla completa.",
    noAnswer: "No se recibió ninguna respuesta.",
    stopped: "Detenida.",
    copyCode: "Copiar código",
    codeCopied: "Código copiado",
    copyAnswer: "Copiar respuesta",
    answerCopied: "Respuesta copiada",
    copied: "Copiado",
    helpful: "Útil",
    notHelpful: "No es útil",
    reason: "Motivo (opcional)",
    whatHelped: "¿Qué te ayudó? (opcional)",
    whatWasWrong: "¿Qué estaba mal o faltaba? (opcional)",
    thanks: "Gracias por tu opinión.",
    indexing: "La documentación aún se está indexando. Tu pregunta se responderá en cuanto termine…",
    indexingOf: "La documentación aún se está indexando: {done} de {total} secciones. Tu pregunta se responderá en cuanto termine…",
    tooLong: "La pregunta es demasiado larga. Acórtala y vuelve a preguntar.",
    tooMany: "Hay demasiadas preguntas en este momento.",
    tryAgainIn: "Vuelve a intentarlo en {seconds} s.",
    noService: "No hay ningún servicio de respuestas de kb-qa en {url} (HTTP {status}). Inicia kb-qa serve o configura el endpoint del widget.",
    serviceFailed: "El servicio de respuestas falló (HTTP {status}). Vuelve a intentarlo en un momento.",
    webPage: "El servicio de respuestas en {url} envió una página web, no una respuesta: apunta el endpoint del widget a kb-qa serve.",
    noAnswerSent: "El servicio de respuestas no envió ninguna respuesta. Vuelve a intentarlo.",
    questionBack: "Su pregunta vuelve a estar en el cuadro: pulse Intro para hacerla de nuevo.",
    failed: "La respuesta falló. Vuelve a intentarlo.",
    modelFailed: "El modelo de lenguaje no pudo terminar la respuesta. Inténtalo de nuevo.",
    modelTimeout: "El modelo de lenguaje tardó demasiado en responder. Inténtalo de nuevo.",
    cutOff: "La respuesta se cortó: la conexión se cerró antes de tiempo. Vuelve a intentarlo.",
    silent: "El servicio de respuestas dejó de responder. Vuelve a intentarlo.",
    offline: "Parece que estás sin conexión. Comprueba tu conexión y vuelve a intentarlo.",
    unreachable: "No se pudo conectar con el servicio de respuestas en {url} ({error}). Comprueba tu conexión y vuelve a intentarlo.",
    cors: "Si está en marcha, debe permitir el origen de este sitio ({origin}) en cors_origins (KBQA_CORS_ORIGINS).",
    interrupted: "La respuesta se interrumpió al cambiar de página. Vuelve a preguntar para obtener la respuesta completa."
  };

  // src/lang/fr.js
  var fr_default = {
    title: "Interroger la doc",
    placeholder: "Posez une question sur cette documentation…",
    newConversation: "Nouvelle conversation",
    close: "Fermer",
    conversation: "Conversation",
    question: "Votre question",
    send: "Envoyer",
    sendQuestion: "Envoyer la question",
    stop: "Arrêter",
    stopAnswering: "Arrêter la réponse",
    disclaimer: "Les réponses viennent de cette documentation et peuvent se tromper : vérifiez les sources.",
    keys: "{keys} ouvre, Échap ferme.",
    intro: "Posez n’importe quelle question sur cette documentation. Chaque réponse cite les passages dont elle provient : cliquez sur un numéro pour l’ouvrir et le surligner.",
    suggested: "Questions suggérées",
    sources: "Sources",
    sourcesCopied: "Sources :",
    source: "Source",
    sourceN: "Source {n}",
    sourceCount: "{n:# source|# sources}.",
    openHint: "Ouvrir la page avec ce passage surligné",
    passageShown: "Passage surligné sous {where}.",
    rest: "… (la suite est dans la conversation)",
    truncated: "Réponse tronquée : elle était trop longue pour être affichée en entier.",
    noAnswer: "Aucune réponse n’a été reçue.",
    stopped: "Arrêté.",
    copyCode: "Copier le code",
    codeCopied: "Code copié",
    copyAnswer: "Copier la réponse",
    answerCopied: "Réponse copiée",
    copied: "Copié",
    helpful: "Utile",
    notHelpful: "Pas utile",
    reason: "Raison (facultatif)",
    whatHelped: "Qu’est-ce qui vous a aidé ? (facultatif)",
    whatWasWrong: "Qu’est-ce qui était faux ou manquait ? (facultatif)",
    thanks: "Merci pour votre retour.",
    indexing: "La documentation est encore en cours d’indexation. Votre question recevra une réponse dès que ce sera fait…",
    indexingOf: "La documentation est encore en cours d’indexation : {done} sections sur {total}. Votre question recevra une réponse dès que ce sera fait…",
    tooLong: "La question est trop longue. Raccourcissez-la et posez-la à nouveau.",
    tooMany: "Trop de questions en ce moment.",
    tryAgainIn: "Réessayez dans {seconds} s.",
    noService: "Aucun service de réponse kb-qa à l’adresse {url} (HTTP {status}). Lancez kb-qa serve ou définissez l’endpoint du widget.",
    serviceFailed: "Le service de réponse a échoué (HTTP {status}). Réessayez dans un instant.",
    webPage: "Le service de réponse à l’adresse {url} a renvoyé une page web, pas une réponse : faites pointer l’endpoint du widget vers kb-qa serve.",
    noAnswerSent: "Le service de réponse n’a renvoyé aucune réponse. Réessayez.",
    questionBack: "Votre question est de nouveau dans la zone de saisie : appuyez sur Entrée pour la reposer.",
    failed: "La réponse a échoué. Réessayez.",
    modelFailed: "Le modèle de langage n’a pas pu terminer la réponse. Réessayez.",
    modelTimeout: "Le modèle de langage a mis trop de temps à répondre. Réessayez.",
    cutOff: "La réponse a été interrompue : la connexion s’est fermée trop tôt. Réessayez.",
    silent: "Le service de réponse ne répond plus. Réessayez.",
    offline: "Vous semblez être hors ligne. Vérifiez votre connexion et réessayez.",
    unreachable: "Impossible de joindre le service de réponse à l’adresse {url} ({error}). Vérifiez votre connexion et réessayez.",
    cors: "S’il fonctionne, il doit autoriser l’origine de ce site ({origin}) dans cors_origins (KBQA_CORS_ORIGINS).",
    interrupted: "La réponse a été interrompue au changement de page. Posez à nouveau la question pour obtenir une réponse complète."
  };

  // src/lang/it.js
  var it_default = {
    title: "Chiedi alla documentazione",
    placeholder: "Fai una domanda su questa documentazione…",
    newConversation: "Nuova conversazione",
    close: "Chiudi",
    conversation: "Conversazione",
    question: "La tua domanda",
    send: "Invia",
    sendQuestion: "Invia la domanda",
    stop: "Interrompi",
    stopAnswering: "Interrompi la risposta",
    disclaimer: "Le risposte provengono da questa documentazione e possono essere sbagliate: controlla le fonti.",
    keys: "{keys} apre, Esc chiude.",
    intro: "Chiedi qualsiasi cosa su questa documentazione. Ogni risposta cita i passaggi da cui proviene: fai clic su un numero per aprirlo ed evidenziarlo.",
    suggested: "Domande suggerite",
    sources: "Fonti",
    sourcesCopied: "Fonti:",
    source: "Fonte",
    sourceN: "Fonte {n}",
    sourceCount: "{n:# fonte|# fonti}.",
    openHint: "Apri la pagina con questo passaggio evidenziato",
    passageShown: "Passaggio evidenziato in {where}.",
    rest: "… (il resto è nella conversazione)",
    truncated: "Risposta troncata: era troppo lunga per essere mostrata per intero.",
    noAnswer: "Non è arrivata nessuna risposta.",
    stopped: "Interrotta.",
    copyCode: "Copia il codice",
    codeCopied: "Codice copiato",
    copyAnswer: "Copia la risposta",
    answerCopied: "Risposta copiata",
    copied: "Copiato",
    helpful: "Utile",
    notHelpful: "Non utile",
    reason: "Motivo (facoltativo)",
    whatHelped: "Che cosa ti è stato utile? (facoltativo)",
    whatWasWrong: "Che cosa era sbagliato o mancava? (facoltativo)",
    thanks: "Grazie per il feedback.",
    indexing: "La documentazione è ancora in fase di indicizzazione. La risposta arriverà appena sarà completata…",
    indexingOf: "La documentazione è ancora in fase di indicizzazione: {done} sezioni su {total}. La risposta arriverà appena sarà completata…",
    tooLong: "La domanda è troppo lunga. Accorciala e chiedi di nuovo.",
    tooMany: "Troppe domande in questo momento.",
    tryAgainIn: "Riprova tra {seconds} s.",
    noService: "Nessun servizio di risposta kb-qa all’indirizzo {url} (HTTP {status}). Avvia kb-qa serve o imposta l’endpoint del widget.",
    serviceFailed: "Il servizio di risposta non ha funzionato (HTTP {status}). Riprova tra poco.",
    webPage: "Il servizio di risposta all’indirizzo {url} ha inviato una pagina web, non una risposta: punta l’endpoint del widget su kb-qa serve.",
    noAnswerSent: "Il servizio di risposta non ha inviato alcuna risposta. Riprova.",
    questionBack: "La domanda è di nuovo nella casella: premi Invio per ripeterla.",
    failed: "La risposta non è riuscita. Riprova.",
    modelFailed: "Il modello linguistico non è riuscito a completare la risposta. Riprova.",
    modelTimeout: "Il modello linguistico ha impiegato troppo tempo a rispondere. Riprova.",
    cutOff: "La risposta si è interrotta: la connessione si è chiusa in anticipo. Riprova.",
    silent: "Il servizio di risposta ha smesso di rispondere. Riprova.",
    offline: "Sembra che tu sia offline. Controlla la connessione e riprova.",
    unreachable: "Impossibile raggiungere il servizio di risposta all’indirizzo {url} ({error}). Controlla la connessione e riprova.",
    cors: "Se è in esecuzione, deve consentire l’origine di questo sito ({origin}) in cors_origins (KBQA_CORS_ORIGINS).",
    interrupted: "La risposta si è interrotta al cambio di pagina. Chiedi di nuovo per avere la risposta completa."
  };

  // src/lang/ja.js
  var ja_default = {
    title: "ドキュメントに質問",
    placeholder: "このドキュメントについて質問する…",
    newConversation: "新しい会話",
    close: "閉じる",
    conversation: "会話",
    question: "質問",
    send: "送信",
    sendQuestion: "質問を送信",
    stop: "停止",
    stopAnswering: "回答を停止",
    disclaimer: "回答はこのドキュメントに基づきますが、誤りを含むことがあります。出典を確認してください。",
    keys: "{keys} で開き、Esc で閉じます。",
    intro: "このドキュメントについて何でも質問できます。回答には出典の箇所が示され、番号をクリックするとその箇所を開いてハイライトします。",
    suggested: "質問の例",
    sources: "出典",
    sourcesCopied: "出典：",
    source: "出典",
    sourceN: "出典 {n}",
    sourceCount: "出典 {n} 件。",
    openHint: "この箇所をハイライトしてページを開く",
    passageShown: "{where} の箇所をハイライトしました。",
    rest: "…（続きは会話にあります）",
    truncated: "回答が長すぎるため、途中までしか表示していません。",
    noAnswer: "回答がありませんでした。",
    stopped: "停止しました。",
    copyCode: "コードをコピー",
    codeCopied: "コードをコピーしました",
    copyAnswer: "回答をコピー",
    answerCopied: "回答をコピーしました",
    copied: "コピーしました",
    helpful: "役に立った",
    notHelpful: "役に立たなかった",
    reason: "理由（任意）",
    whatHelped: "何が役に立ちましたか？（任意）",
    whatWasWrong: "何が間違っていたか、足りなかったか（任意）",
    thanks: "フィードバックありがとうございます。",
    indexing: "ドキュメントのインデックスを作成中です。完了しだい質問に回答します…",
    indexingOf: "ドキュメントのインデックスを作成中です（{total} セクション中 {done}）。完了しだい質問に回答します…",
    tooLong: "質問が長すぎます。短くしてもう一度お尋ねください。",
    tooMany: "現在、質問が集中しています。",
    tryAgainIn: "{seconds} 秒後にもう一度お試しください。",
    noService: "{url} に kb-qa の回答サービスがありません（HTTP {status}）。kb-qa serve を起動するか、ウィジェットの endpoint を設定してください。",
    serviceFailed: "回答サービスでエラーが発生しました（HTTP {status}）。しばらくしてからもう一度お試しください。",
    webPage: "{url} の回答サービスが回答ではなくウェブページを返しました。ウィジェットの endpoint を kb-qa serve に向けてください。",
    noAnswerSent: "回答サービスから回答がありませんでした。もう一度お試しください。",
    questionBack: "質問を入力欄に戻しました。Enter キーでもう一度質問できます。",
    failed: "回答に失敗しました。もう一度お試しください。",
    modelFailed: "言語モデルが回答を完了できませんでした。もう一度お試しください。",
    modelTimeout: "言語モデルの応答に時間がかかりすぎました。もう一度お試しください。",
    cutOff: "接続が途中で切れたため、回答が途切れました。もう一度お試しください。",
    silent: "回答サービスからの応答が途絶えました。もう一度お試しください。",
    offline: "オフラインのようです。接続を確認して、もう一度お試しください。",
    unreachable: "{url} の回答サービスに接続できません（{error}）。接続を確認して、もう一度お試しください。",
    cors: "起動している場合は、cors_origins（KBQA_CORS_ORIGINS）でこのサイトのオリジン（{origin}）を許可する必要があります。",
    interrupted: "ページが切り替わったため、回答が中断されました。もう一度質問すると、完全な回答が得られます。"
  };

  // src/lang/pt.js
  var pt_default = {
    title: "Pergunte à documentação",
    placeholder: "Faça uma pergunta sobre esta documentação…",
    newConversation: "Nova conversa",
    close: "Fechar",
    conversation: "Conversa",
    question: "Sua pergunta",
    send: "Enviar",
    sendQuestion: "Enviar pergunta",
    stop: "Parar",
    stopAnswering: "Parar a resposta",
    disclaimer: "As respostas vêm desta documentação e podem conter erros: confira as fontes.",
    keys: "{keys} abre, Esc fecha.",
    intro: "Pergunte qualquer coisa sobre esta documentação. Cada resposta cita os trechos de onde vem: clique em um número para abri-lo e destacá-lo.",
    suggested: "Perguntas sugeridas",
    sources: "Fontes",
    sourcesCopied: "Fontes:",
    source: "Fonte",
    sourceN: "Fonte {n}",
    sourceCount: "{n:# fonte|# fontes}.",
    openHint: "Abrir a página com este trecho destacado",
    passageShown: "Trecho destacado em {where}.",
    rest: "… (o restante está na conversa)",
    truncated: "Resposta truncada: era longa demais para ser exibida por inteiro.",
    noAnswer: "Nenhuma resposta foi recebida.",
    stopped: "Interrompida.",
    copyCode: "Copiar código",
    codeCopied: "Código copiado",
    copyAnswer: "Copiar resposta",
    answerCopied: "Resposta copiada",
    copied: "Copiado",
    helpful: "Útil",
    notHelpful: "Não foi útil",
    reason: "Motivo (opcional)",
    whatHelped: "O que ajudou? (opcional)",
    whatWasWrong: "O que estava errado ou faltou? (opcional)",
    thanks: "Obrigado pelo feedback.",
    indexing: "A documentação ainda está sendo indexada. Sua pergunta será respondida assim que isso terminar…",
    indexingOf: "A documentação ainda está sendo indexada: {done} de {total} seções. Sua pergunta será respondida assim que isso terminar…",
    tooLong: "A pergunta é longa demais. Encurte-a e pergunte novamente.",
    tooMany: "Muitas perguntas no momento.",
    tryAgainIn: "Tente novamente em {seconds} s.",
    noService: "Nenhum serviço de respostas do kb-qa em {url} (HTTP {status}). Inicie o kb-qa serve ou configure o endpoint do widget.",
    serviceFailed: "O serviço de respostas falhou (HTTP {status}). Tente novamente em instantes.",
    webPage: "O serviço de respostas em {url} enviou uma página web, não uma resposta: aponte o endpoint do widget para o kb-qa serve.",
    noAnswerSent: "O serviço de respostas não enviou nenhuma resposta. Tente novamente.",
    questionBack: "Sua pergunta voltou para a caixa: pressione Enter para perguntar de novo.",
    failed: "A resposta falhou. Tente novamente.",
    modelFailed: "O modelo de linguagem não conseguiu concluir a resposta. Tente novamente.",
    modelTimeout: "O modelo de linguagem demorou demais para responder. Tente novamente.",
    cutOff: "A resposta foi cortada: a conexão foi encerrada antes da hora. Tente novamente.",
    silent: "O serviço de respostas parou de responder. Tente novamente.",
    offline: "Parece que você está offline. Verifique sua conexão e tente novamente.",
    unreachable: "Não foi possível acessar o serviço de respostas em {url} ({error}). Verifique sua conexão e tente novamente.",
    cors: "Se ele estiver em execução, precisa permitir a origem deste site ({origin}) em cors_origins (KBQA_CORS_ORIGINS).",
    interrupted: "A resposta foi interrompida quando a página mudou. Pergunte de novo para obter a resposta completa."
  };

  // src/lang/zh.js
  var zh_default = {
    title: "问问文档",
    placeholder: "输入关于本文档的问题…",
    newConversation: "新对话",
    close: "关闭",
    conversation: "对话",
    question: "你的问题",
    send: "发送",
    sendQuestion: "发送问题",
    stop: "停止",
    stopAnswering: "停止回答",
    disclaimer: "回答来自本文档，可能有误，请核对来源。",
    keys: "{keys} 打开，Esc 关闭。",
    intro: "关于本文档的问题都可以问。每个回答都会注明出处：点击编号即可打开并高亮对应段落。",
    suggested: "推荐问题",
    sources: "来源",
    sourcesCopied: "来源：",
    source: "来源",
    sourceN: "来源 {n}",
    sourceCount: "共 {n} 个来源。",
    openHint: "打开页面并高亮此段落",
    passageShown: "已高亮 {where} 下的段落。",
    rest: "……（其余内容见对话）",
    truncated: "回答过长，未能完整显示。",
    noAnswer: "没有收到回答。",
    stopped: "已停止。",
    copyCode: "复制代码",
    codeCopied: "代码已复制",
    copyAnswer: "复制回答",
    answerCopied: "回答已复制",
    copied: "已复制",
    helpful: "有帮助",
    notHelpful: "没有帮助",
    reason: "原因（可选）",
    whatHelped: "哪些内容有帮助？（可选）",
    whatWasWrong: "哪里有误或缺少什么？（可选）",
    thanks: "感谢你的反馈。",
    indexing: "文档仍在建立索引，完成后会立即回答你的问题…",
    indexingOf: "文档仍在建立索引：已完成 {done}/{total} 个章节。完成后会立即回答你的问题…",
    tooLong: "问题太长。请缩短后重新提问。",
    tooMany: "当前提问过多。",
    tryAgainIn: "请在 {seconds} 秒后重试。",
    noService: "{url} 上没有 kb-qa 回答服务（HTTP {status}）。请启动 kb-qa serve，或设置组件的 endpoint。",
    serviceFailed: "回答服务出错（HTTP {status}）。请稍后重试。",
    webPage: "{url} 上的回答服务返回了网页而不是回答：请将组件的 endpoint 指向 kb-qa serve。",
    noAnswerSent: "回答服务没有返回回答。请重试。",
    questionBack: "问题已放回输入框：按 Enter 键重新提问。",
    failed: "回答失败。请重试。",
    modelFailed: "语言模型未能完成回答。请重试。",
    modelTimeout: "语言模型响应时间过长。请重试。",
    cutOff: "连接过早关闭，回答被中断。请重试。",
    silent: "回答服务已停止响应。请重试。",
    offline: "您似乎处于离线状态。请检查网络连接后重试。",
    unreachable: "无法连接 {url} 上的回答服务（{error}）。请检查网络连接后重试。",
    cors: "如果服务正在运行，需要在 cors_origins（KBQA_CORS_ORIGINS）中允许本站的来源（{origin}）。",
    interrupted: "页面切换时回答被中断。请重新提问以获取完整回答。"
  };

  // src/strings.js
  var LANGUAGES = { en: en_default, de: de_default, es: es_default, fr: fr_default, it: it_default, ja: ja_default, pt: pt_default, zh: zh_default };
  var PLACE = /\{(\w+)(?::([^{}|]*)\|([^{}|]*))?\}/g;
  function languageOf(tag) {
    const primary = String(tag || "").trim().toLowerCase().split(/[-_]/)[0];
    return Object.prototype.hasOwnProperty.call(LANGUAGES, primary) ? primary : "en";
  }
  function readLabels(given) {
    let data = given;
    if (typeof given === "string") {
      try {
        data = JSON.parse(given);
      } catch (e) {
        data = null;
      }
    }
    const labels = {};
    if (!data || typeof data !== "object" || Array.isArray(data)) return labels;
    for (const key of Object.keys(data)) {
      const value = data[key];
      if (typeof value === "string" && value.trim()) labels[key] = value;
      else if (value && typeof value === "object" && !Array.isArray(value)) labels[key] = readLabels(value);
    }
    return labels;
  }
  function strings(tag, labels) {
    const lang = languageOf(tag);
    const own = labels || {};
    const only = own[lang] && typeof own[lang] === "object" ? own[lang] : {};
    const text = (key) => [only[key], own[key], LANGUAGES[lang][key], en_default[key]].find((v) => typeof v === "string");
    const unknown = Object.keys(own).filter((k) => !(k in en_default) && !(k in LANGUAGES) && typeof own[k] === "string");
    if (unknown.length && typeof console !== "undefined") console.warn("kb-qa: unknown labels (see widget/src/lang/en.js): " + unknown.join(", "));
    let rules = null;
    try {
      rules = new Intl.PluralRules(lang);
    } catch (e) {
      rules = null;
    }
    const number = (n) => typeof n === "number" ? n.toLocaleString(lang) : String(n);
    const t = (key, values) => {
      const v = values || {};
      const found = text(key);
      if (found == null) return key;
      return found.replace(PLACE, (whole, name, one, other) => {
        if (!(name in v)) return whole;
        if (one == null) return number(v[name]);
        const n = Number(v[name]);
        const single = rules ? rules.select(n) === "one" : n === 1;
        return (single ? one : other).replace(/#/g, number(n));
      });
    };
    t.lang = lang;
    const primary = String(tag || "").trim().toLowerCase().split(/[-_]/)[0];
    t.foreign = !!primary && primary !== lang && !Object.keys(own).length;
    return t;
  }
  var ENGLISH = strings("en");
  function pageLanguage(doc = document) {
    let lang = doc.documentElement && doc.documentElement.lang || "";
    return lang.length <= 35 ? lang : "";
  }

  // src/messages.js
  var MAX_ANSWER_CHARS = 20500;
  var ANNOUNCED_CHARS = 2e3;
  function statusText(st) {
    return st && st.message ? st.message.replace(/(…|\.\.\.)?$/, "…") : "";
  }
  function answerAnnouncement(m, t = ENGLISH) {
    let text = stripMarkdown(withoutBidi(m.text).slice(0, MAX_ANSWER_CHARS).replace(/[ \t]*\[\d{1,3}\]/g, "")).replace(/\s+/g, " ").trim();
    if (text.length > ANNOUNCED_CHARS) text = text.slice(0, ANNOUNCED_CHARS).replace(/\s+\S*$/, "") + " " + t("rest");
    const n = (m.citations || []).length;
    return [text || t("noAnswer"), n ? t("sourceCount", { n }) : ""].filter(Boolean).join(" ");
  }
  function renderAll(w) {
    const { log, input, t } = w.ui;
    const state = w.state;
    log.textContent = "";
    if (!state.messages.length) {
      let empty = el("div", { class: "kbq-empty" }, [el("p", { text: t("intro") })]);
      const copy = w.ui.foot.cloneNode(true);
      copy.className = "kbq-foot-copy";
      empty.appendChild(copy);
      if (w.options.suggested.length) {
        let list = el("ul", { class: "kbq-suggest", "aria-label": t("suggested") });
        w.options.suggested.forEach(function(q) {
          let b = el("button", { type: "button", class: "kbq-chip", text: q });
          b.addEventListener("click", function() {
            input.value = q;
            w.submit();
          });
          list.appendChild(el("li", null, [b]));
        });
        empty.appendChild(list);
      }
      log.appendChild(empty);
      return;
    }
    state.messages.forEach(function(m) {
      m._node = null;
      log.appendChild(renderMessage(w, m));
    });
    const last = state.messages[state.messages.length - 1];
    showStart(log, last._node);
  }
  function showStart(log, node) {
    const end = log.scrollHeight - log.clientHeight;
    const question = node.classList.contains("kbq-bot") && node.previousElementSibling ? node.previousElementSibling : node;
    const offset = (n) => n.getBoundingClientRect().top - log.getBoundingClientRect().top + log.scrollTop;
    let top = offset(question);
    if (question !== node && offset(node) - top > log.clientHeight / 2) top = offset(node);
    log.scrollTop = Math.max(0, Math.min(end, top - 8));
  }
  function renderMessage(w, m) {
    const t = w.ui.t;
    if (m.role === "user") {
      const said = el("span", { class: "kbq-said", text: t("question") + ": " });
      m._node = el("div", { class: "kbq-msg kbq-user" }, [said, el("div", { class: "kbq-bubble", dir: "auto", lang: pageLanguage() || null, text: m.text })]);
      return m._node;
    }
    if (!m._node) {
      m._blocks = null;
      m._node = el("div", { class: "kbq-msg kbq-bot" });
      m._status = el("p", { class: "kbq-status" });
      m._statusKey = m._extraKey = null;
      m._answer = el("div", { class: "kbq-answer", lang: pageLanguage() || null });
      m._extra = el("div", { class: "kbq-extra" });
      m._node.appendChild(m._status);
      m._node.appendChild(m._answer);
      m._node.appendChild(m._extra);
    }
    let streaming = !m.done && !m.error && !m.stopped;
    m._node.setAttribute("aria-busy", String(streaming));
    let st = streaming ? m.status : null;
    m._status.hidden = !st;
    const statusKey = st ? (st.stage || "") + "\n" + (st.message || "") : "";
    if (st && statusKey !== m._statusKey) {
      m._statusKey = statusKey;
      m._status.setAttribute("data-stage", st.stage || "");
      m._status.textContent = "";
      m._status.appendChild(el("span", { class: "kbq-spin", "aria-hidden": "true" }));
      m._status.appendChild(document.createTextNode(statusText(st)));
    }
    const byNumber = {};
    (m.citations || []).forEach(function(c) {
      byNumber[c.number] = c;
    });
    const ctx = {
      base: w.options.root,
      origin: location.origin,
      site: w.options.siteUrl.replace(/\/?$/, "/"),
      known: (n) => !!byNumber[n],
      cite: (n) => (streaming || byNumber[n]) && citeChip(w, n, byNumber[n]),
      copy: (text) => codeCopyButton(w, text)
    };
    const truncated = renderAnswer(m, ctx, (m.citations || []).length + ":" + streaming) || m.truncated;
    if (streaming && m.text) m._answer.appendChild(el("span", { class: "kbq-caret", "aria-hidden": "true" }));
    const extraKey = JSON.stringify([truncated, !!m.done, !!m.text, !!m.stopped, m.error || "", m.updating || "", (m.citations || []).map((c) => c.number + " " + headingPath(c, t) + " " + citationHref(c, w.links)), m.rating || "", !!m.feedbackSent]);
    if (extraKey === m._extraKey) return m._node;
    m._extraKey = extraKey;
    m._extra.textContent = "";
    if (truncated) m._extra.appendChild(el("p", { class: "kbq-note kbq-truncated", text: t("truncated") }));
    if (m.updating && m.done) m._extra.appendChild(el("p", { class: "kbq-note kbq-updating", text: m.updating }));
    if (m.done && !m.text) m._extra.appendChild(el("p", { class: "kbq-note", text: t("noAnswer") }));
    if (m.stopped) m._extra.appendChild(el("p", { class: "kbq-note", text: t("stopped") }));
    if (m.error) m._extra.appendChild(el("p", { class: "kbq-error", text: m.error }));
    if (m.citations && m.citations.length) m._extra.appendChild(sourcesList(w, m.citations));
    if (m.done && m.text) m._extra.appendChild(actions(w, m));
    return m._node;
  }
  function renderAnswer(m, ctx, context) {
    const text = withoutBidi((m.text || "").slice(0, MAX_ANSWER_CHARS));
    const blocks = parseBlocks(text);
    const keys = blocks.map((b) => JSON.stringify(b));
    let old = m._blocks && m._blocks.context === context ? m._blocks : null;
    if (!old) {
      m._answer.textContent = "";
      old = { context, keys: [], nodes: [], laid: [] };
    }
    const caret = m._answer.querySelector(":scope > .kbq-caret");
    if (caret) caret.remove();
    let same = 0;
    while (same < keys.length && same < old.keys.length && keys[same] === old.keys[same]) same++;
    for (let i = old.nodes.length - 1; i >= same; i--) old.nodes[i].remove();
    const nodes = old.nodes.slice(0, same);
    const laid = old.laid.slice(0, same);
    ctx.laid = same ? laid[same - 1] : 0;
    ctx.truncated = false;
    for (let i = same; i < blocks.length && !ctx.truncated; i++) {
      const frag = renderBlocks([blocks[i]], document, ctx);
      const node = frag.firstChild;
      m._answer.appendChild(frag);
      nodes.push(node);
      laid.push(ctx.laid);
    }
    m._blocks = { context, keys: keys.slice(0, nodes.length), nodes, laid };
    return ctx.truncated || (m.text || "").length > MAX_ANSWER_CHARS || nodes.length < blocks.length;
  }
  function updateMessage(w, m, following = atEnd(w.ui.log)) {
    if (!m._node || !m._node.parentNode) renderAll(w);
    else renderMessage(w, m);
    if (following) showStart(w.ui.log, m._node);
  }
  function atEnd(log) {
    return log.scrollHeight - log.scrollTop - log.clientHeight < 48;
  }
  function headingPath(c, t = ENGLISH) {
    return withoutBidi((c.heading_path && c.heading_path.length ? c.heading_path : [c.path || c.url || t("source")]).join(" › "));
  }
  function citeChip(w, n, c) {
    const t = w.ui.t;
    const href = c ? citationHref(c, w.links) : null;
    let chip = el(href ? "a" : "span", {
      class: "kbq-cite",
      href,
      "data-n": String(n),
      "aria-label": c ? t("sourceN", { n }) + ": " + headingPath(c, t) : t("sourceN", { n }),
      tabindex: href ? null : "-1"
    }, [String(n)]);
    if (c) {
      chip._citation = c;
      chip._href = href;
    }
    return el("sup", { class: "kbq-sup" }, [chip]);
  }
  function sourcesList(w, citations) {
    const t = w.ui.t;
    let list = el("ol", { class: "kbq-sources", "aria-label": t("sources") });
    citations.forEach(function(c) {
      const href = citationHref(c, w.links);
      let link = el(href ? "a" : "span", { class: "kbq-source", href }, [
        el("span", { class: "kbq-source-n", text: String(c.number) }),
        el("span", { class: "kbq-source-t", dir: "auto", text: headingPath(c, t) })
      ]);
      link._citation = c;
      link._href = href;
      list.appendChild(el("li", null, [link]));
    });
    return list;
  }
  function codeCopyButton(w, text) {
    const t = w.ui.t;
    let b = iconButton("copy", t("copyCode"), "kbq-copy-code");
    b.addEventListener("click", function() {
      copyText(text).then(function() {
        flashDone(b, t("copied"));
        announce(w.ui.announcer, t("codeCopied"));
      }, function() {
      });
    });
    return b;
  }
  function answerAsText(w, m) {
    const t = w.ui.t;
    let out = withoutBidi(m.text);
    if (m.citations && m.citations.length) {
      out += "\n\n" + t("sourcesCopied") + "\n" + m.citations.map(function(c) {
        return "[" + c.number + "] " + headingPath(c, t) + " — " + (citationHref(c, w.links) || c.url);
      }).join("\n");
    }
    return out;
  }
  function actions(w, m) {
    const t = w.ui.t;
    let row = el("div", { class: "kbq-actions" });
    let copy = iconButton("copy", t("copyAnswer"));
    copy.addEventListener("click", function() {
      copyText(answerAsText(w, m)).then(function() {
        flashDone(copy, t("copied"));
        announce(w.ui.announcer, t("answerCopied"));
      }, function() {
      });
    });
    row.appendChild(copy);
    if (m.feedbackSent) {
      row.appendChild(el("span", { class: "kbq-note", text: t("thanks") }));
      return row;
    }
    if (!m.answerId) return row;
    ["up", "down"].forEach(function(rating) {
      let b = iconButton(rating, t(rating === "up" ? "helpful" : "notHelpful"), "kbq-rate");
      b.setAttribute("aria-pressed", String(m.rating === rating));
      b.addEventListener("click", function() {
        m.rating = rating;
        w.save();
        renderMessage(w, m);
        let box = m._node.querySelector(".kbq-reason input");
        if (box && !touchOnly()) box.focus();
      });
      row.appendChild(b);
    });
    let wrapRow = el("div", null, [row]);
    if (m.rating) {
      let reason = el("input", { type: "text", maxlength: "1000", "aria-label": t("reason"), placeholder: t(m.rating === "up" ? "whatHelped" : "whatWasWrong") });
      let reasonForm = el("form", { class: "kbq-reason" }, [reason, el("button", { type: "submit", class: "kbq-small", text: t("send") })]);
      reasonForm.addEventListener("submit", function(ev) {
        ev.preventDefault();
        w.sendFeedback(m, reason.value.trim());
        renderMessage(w, m);
        if (!touchOnly()) w.ui.input.focus();
      });
      wrapRow.appendChild(reasonForm);
    }
    return wrapRow;
  }

  // src/highlight.js
  var SKIP = ".headerlink, script, style, noscript, template, button, textarea, select, svg, .md-clipboard, .linenos, .linenodiv, .md-annotation, [data-kb-qa-host]";
  var BLOCKS = "p, li, dt, dd, td, th, pre, h1, h2, h3, h4, h5, h6, blockquote, figcaption, summary, caption, div, section, details, article";
  var FOCUS_BLOCKS = "p, li, dt, dd, td, th, pre, h1, h2, h3, h4, h5, h6, blockquote, figcaption, summary, caption";
  var MATH2 = ".arithmatex, mjx-container, .katex-display, .katex, .math";
  var FOCUSABLE = "data-kb-qa-focus";
  var FADE_MS = 4e3;
  var highlightTimer = 0;
  function contentRoot() {
    return document.querySelector(".md-content__inner, article, main, [role=main]") || document.body;
  }
  function squash(text) {
    return String(text).normalize("NFKC").toLowerCase().replace(/[^\p{L}\p{N}]+/gu, "");
  }
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
  var HEADINGS = "h1, h2, h3, h4, h5, h6";
  function section(anchor) {
    let el2 = anchor ? document.getElementById(anchor) || headingNamed(anchor) : null;
    if (!el2) return { nodes: [contentRoot()], heading: null };
    let m = /^H([1-6])$/.exec(el2.tagName);
    let level = m ? +m[1] : 7;
    let ends2 = (n) => {
      let h = /^H([1-6])$/.exec(n.tagName);
      return !!h && +h[1] <= level;
    };
    let holdsEnd = (n) => ends2(n) || Array.prototype.some.call(n.querySelectorAll(HEADINGS), ends2);
    let nodes = [el2];
    let root = contentRoot();
    let at = el2;
    let stop = false;
    for (let n = at.nextElementSibling; n && !(stop = ends2(n)); n = n.nextElementSibling) nodes.push(n);
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
    return { nodes, heading: m ? el2 : null };
  }
  function headingOf(anchor) {
    return section(anchor).heading;
  }
  function collectText(nodes, heading2) {
    let segs = [];
    let text = "";
    let lastBlock = null;
    let headingEnd = 0;
    let read = (node) => {
      let atom = node.nodeType === Node.ELEMENT_NODE && node.matches(MATH2);
      if (node.nodeType === Node.ELEMENT_NODE && !atom) {
        if (!node.matches(SKIP)) Array.prototype.forEach.call(readingOrder(node), read);
        return;
      }
      if (!atom && node.nodeType !== Node.TEXT_NODE) return;
      let data = atom ? ATOM : node.data;
      let block = (atom ? node : node.parentElement).closest(BLOCKS);
      if (block !== lastBlock) text += "\n";
      lastBlock = block;
      segs.push({ node, start: text.length, end: text.length + data.length, atom });
      text += data;
      if (heading2 && heading2.contains(node)) headingEnd = text.length;
    };
    nodes.forEach((root) => {
      if (!(root.parentElement && root.parentElement.closest(SKIP))) read(root);
    });
    return { text, segs, headingEnd };
  }
  function readingOrder(el2) {
    if (el2.classList.contains("tabbed-set")) {
      let labels = el2.querySelectorAll(":scope > .tabbed-labels > label");
      let blocks = el2.querySelectorAll(":scope > .tabbed-content > .tabbed-block");
      if (labels.length && labels.length === blocks.length) {
        let rest = Array.prototype.filter.call(el2.children, (child) => !child.matches(".tabbed-labels, .tabbed-content"));
        return rest.concat(Array.prototype.flatMap.call(labels, (label, i) => [label, blocks[i]]));
      }
    }
    return el2.childNodes;
  }
  function clearHighlights() {
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
  function reveal(marks) {
    let sets = [];
    marks.forEach((el2) => {
      for (let d = el2.closest("details"); d; d = d.parentElement && d.parentElement.closest("details")) d.open = true;
      let p = el2.closest("[role=tabpanel][hidden]");
      if (p) p.parentElement.parentElement.querySelectorAll("[role=tab]")[[...p.parentElement.children].indexOf(p)]?.click();
      let block = el2.closest(".tabbed-block");
      let set = block && block.closest(".tabbed-set");
      if (!set || sets.includes(set)) return;
      sets.push(set);
      let input = set.querySelectorAll(":scope > input")[Array.prototype.indexOf.call(block.parentElement.children, block)];
      if (input && !input.checked) {
        input.checked = true;
        input.dispatchEvent(new Event("change", { bubbles: true }));
      }
    });
  }
  function highlight(anchor, spec, smooth) {
    clearHighlights();
    let sec = section(anchor);
    let col = collectText(sec.nodes, sec.heading);
    let span = findPassage(col.text, spec);
    if (!span && sec.heading) {
      const page = { nodes: [contentRoot()], heading: null };
      const all = collectText(page.nodes, null);
      const found = findPassage(all.text, spec);
      if (found) [sec, col, span] = [page, all, found];
    }
    if (span && sec.heading && span.start < col.headingEnd && span.end > col.headingEnd) {
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
  function focusPassage(marks) {
    if (!marks.length) return false;
    const block = marks[0].parentElement.closest(FOCUS_BLOCKS) || marks[0];
    if (!block.hasAttribute("tabindex")) {
      block.setAttribute("tabindex", "-1");
      block.setAttribute(FOCUSABLE, "");
    }
    block.focus({ preventScroll: true });
    return document.activeElement === block;
  }
  function scrollToMarks(marks, smooth, heading2) {
    let reduce = window.matchMedia && matchMedia("(prefers-reduced-motion: reduce)").matches;
    let behavior = smooth && !reduce ? "smooth" : "auto";
    let doc = document.scrollingElement || document.documentElement;
    if (doc.scrollHeight <= window.innerHeight) {
      marks[0].scrollIntoView({ block: "center", behavior });
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
    let above = heading2 ? heading2.getBoundingClientRect().top : Infinity;
    if (above < top && bottom - above <= room) y = Math.min(y, above - offset);
    window.scrollTo({ top: Math.max(0, window.scrollY + y), behavior });
  }

  // src/shortcut.js
  function parseShortcut(spec, apple) {
    let parts = String(spec || "mod+k").toLowerCase().split("+");
    let key = parts.pop() || "k";
    let mods = { ctrl: false, meta: false, alt: false, shift: false };
    parts.forEach(function(p) {
      if (p === "mod") mods[apple ? "meta" : "ctrl"] = true;
      else if (p in mods) mods[p] = true;
    });
    mods.key = key;
    return mods;
  }
  function matchesShortcut(ev, sc) {
    let key = (ev.key || "").toLowerCase();
    let code = ev.code || "";
    let same = key === sc.key || code === "Key" + sc.key.toUpperCase() || code === "Digit" + sc.key;
    let letter = /^[a-z0-9]$/.test(sc.key);
    return same && ev.ctrlKey === sc.ctrl && ev.metaKey === sc.meta && ev.altKey === sc.alt && (!letter || ev.shiftKey === sc.shift);
  }
  function shortcutLabel(sc, apple) {
    let out = [];
    if (sc.ctrl) out.push(apple ? "⌃" : "Ctrl");
    if (sc.alt) out.push(apple ? "⌥" : "Alt");
    if (sc.shift) out.push(apple ? "⇧" : "Shift");
    if (sc.meta) out.push(apple ? "⌘" : "Meta");
    out.push(sc.key.toUpperCase());
    return out.join(apple ? "" : "+");
  }
  function ariaShortcut(sc) {
    let out = [];
    if (sc.ctrl) out.push("Control");
    if (sc.alt) out.push("Alt");
    if (sc.shift) out.push("Shift");
    if (sc.meta) out.push("Meta");
    out.push(sc.key.toUpperCase());
    return out.join("+");
  }

  // src/panel.js
  var IDS = { panel: "kbq-panel", title: "kbq-title", input: "kbq-input", tip: "kbq-tip" };
  var DOCKED = "data-kb-qa-docked";
  var OPEN = "data-kb-qa-open";
  var MIN_PAGE_WIDTH = 600;
  var FULL_SCREEN = "(max-width: 600px), (max-height: 500px) and (pointer: coarse)";
  function buildPanel(options, shortcut, apple) {
    const t = options.t;
    const host = el("div", { id: "kb-qa", "data-kb-qa-host": "" });
    const shadow = host.attachShadow({ mode: "open" });
    const keys = shortcutLabel(shortcut, apple);
    const launcher = el(
      "button",
      {
        type: "button",
        class: "kbq-launcher",
        "aria-haspopup": "dialog",
        "aria-expanded": "false",
        "aria-controls": IDS.panel,
        "aria-keyshortcuts": ariaShortcut(shortcut),
        "aria-label": options.title + " (" + keys + ")",
        title: options.title + " (" + keys + ")"
      },
      [icon("chat"), el("span", { class: "kbq-launcher-label", text: options.title })]
    );
    const newButton = iconButton("reset", t("newConversation"));
    const closeButton = iconButton("close", t("close"));
    const log = el("div", { class: "kbq-log", role: "log", "aria-live": "off", "aria-label": t("conversation"), tabindex: "-1" });
    const input = el("textarea", { id: IDS.input, class: "kbq-input", dir: "auto", rows: "1", placeholder: options.placeholder, "aria-label": t("question"), enterkeyhint: "send" });
    const sendButton = el("button", { type: "submit", class: "kbq-send", "aria-label": t("sendQuestion"), title: t("send") }, [icon("send")]);
    const form = el("form", { class: "kbq-form" }, [input, sendButton]);
    const foot = el("p", { class: "kbq-foot" }, [t("disclaimer"), el("span", { class: "kbq-keys", text: " " + t("keys", { keys }) })]);
    const panel = el("div", { id: IDS.panel, class: "kbq-panel", role: "dialog", "aria-modal": "true", "aria-labelledby": IDS.title, hidden: true }, [
      el("div", { class: "kbq-head" }, [el("h2", { id: IDS.title, class: "kbq-title", text: options.title }), newButton, closeButton]),
      log,
      form,
      foot
    ]);
    const tip = el("div", { id: IDS.tip, class: "kbq-tip", role: "tooltip", hidden: true });
    const announcer = el("div", { class: "kbq-sr", role: "status", "aria-live": "polite", "aria-atomic": "true" });
    const frame = el("div", { class: "kbq" }, [launcher, panel, tip, announcer]);
    if (t.foreign) {
      frame.setAttribute("lang", t.lang);
      frame.setAttribute("dir", "ltr");
    }
    frame.style.visibility = "hidden";
    const styleLink = el("link", { rel: "stylesheet", href: options.css });
    const show = () => frame.style.removeProperty("visibility");
    styleLink.addEventListener("load", show);
    styleLink.addEventListener("error", show);
    shadow.appendChild(styleLink);
    shadow.appendChild(frame);
    return { host, shadow, frame, launcher, newButton, closeButton, log, input, sendButton, form, foot, panel, tip, announcer, t };
  }
  function initPanel(w) {
    const ui = w.ui;
    let lastFocus = null;
    let backWatcher = null;
    const watchBack = (open) => {
      if (backWatcher) backWatcher.destroy();
      backWatcher = null;
      if (!open || typeof window.CloseWatcher !== "function" || !window.matchMedia || !matchMedia(FULL_SCREEN).matches) return;
      try {
        backWatcher = new window.CloseWatcher();
      } catch (e) {
        return;
      }
      backWatcher.addEventListener("close", () => {
        backWatcher = null;
        w.setOpen(false);
      });
    };
    w.setOpen = (open, focusInput) => {
      if (w.state.open === open && !ui.panel.hidden === open) return;
      w.state.open = open;
      ui.panel.hidden = !open;
      ui.launcher.hidden = open;
      ui.launcher.setAttribute("aria-expanded", String(open));
      document.documentElement.toggleAttribute(OPEN, open);
      w.hideTip();
      watchBack(open);
      if (open) {
        const active = document.activeElement;
        if (active && active !== ui.host && active !== document.body) lastFocus = active;
        w.renderAll();
        w.autosize();
        const place = w.state.place;
        w.state.place = null;
        const back = touchOnly() && w.state.messages.length > 0;
        if (back && place && place.count === w.state.messages.length) ui.log.scrollTop = place.top;
        if (back && focusInput !== false) ui.log.focus({ preventScroll: true });
        else if (focusInput !== false) ui.input.focus();
      } else {
        dock(w, false);
        w.flushFeedback();
        if (focusInput !== false) (lastFocus && document.contains(lastFocus) ? lastFocus : ui.launcher).focus({ preventScroll: true });
        lastFocus = null;
      }
      w.save();
    };
    const docked = () => ui.panel.classList.contains("kbq-docked");
    addEventListener("resize", () => docked() && dock(w, true));
    w.autosize = () => {
      ui.input.style.height = "auto";
      if (ui.input.scrollHeight) ui.input.style.height = Math.min(ui.input.scrollHeight, 160) + "px";
    };
    ["keydown", "keyup", "keypress"].forEach((type) => ui.host.addEventListener(type, (ev) => ev.stopPropagation()));
    ui.frame.addEventListener("keydown", (ev) => {
      if (ev.key === "Escape") {
        ev.preventDefault();
        if (!ui.tip.hidden) w.hideTip();
        else w.setOpen(false);
      } else if (matchesShortcut(ev, w.shortcut)) {
        ev.preventDefault();
        w.setOpen(!w.state.open);
      } else if (ev.key === "Tab" && w.state.open && !docked()) {
        trapFocus(ui, ev);
      }
    });
    let siteHadIt = false;
    window.addEventListener("keydown", (ev) => {
      siteHadIt = ev.key === "Escape" && siteDialogOpen(ev.composedPath ? ev.composedPath() : []);
    }, true);
    window.addEventListener("keydown", (ev) => {
      if (ev.defaultPrevented) return;
      const path = ev.composedPath ? ev.composedPath() : [ev.target];
      const t = path[0] || ev.target;
      const typing = t && (t.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(t.tagName));
      if (ev.key === "Escape" && !typing && docked() && !siteHadIt) {
        w.setOpen(false, false);
        return;
      }
      if (!matchesShortcut(ev, w.shortcut)) return;
      const sc = w.shortcut;
      if (!(sc.ctrl || sc.meta || sc.alt) && typing) return;
      ev.preventDefault();
      if (w.state.open && document.activeElement !== ui.host) ui.input.focus();
      else w.setOpen(!w.state.open);
    });
    ui.launcher.addEventListener("click", () => w.setOpen(true));
    ui.closeButton.addEventListener("click", () => w.setOpen(false));
    ui.newButton.addEventListener("click", () => {
      w.stop();
      w.flushFeedback();
      w.state.messages = [];
      w.renderAll();
      w.save(true);
      ui.input.focus();
      announce(ui.announcer, ui.t("newConversation"));
      clearHighlights();
      const url = new URL(location.href);
      if (url.searchParams.has(HL_PARAM)) {
        url.searchParams.delete(HL_PARAM);
        history.replaceState(history.state, "", url);
      }
    });
    ui.input.value = w.state.draft;
    ui.input.addEventListener("input", () => {
      w.state.draft = ui.input.value;
      w.autosize();
      w.save();
    });
    ui.input.addEventListener("keydown", (ev) => {
      if (ev.key === "Enter" && !ev.shiftKey && !ev.isComposing && ev.keyCode !== 229) {
        ev.preventDefault();
        w.submit();
      }
    });
    let clicked = -Infinity;
    ui.form.addEventListener("submit", (ev) => {
      ev.preventDefault();
      if (ev.timeStamp - clicked < 500) return;
      clicked = ev.timeStamp;
      if (!w.stop()) w.submit();
    });
  }
  function siteDialogOpen(path) {
    const modal = (n) => n && n.nodeType === 1 && (n.tagName === "DIALOG" || n.getAttribute("aria-modal") === "true");
    if (path.some(modal)) return true;
    return !!document.querySelector('input[data-md-toggle="search"]:checked, dialog[open]');
  }
  function trapFocus(ui, ev) {
    const list = Array.prototype.filter.call(ui.panel.querySelectorAll("button, [href], textarea, input, [tabindex]:not([tabindex='-1'])"), (n) => !n.disabled && n.getClientRects().length > 0);
    if (!list.length) return;
    const active = ui.shadow.activeElement;
    const at = list.indexOf(active);
    const outside = at === -1 && !(active && ui.panel.contains(active));
    if (ev.shiftKey && (at === 0 || outside)) {
      ev.preventDefault();
      list[list.length - 1].focus();
    } else if (!ev.shiftKey && (at === list.length - 1 || outside)) {
      ev.preventDefault();
      list[0].focus();
    }
  }
  function setBusy(ui, busy) {
    const t = ui.t;
    const b = ui.sendButton;
    b.replaceChild(icon(busy ? "stop" : "send"), b.firstChild);
    b.setAttribute("aria-label", t(busy ? "stopAnswering" : "sendQuestion"));
    b.title = t(busy ? "stop" : "send");
    b.classList.toggle("kbq-busy", busy);
  }
  function panelCovers(ui, marks) {
    if (ui.panel.hidden || !marks.length) return false;
    const p = ui.panel.getBoundingClientRect();
    return marks.some((m) => {
      const r = m.getBoundingClientRect();
      return r.right > p.left && r.left < p.right;
    });
  }
  function dock(w, on) {
    const root = document.documentElement;
    const width = Math.min(440, Math.round(innerWidth * 0.4));
    on = on && innerWidth - width >= MIN_PAGE_WIDTH;
    if (on) root.style.setProperty("--kb-qa-dock-width", width + "px");
    root.toggleAttribute(DOCKED, on);
    w.ui.panel.classList.toggle("kbq-docked", on);
    w.ui.panel.setAttribute("aria-modal", !on);
    return on;
  }

  // src/sse.js
  function parseSSE(buffer) {
    let events = [];
    let text = buffer.replace(/\r\n/g, "\n");
    let keep = "";
    if (text[text.length - 1] === "\r") {
      keep = "\r";
      text = text.slice(0, -1);
    }
    text = text.replace(/\r/g, "\n");
    let at;
    while ((at = text.indexOf("\n\n")) !== -1) {
      let block = text.slice(0, at);
      text = text.slice(at + 2);
      let name = "message";
      let data = [];
      block.split("\n").forEach(function(line) {
        if (!line || line[0] === ":") return;
        let colon = line.indexOf(":");
        let field = colon === -1 ? line : line.slice(0, colon);
        let value = colon === -1 ? "" : line.slice(colon + 1).replace(/^ /, "");
        if (field === "event") name = value;
        else if (field === "data") data.push(value);
      });
      if (data.length) events.push({ event: name, data: data.join("\n") });
    }
    return { events, rest: text + keep };
  }
  function jsonAnswerText(data) {
    if (data && typeof data.text === "string") return data.text;
    return data && typeof data.answer === "string" ? data.answer : "";
  }

  // src/chat.js
  var HISTORY_MESSAGES = 8;
  var HISTORY_CHARS = 12e3;
  var SILENCE_SECONDS = 45;
  function historyFor(messages, before, question) {
    let turns = [];
    let chars = 0;
    for (let i = before - 1; i >= 0 && turns.length < HISTORY_MESSAGES; i--) {
      const m = messages[i];
      if (m.role === "assistant" && !(m.done && m.text)) {
        const asked = (messages[i - 1] || {}).text;
        if (i === before - 1 ? asked === question : !m.text) {
          i--;
          continue;
        }
        if (!m.text) continue;
      }
      let content = m.text;
      if (chars + content.length > HISTORY_CHARS) break;
      chars += content.length;
      turns.unshift({ role: m.role, content });
    }
    while (turns.length && turns[0].role !== "user") turns.shift();
    return turns;
  }
  function initChat(w) {
    w.controller = null;
    w.apiUrl = (path) => (w.options.endpoint || location.origin) + path;
    w.submit = () => submit(w);
    w.stop = () => {
      if (!w.controller) return false;
      w.controller.abort();
      return true;
    };
  }
  function submit(w) {
    const { input, log } = w.ui;
    const state = w.state;
    const question = input.value.trim();
    if (!question || w.controller) return;
    w.flushFeedback();
    const history2 = historyFor(state.messages, state.messages.length, question);
    let user = { role: "user", text: question };
    let bot = { role: "assistant", text: "", citations: [], status: { stage: "sending", message: "" } };
    state.messages.push(user, bot);
    input.value = "";
    state.draft = "";
    w.autosize();
    if (state.messages.length === 2) renderAll(w);
    else {
      log.appendChild(renderMessage(w, user));
      log.appendChild(renderMessage(w, bot));
    }
    log.scrollTop = log.scrollHeight;
    w.save();
    stream(w, question, history2, bot);
  }
  function fail(w, bot, message) {
    if (w.left) return;
    if (message) bot.error = message;
    else bot.stopped = true;
    const following = atEnd(w.ui.log);
    const at = w.state.messages.indexOf(bot);
    const asked = at > 0 && w.state.messages[at - 1].role === "user" ? w.state.messages[at - 1].text : "";
    const back = asked && !w.ui.input.value.trim();
    if (back) {
      w.ui.input.value = w.state.draft = asked;
      w.autosize();
    }
    updateMessage(w, bot, following);
    message = message || w.ui.t("stopped");
    announce(w.ui.announcer, back ? message + " " + w.ui.t("questionBack") : message);
  }
  function httpMessage(res, data, t = ENGLISH) {
    const message = ownWords(t) ? "" : data && data.error || "";
    if (res.status === 413 && !message) return t("tooLong");
    if (res.status === 429) {
      let wait = parseInt(res.headers.get("Retry-After") || "", 10);
      return (message || t("tooMany")) + (wait > 0 ? " " + t("tryAgainIn", { seconds: wait }) : "");
    }
    if (!(data && data.error) && (res.status === 404 || res.status === 405 || res.status === 501)) {
      return t("noService", { url: res.url, status: res.status });
    }
    return message || t("serviceFailed", { status: res.status });
  }
  function ownWords(t) {
    return t.lang !== "en";
  }
  var ERROR_WORDS = { llm_error: "modelFailed", llm_timeout: "modelTimeout" };
  function errorText(data, t = ENGLISH) {
    const message = data && data.message || "";
    if (message && !ownWords(t)) return message;
    return t(ERROR_WORDS[data && data.code] || "failed");
  }
  function indexingText(data, t = ENGLISH) {
    const done = Number(data && data.embedded) || 0;
    const total = Number(data && data.to_embed) || 0;
    return total ? t("indexingOf", { done, total }) : t("indexing");
  }
  function retryDelay(header) {
    const wait = parseInt(header || "", 10);
    return Math.min(30, Math.max(2, wait > 0 ? wait : 10));
  }
  function pause(seconds, signal) {
    return new Promise(function(resolve, reject) {
      const timer = setTimeout(resolve, seconds * 1e3);
      signal.addEventListener("abort", function() {
        clearTimeout(timer);
        reject(new Error("stopped"));
      }, { once: true });
    });
  }
  function stream(w, question, history2, bot) {
    const t = w.ui.t;
    let ctl = new AbortController();
    w.controller = ctl;
    setBusy(w.ui, true);
    let timing = { submitted: performance.now() };
    w.timing = timing;
    let frameReq = 0;
    let schedule = function() {
      if (!frameReq) frameReq = requestAnimationFrame(function() {
        frameReq = 0;
        updateMessage(w, bot);
      });
    };
    let finished = false;
    let silent = false;
    let idle = 0;
    let alive = function() {
      clearTimeout(idle);
      idle = setTimeout(function() {
        silent = true;
        ctl.abort();
      }, SILENCE_SECONDS * 1e3);
    };
    let handle = function(ev) {
      let data;
      try {
        data = JSON.parse(ev.data);
      } catch (e) {
        return;
      }
      if (ev.event === "status") {
        if (!timing.status) timing.status = performance.now();
        const said = statusText(bot.status);
        bot.status = data;
        if (data.stage === "updating") bot.updating = statusText(data);
        updateMessage(w, bot);
        const now = statusText(data);
        if (now && now !== said) announce(w.ui.announcer, now);
      } else if (ev.event === "delta") {
        if (!timing.delta) timing.delta = performance.now();
        if (bot.text.length <= MAX_ANSWER_CHARS) bot.text += data.text || "";
        else bot.truncated = true;
        schedule();
      } else if (ev.event === "citations") {
        bot.citations = data.citations || [];
        schedule();
      } else if (ev.event === "done") {
        finished = true;
        timing.done = performance.now();
        if (typeof data.text === "string" && data.text) {
          if (data.text.length > MAX_ANSWER_CHARS + 1) bot.truncated = true;
          bot.text = data.text.slice(0, MAX_ANSWER_CHARS + 1);
        }
        bot.done = true;
        bot.mode = data.mode;
        if (typeof data.answer_id === "string") bot.answerId = data.answer_id;
        updateMessage(w, bot);
        announce(w.ui.announcer, answerAnnouncement(bot, t));
      } else if (ev.event === "error") {
        finished = true;
        fail(w, bot, errorText(data, t));
      }
    };
    let post = function() {
      alive();
      return fetch(w.apiUrl("/api/ask"), {
        method: "POST",
        headers: { "Content-Type": "application/json", Accept: "text/event-stream" },
        body: JSON.stringify({ question, history: history2, lang: pageLanguage() }),
        signal: ctl.signal,
        credentials: "omit",
        cache: "no-store"
      }).then(answered);
    };
    let answered = function(res) {
      if (!res.ok) return res.text().then(function(body) {
        let data = {};
        try {
          data = JSON.parse(body) || {};
        } catch (e) {
          data = {};
        }
        if (res.status === 503 && data.code === "indexing") {
          const already = bot.status && bot.status.stage === "indexing";
          bot.status = { stage: "indexing", message: indexingText(data, t) };
          updateMessage(w, bot);
          if (!already) announce(w.ui.announcer, statusText(bot.status));
          clearTimeout(idle);
          return pause(retryDelay(res.headers.get("Retry-After")), ctl.signal).then(post);
        }
        finished = true;
        fail(w, bot, httpMessage(res, data, t));
      });
      const type = res.headers.get("Content-Type") || "";
      if (!/event-stream|json/.test(type)) {
        finished = true;
        fail(w, bot, t("webPage", { url: res.url }));
        return;
      }
      if (!res.body || !/event-stream/.test(type)) {
        return res.json().then(function(data) {
          finished = true;
          const text = jsonAnswerText(data);
          if (!text) {
            fail(w, bot, t("noAnswerSent"));
            return;
          }
          bot.text = text.slice(0, MAX_ANSWER_CHARS + 1);
          bot.truncated = text.length > MAX_ANSWER_CHARS + 1;
          bot.citations = data.citations || [];
          bot.done = true;
          updateMessage(w, bot);
          announce(w.ui.announcer, answerAnnouncement(bot, t));
        });
      }
      let reader = res.body.getReader();
      let decoder = new TextDecoder();
      let buffer = "";
      let pump = function() {
        return reader.read().then(function(chunk) {
          alive();
          if (chunk.done) {
            buffer += decoder.decode();
            parseSSE(buffer + "\n\n").events.forEach(handle);
            return;
          }
          let parsed = parseSSE(buffer + decoder.decode(chunk.value, { stream: true }));
          buffer = parsed.rest;
          parsed.events.forEach(handle);
          return pump();
        });
      };
      return pump().catch(function(err) {
        if (ctl.signal.aborted) throw err;
      });
    };
    post().then(function() {
      if (!finished) fail(w, bot, t("cutOff"));
    }).catch(function(err) {
      if (finished) return;
      if (silent) fail(w, bot, t("silent"));
      else if (ctl.signal.aborted) fail(w, bot);
      else if (navigator.onLine === false) fail(w, bot, t("offline"));
      else {
        let where = w.options.endpoint || location.origin;
        let elsewhere = where.indexOf(location.origin) !== 0;
        let hint = elsewhere ? " " + t("cors", { origin: location.origin }) : "";
        fail(w, bot, t("unreachable", { url: where, error: err && err.message ? err.message : "network error" }) + hint);
      }
    }).then(function() {
      clearTimeout(idle);
      if (w.controller === ctl) w.controller = null;
      setBusy(w.ui, false);
      w.save(true);
    });
  }

  // src/feedback.js
  var STORED_ANSWER_CHARS = 2e3;
  function questionOf(messages, m) {
    for (let i = messages.indexOf(m) - 1; i >= 0; i--) if (messages[i].role === "user") return messages[i].text;
    return "";
  }
  function answerStart(text) {
    let end = Math.min(text.length, STORED_ANSWER_CHARS);
    const last = text.charCodeAt(end - 1);
    if (end < text.length && last >= 55296 && last <= 56319) end -= 1;
    return text.slice(0, end);
  }
  function sendFeedback(w, m, reason) {
    if (!m.rating || m.feedbackSent || !m.answerId) return;
    m.feedbackSent = true;
    w.save();
    const body = { answer_id: m.answerId, question: questionOf(w.state.messages, m), answer: answerStart(m.text || ""), citations: m.citations || [], rating: m.rating };
    if (reason) body.reason = reason;
    try {
      fetch(w.apiUrl("/api/feedback"), {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify(body),
        keepalive: true,
        credentials: "omit"
      }).catch(() => {
      });
    } catch (e) {
    }
  }
  function flushFeedback(w) {
    w.state.messages.forEach((m) => {
      if (m.rating && !m.feedbackSent) sendFeedback(w, m, "");
    });
  }

  // src/navigate.js
  function anchorOf(url) {
    try {
      return decodeURIComponent(url.hash.slice(1));
    } catch (e) {
      return url.hash.slice(1);
    }
  }
  function showPassage(w, anchor, spec, smooth) {
    const marks = highlight(anchor, spec, smooth);
    w.state.highlighted = marks.length;
    if (!marks.length) return;
    const heading2 = headingOf(anchor);
    const where = heading2 ? heading2.textContent.replace(/[¶#]\s*$/, "").trim() : document.title;
    announce(w.ui.announcer, w.ui.t("passageShown", { where }));
    if (w.ui.panel.hidden) return;
    const inPanel = document.activeElement === w.ui.host;
    if (!dock(w, true)) {
      if (!panelCovers(w.ui, marks) && inPanel) return;
      w.setOpen(false, false);
      if (!focusPassage(marks)) w.ui.launcher.focus({ preventScroll: true });
      return;
    }
    if (!inPanel) focusPassage(marks);
    requestAnimationFrame(() => scrollToMarks(marks, smooth, heading2));
  }
  function openCitation(w, href) {
    const url = new URL(href);
    const spec = url.searchParams.get(HL_PARAM);
    if (url.origin === location.origin && url.pathname === location.pathname) {
      history.pushState(null, "", url.href);
      showPassage(w, anchorOf(url), spec, true);
      return;
    }
    w.save(true);
    if (url.origin === location.origin && window.document$ && document.querySelector("[data-md-component=container]")) {
      const a = el("a", { href: url.href, hidden: true });
      document.body.appendChild(a);
      a.click();
      a.remove();
      return;
    }
    location.href = url.href;
  }
  var pending = 0;
  function onPage(w) {
    clearTimeout(pending);
    pending = setTimeout(() => {
      const url = new URL(location.href);
      const spec = url.searchParams.get(HL_PARAM);
      if (spec) showPassage(w, anchorOf(url), spec, false);
      else clearHighlights();
    }, 30);
  }

  // src/options.js
  function widgetScript() {
    return document.currentScript || document.querySelector("script[data-kb-qa-options]") || document.querySelector('script[src*="kb-qa.js"]');
  }
  function readOptions(script) {
    let opts = {};
    let data = script && script.getAttribute("data-kb-qa-options");
    if (data) {
      try {
        opts = JSON.parse(data) || {};
      } catch (e) {
        opts = {};
      }
    } else if (script) {
      let d = script.dataset;
      opts = {
        endpoint: d.endpoint,
        title: d.title,
        placeholder: d.placeholder,
        suggested: d.suggested ? d.suggested.split("|").filter(Boolean) : [],
        shortcut: d.shortcut,
        root: d.root,
        site_url: d.siteUrl,
        preview_endpoint: d.previewEndpoint,
        labels: d.labels
      };
    }
    let src = script && script.src ? script.src : location.href;
    const t = strings(pageLanguage(document), readLabels(opts.labels));
    return {
      endpoint: endpointOf(opts, location),
      title: opts.title || t("title"),
      placeholder: opts.placeholder || t("placeholder"),
      t,
      suggested: Array.isArray(opts.suggested) ? opts.suggested.slice(0, 6).map(String) : [],
      shortcut: opts.shortcut || defaultShortcut(document),
      root: new URL(opts.root != null ? opts.root : "/", location.href).href,
      siteUrl: opts.site_url || "",
      css: src.replace(/\.js(\?.*)?$/, ".css$1")
    };
  }
  function endpointOf(opts, where) {
    let endpoint = String(opts.endpoint || "").replace(/\/+$/, "");
    let preview2 = String(opts.preview_endpoint || "").replace(/\/+$/, "");
    let local = /^(localhost|127\.0\.0\.1|\[::1\])$/.test(where.hostname);
    if (!endpoint && preview2 && local && preview2.indexOf(where.origin) !== 0) return preview2;
    return endpoint;
  }
  function defaultShortcut(doc) {
    let meta = doc.querySelector('meta[name="generator"]');
    let generator = meta ? String(meta.getAttribute("content") || "").toLowerCase() : "";
    return generator.startsWith("zensical") ? "mod+/" : "mod+k";
  }

  // src/state.js
  var KEPT_MESSAGES = 40;
  function createStore(key, interrupted) {
    const state = { open: false, messages: [], draft: "", highlighted: 0, place: null };
    try {
      const saved = JSON.parse(sessionStorage.getItem(key) || "null");
      if (saved && Array.isArray(saved.messages)) {
        state.open = !!saved.open;
        state.draft = String(saved.draft || "");
        if (saved.place && typeof saved.place.top === "number") state.place = saved.place;
        state.messages = saved.messages.map((m) => {
          if (m.role === "assistant" && !m.done && !m.error && !m.stopped) m.error = interrupted;
          return m;
        });
      }
    } catch (e) {
    }
    let timer = 0;
    const write = () => {
      try {
        const messages = state.messages.map((m) => {
          const copy = {};
          for (const k in m) if (k[0] !== "_") copy[k] = m[k];
          return copy;
        });
        sessionStorage.setItem(key, JSON.stringify({ open: state.open, draft: state.draft, place: state.place, messages: messages.slice(-KEPT_MESSAGES) }));
      } catch (e) {
      }
    };
    const save = (now) => {
      clearTimeout(timer);
      if (now) write();
      else timer = setTimeout(write, 300);
    };
    return { state, save };
  }

  // src/tooltip.js
  var PREVIEW_CHARS = 420;
  var ROW = /^\s*(\||[-*+]\s|\d{1,9}[.)]\s|>)/;
  var TITLE = /^\s*(#{1,6}\s|!!!|\?\?\?|===)/;
  var UNDERLINE = /^ {0,3}(=+|-+)\s*$/;
  var FENCE2 = /^\s*(```|~~~)/;
  function preview(c) {
    const heading2 = c.heading_path && c.heading_path[c.heading_path.length - 1];
    const rows = [];
    let fence = false;
    withoutBidi(c.text).replace(/\r\n?/g, "\n").split("\n").forEach((line) => {
      const last = rows[rows.length - 1];
      if (FENCE2.test(line)) {
        fence = !fence;
      } else if (fence) {
        rows.push({ text: line.trim(), open: false });
      } else if (!line.trim()) {
        if (last) last.open = false;
      } else if (last && last.open && UNDERLINE.test(line)) {
        last.open = false;
        last.title = true;
      } else if (last && last.open && !ROW.test(line) && !TITLE.test(line)) {
        last.md += " " + line.trim();
      } else {
        rows.push({ md: line, open: !TITLE.test(line) && !/^\s*\|/.test(line) });
      }
    });
    const out = [];
    rows.forEach((row, i) => {
      const text = row.text != null ? row.text : stripMarkdown(row.md).replace(/\s*\n\s*/g, " ");
      if (!text || i === 0 && (row.title || /^\s*#/.test(row.md || "")) && text === heading2) return;
      out.push(text);
    });
    return out.join("\n");
  }
  function initTooltip(w) {
    const { log, tip } = w.ui;
    let tipFor = null;
    let tipTimer = 0;
    const describe = (on) => tipFor && (on ? tipFor.setAttribute("aria-describedby", tip.id) : tipFor.removeAttribute("aria-describedby"));
    const show = (target) => {
      const c = target._citation;
      clearTimeout(tipTimer);
      describe(false);
      tipFor = target;
      describe(true);
      tip.textContent = "";
      tip.appendChild(el("p", { class: "kbq-tip-path", dir: "auto", text: headingPath(c, w.ui.t) }));
      let passage = preview(c);
      if (passage.length > PREVIEW_CHARS) passage = passage.slice(0, PREVIEW_CHARS).replace(/\s+\S*$/, "") + " …";
      if (passage) tip.appendChild(el("p", { class: "kbq-tip-text", dir: "auto", text: passage }));
      tip.appendChild(el("p", { class: "kbq-tip-hint", text: w.ui.t("openHint") }));
      tip.hidden = false;
      const r = target.getBoundingClientRect();
      const width = Math.min(360, window.innerWidth - 16);
      tip.style.width = width + "px";
      tip.style.maxHeight = "";
      const left = Math.max(8, Math.min(r.left + r.width / 2 - width / 2, window.innerWidth - width - 8));
      const place = tipPlace(r, tip.offsetHeight, Math.max(8, log.getBoundingClientRect().top), window.innerHeight);
      tip.style.left = left + "px";
      tip.style.top = place.top + "px";
      if (place.maxHeight) tip.style.maxHeight = place.maxHeight + "px";
    };
    const hide = () => {
      clearTimeout(tipTimer);
      tip.hidden = true;
      describe(false);
      tipFor = null;
    };
    const later = () => {
      tipTimer = setTimeout(hide, 150);
    };
    w.hideTip = hide;
    log.addEventListener("mouseover", (ev) => {
      const t = sourceTarget(ev);
      if (t && t !== tipFor) show(t);
      else if (t) clearTimeout(tipTimer);
    });
    log.addEventListener("mouseout", (ev) => {
      if (sourceTarget(ev)) later();
    });
    log.addEventListener("focusin", (ev) => {
      const t = sourceTarget(ev);
      if (t) show(t);
    });
    log.addEventListener("focusout", (ev) => {
      if (sourceTarget(ev)) hide();
    });
    log.addEventListener("scroll", () => {
      const chip = tipFor && w.ui.shadow.activeElement === tipFor ? tipFor.getBoundingClientRect() : null;
      const view = log.getBoundingClientRect();
      if (chip && chip.bottom > view.top && chip.top < view.bottom) show(tipFor);
      else hide();
    }, { passive: true });
    tip.addEventListener("mouseenter", () => clearTimeout(tipTimer));
    tip.addEventListener("mouseleave", later);
    tip.addEventListener("mousemove", (ev) => {
      const under = w.ui.shadow.elementsFromPoint(ev.clientX, ev.clientY).map((e) => e.closest(".kbq-cite")).find((c) => c && c !== tipFor);
      if (under && under._citation) show(under);
    });
  }
  function tipPlace(r, h, floor, viewport) {
    const above = r.top - 8 - floor;
    const below = viewport - 8 - (r.bottom + 8);
    if (h <= above) return { top: r.top - h - 8, maxHeight: 0 };
    if (h <= below) return { top: r.bottom + 8, maxHeight: 0 };
    if (above >= below) return { top: floor, maxHeight: Math.max(0, above) };
    return { top: r.bottom + 8, maxHeight: Math.max(0, below) };
  }
  function sourceTarget(ev) {
    const t = ev.target && ev.target.closest ? ev.target.closest(".kbq-cite, .kbq-source") : null;
    return t && t._citation ? t : null;
  }

  // src/main.js
  var SCHEME_ATTRIBUTES = ["data-md-color-scheme", "data-theme", "data-bs-theme"];
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
  function create() {
    const options = readOptions(widgetScript());
    const apple = /Mac|iPhone|iPad|iPod/.test(navigator.userAgentData && navigator.userAgentData.platform || navigator.platform || "");
    const shortcut = parseShortcut(options.shortcut, apple);
    const store = createStore("kb-qa:v1:" + (options.endpoint || location.origin), options.t("interrupted"));
    const w = {
      options,
      links: { root: options.root, siteUrl: options.siteUrl },
      shortcut,
      state: store.state,
      save: store.save,
      ui: buildPanel(options, shortcut, apple),
      timing: null
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
      w.state.place = { count: w.state.messages.length, top: w.ui.log.scrollTop };
      openCitation(w, t._href);
    });
    return w;
  }
  function textScale() {
    const probe = el("span", { "aria-hidden": "true" });
    probe.style.fontSize = "medium";
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
      w.left = 1;
      w.flushFeedback();
      w.save(true);
    });
    let shown = location.pathname;
    const material = window.document$ && typeof window.document$.subscribe === "function";
    if (material) {
      window.document$.subscribe(() => {
        if (!document.body.contains(host)) document.body.appendChild(host);
        shown = location.pathname;
        onPage(w);
      });
    } else onPage(w);
    window.addEventListener("popstate", () => {
      if (!material || location.pathname === shown) onPage(w);
    });
  }
  if (typeof window !== "undefined" && !(window.KbQa && window.KbQa.mounted)) {
    const w = create();
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
      highlight,
      state: w.state,
      get timing() {
        return w.timing;
      },
      options: w.options,
      _test: { HL_PARAM, tokenize, stripMarkdown, fingerprint, findPassage, citationUrl, citationHref, safeHref, parseSSE, parseBlocks, parseInline, renderMarkdown, parseShortcut, matchesShortcut, preview }
    };
    if (document.body) mount(w);
    else document.addEventListener("DOMContentLoaded", () => mount(w));
  }
})();
