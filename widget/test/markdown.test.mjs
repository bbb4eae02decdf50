import { test } from "node:test";
import assert from "node:assert/strict";
import { readdir, readFile } from "node:fs/promises";
import * as kbqa from "../src/markdown.js";

// A tiny stand-in for `document`: just the calls the widget's Markdown renderer may make.
// It records elements and text nodes, so tests can check that nothing was parsed as HTML.

class Fragment {
  constructor() {
    this.children = [];
    this.isFragment = true;
  }
  get lastChild() {
    return this.children[this.children.length - 1] || null;
  }
  appendChild(child) {
    if (child.isFragment) this.children.push(...child.children);
    else this.children.push(child);
    return child;
  }
}

class Element extends Fragment {
  constructor(tag) {
    super();
    this.isFragment = false;
    this.tagName = tag.toUpperCase();
    this.attributes = {};
  }
  setAttribute(name, value) {
    this.attributes[name] = String(value);
  }
  set className(value) {
    this.attributes.class = value;
  }
  set innerHTML(_) {
    throw new Error("innerHTML must never be used for rendered content");
  }
}

const fakeDocument = {
  createElement: (tag) => new Element(tag),
  createTextNode: (text) => ({
    text: String(text),
    nodeType: 3,
    get data() {
      return this.text;
    },
    set data(value) {
      this.text = value;
    },
  }),
  createDocumentFragment: () => new Fragment(),
};

const escape = (s) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");

/** Serialise like a browser would, escaping text and attribute values. */
function html(node) {
  if ("text" in node) return escape(node.text);
  const inner = node.children.map(html).join("");
  if (node.isFragment) return inner;
  const tag = node.tagName.toLowerCase();
  const attrs = Object.entries(node.attributes)
    .map(([k, v]) => ` ${k}="${escape(v)}"`)
    .join("");
  return `<${tag}${attrs}>${inner}</${tag}>`;
}

/** Every element in the tree, depth first. */
function elements(node) {
  const out = [];
  const walk = (n) => {
    if ("text" in n) return;
    if (!n.isFragment) out.push(n);
    n.children.forEach(walk);
  };
  walk(node);
  return out;
}

/** All text, concatenated. */
function text(node) {
  return "text" in node ? node.text : node.children.map(text).join("");
}


const render = (md, ctx = {}) => kbqa.renderMarkdown(md, fakeDocument, { base: "https://docs.example.com/", origin: "https://docs.example.com", ...ctx });
const tags = (frag) => elements(frag).map((e) => e.tagName.toLowerCase());

test("HTML from the model is shown as text, never as elements", () => {
  const md = [
    "Hello <script>window.__pwned=1</script> and <img src=x onerror=\"window.__pwned=1\">.",
    "",
    "<iframe src=\"javascript:alert(1)\"></iframe>",
    "",
    "- <b onmouseover=alert(1)>item</b>",
    "",
    "| a | <svg onload=alert(1)> |",
    "|---|---|",
    "| `<x>` | y |",
  ].join("\n");
  const frag = render(md);
  const allowed = new Set(["p", "ul", "li", "div", "table", "thead", "tbody", "tr", "th", "td", "code"]);
  for (const tag of tags(frag)) assert.ok(allowed.has(tag), `unexpected element <${tag}>`);
  for (const el of elements(frag)) {
    for (const name of Object.keys(el.attributes)) assert.ok(!name.startsWith("on"), `event handler attribute ${name}`);
  }
  const out = html(frag);
  assert.ok(out.includes("&lt;script&gt;window.__pwned=1&lt;/script&gt;"));
  assert.ok(out.includes("&lt;img src=x onerror=&quot;window.__pwned=1&quot;&gt;"));
  assert.ok(text(frag).includes("<iframe src=\"javascript:alert(1)\"></iframe>"));
});

test("links keep http(s) and relative targets only", () => {
  const frag = render(
    "[ok](https://docs.example.com/a) [rel](../guides/retries.md#policy) [js](javascript:alert(1)) " +
      "[tab](java\tscript:alert(1)) [data](data:text/html,<script>alert(1)</script>) [vb](VBScript:x)"
  );
  const links = elements(frag).filter((e) => e.tagName === "A");
  assert.deepEqual(
    links.map((a) => a.attributes.href),
    ["https://docs.example.com/a", "https://docs.example.com/guides/retries/#policy"]
  );
  // The unsafe ones survive as their text only.
  assert.ok(text(frag).includes("js"));
  assert.ok(!html(frag).includes('href="javascript'));
  assert.ok(!html(frag).includes('href="data'));
});

test("a link out of the site is its text and its address, not a link", () => {
  // A page the model read can ask it to link readers anywhere (a login page to phish with).
  const md =
    "[ evil ](https://evil.example/login) [proto](//evil.example/x) <https://evil.example/auto> " +
    "https://evil.example/bare [at](https://docs.example.com@evil.example/) " +
    "[dot](https://docs.example.com.evil.example/) [](https://evil.example/empty) " +
    "[site](https://site.example/p/) [root](https://cdn.example/docs/p/)";
  const frag = render(md, { base: "https://cdn.example/docs/", site: "https://site.example/" });
  const links = elements(frag).filter((e) => e.tagName === "A");
  assert.deepEqual(
    links.map((a) => [a.attributes.href, a.attributes.target]),
    [["https://site.example/p/", "_blank"], ["https://cdn.example/docs/p/", "_blank"]]
  );
  assert.equal(
    text(frag),
    " evil  (https://evil.example/login) proto (https://evil.example/x) https://evil.example/auto " +
      "https://evil.example/bare at (https://docs.example.com@evil.example/) " +
      "dot (https://docs.example.com.evil.example/)  (https://evil.example/empty) site root"
  );
  // Into the page's own origin: live, in the same tab.
  const own = elements(render("[a](https://docs.example.com/x/)")).find((e) => e.tagName === "A");
  assert.deepEqual(own.attributes, { href: "https://docs.example.com/x/" });
});

test("the supported subset renders to the expected elements", () => {
  const md = [
    "Intro with **bold**, *em*, `code` and snake_case_name.",
    "",
    "1. first",
    "2. second",
    "   - nested",
    "",
    "```python",
    "print('<hi>')",
    "```",
    "",
    "> quoted",
  ].join("\n");
  const copies = [];
  const frag = render(md, {
    copy: (code) => {
      copies.push(code);
      return fakeDocument.createElement("button");
    },
  });
  assert.equal(
    html(frag),
    '<p dir="auto">Intro with <strong>bold</strong>, <em>em</em>, <code>code</code> and snake_case_name.</p>' +
      '<ol><li dir="auto">first</li><li dir="auto"><p dir="auto">second</p><ul><li dir="auto">nested</li></ul></li></ol>' +
      '<div class="kbq-code"><pre><code data-lang="python">print(\'&lt;hi&gt;\')</code></pre><button></button></div>' +
      '<blockquote><p dir="auto">quoted</p></blockquote>'
  );
  assert.deepEqual(copies, ["print('<hi>')"]);
});

test("a note's tasks show as boxes, and text finds its own direction", () => {
  const frag = render("- [ ] Book the venue\n- [x] Send the invites\n- [link](x) stays\n\nשלום עולם");
  assert.equal(
    html(frag),
    '<ul><li class="kbq-task" dir="auto"><input type="checkbox" disabled=""></input>Book the venue</li>' +
      '<li class="kbq-task" dir="auto"><input type="checkbox" disabled="" checked=""></input>Send the invites</li>' +
      '<li dir="auto"><a href="https://docs.example.com/x">link</a> stays</li></ul>' +
      '<p dir="auto">שלום עולם</p>'
  );
});

test("an unfinished code fence while streaming renders without a copy button", () => {
  const frag = render("Run:\n\n```bash\nlumen jobs retry", { copy: () => fakeDocument.createElement("button") });
  assert.deepEqual(tags(frag), ["p", "div", "pre", "code"]);
  assert.equal(text(frag), "Run:lumen jobs retry");
});

test("citations become chips in order; brackets in code or links do not", () => {
  const seen = [];
  const frag = render("Retries back off [1][2]. Use `arr[0]` and [3](https://docs.example.com/x). Tokens [2].", {
    cite: (n) => {
      seen.push(n);
      const sup = fakeDocument.createElement("sup");
      sup.appendChild(fakeDocument.createTextNode(String(n)));
      return sup;
    },
  });
  assert.deepEqual(seen, [1, 2, 2]);
  assert.ok(text(frag).includes("arr[0]"));
  assert.equal(elements(frag).filter((e) => e.tagName === "A").length, 1);
});

test("a marker ctx.cite gives no chip for goes with the space before it", () => {
  const cite = (n) => n === 2 && fakeDocument.createTextNode(`<${n}>`);
  assert.equal(text(render("Paused with pause [1]. Retried [2] and [3][4] then.", { cite })), "Paused with pause. Retried <2> and then.");
});

test("parseInline splits citation groups written back to back", () => {
  const nodes = kbqa.parseInline("a [1][2], b [10]");
  assert.deepEqual(
    nodes.filter((n) => n.type === "cite").map((n) => n.n),
    [1, 2, 10]
  );
});

test("the widget source never assigns innerHTML or uses eval", async () => {
  const src = new URL("../src/", import.meta.url);
  const names = (await readdir(src, { recursive: true })).filter((name) => name.endsWith(".js"));
  const files = names.map((name) => new URL(name, src));
  files.push(new URL("../kb-qa.js", import.meta.url));
  for (const file of files) {
    const source = await readFile(file, "utf8");
    assert.ok(!/\.innerHTML\s*=|outerHTML\s*=|insertAdjacentHTML|document\.write|\beval\(|new Function/.test(source), file.pathname);
  }
});

test("bidi overrides and isolates from a reply are dropped; marks stay", () => {
  const frag = render("Run \u202Eexe.txt\u202C now [1] and \u2066this\u2069, \u200Fok\u200E.", {
    cite: (n) => fakeDocument.createTextNode(`[${n}]`),
  });
  assert.equal(text(frag), "Run exe.txt now [1] and this, \u200Fok\u200E.");
});

test("a heading label the server escaped shows as its text: no chip, no emphasis", () => {
  const seen = [];
  const frag = render("**Options › manylinux-\\*-image, step \\[2\\] of \\_\\_init\\_\\_** [1]", {
    cite: (n) => {
      seen.push(n);
      return fakeDocument.createTextNode(`[${n}]`);
    },
  });
  assert.deepEqual(seen, [1]);
  assert.deepEqual(tags(frag), ["p", "strong"]);
  assert.equal(text(frag), "Options › manylinux-*-image, step [2] of __init__ [1]");
});

test("a display formula is its own characters: its lines are TeX, not a list, heading or quote", () => {
  const variance = render("The variance expands as\n\n$$\n\\sigma^2 = E[X^2]\n- E[X]^2\n$$");
  assert.equal(html(variance), '<p dir="auto">The variance expands as</p><p dir="auto">$$\n\\sigma^2 = E[X^2]\n- E[X]^2\n$$</p>');
  for (const formula of ["$$\na\n+ b\n$$", "$$\n# x\n$$", "$$\n> y\n$$", "$$\n1. z *w* 2. `v`\n$$", "  $$ a\n* b $$"]) {
    assert.equal(html(render(formula)), `<p dir="auto">${escape(formula.trim())}</p>`, formula);
  }
  // It interrupts a paragraph, ends at its closing line (one line when "$$x$$"), and runs on
  // to the end while an answer streams.
  assert.equal(html(render("as\n$$\na\n- b\n$$\n- item")), '<p dir="auto">as</p><p dir="auto">$$\na\n- b\n$$</p><ul><li dir="auto">item</li></ul>');
  assert.equal(html(render("$$x*y*$$\n- item")), '<p dir="auto">$$x*y*$$</p><ul><li dir="auto">item</li></ul>');
  assert.equal(html(render("> $$\n> a\n> - b\n> $$")), '<blockquote><p dir="auto">$$\na\n- b\n$$</p></blockquote>');
  assert.equal(html(render("$$\n\\sigma^2 = E[X^2]\n- E")), '<p dir="auto">$$\n\\sigma^2 = E[X^2]\n- E</p>');
});

test("tab-indented lists nest as space-indented ones do: a tab reaches the next multiple of 4 columns", () => {
  // Logseq indents a note's bullets with tabs; the first-level children lost their "\t-" and
  // ran into their parent's line ("Operating system Debian 12 SSH").
  const nested = '<ul><li dir="auto"><p dir="auto">Operating system</p><ul><li dir="auto">Debian 12</li><li dir="auto">SSH only with keys</li></ul></li></ul>';
  assert.equal(html(render("- Operating system\n\t- Debian 12\n\t- SSH only with keys")), nested);
  assert.equal(html(render("- Operating system\n    - Debian 12\n    - SSH only with keys")), nested);
  const three =
    '<ul><li dir="auto"><p dir="auto">Server</p><ul><li dir="auto"><p dir="auto">Disk</p><ul><li dir="auto">RAID 1</li></ul></li>' +
    '<li dir="auto">Memory</li></ul></li><li dir="auto">Backups</li></ul>';
  assert.equal(html(render("- Server\n\t- Disk\n\t\t- RAID 1\n\t- Memory\n- Backups")), three);
  // Spaces then a tab, a tab then spaces: each counts to its tab stop ("  \t" is 4 columns, not 6).
  assert.equal(html(render("- Server\n  \t- Disk\n\t    - RAID 1\n    - Memory\n- Backups")), three);
  assert.equal(html(render("1. Install\n\t- Debian\n2. Harden")), '<ol><li dir="auto"><p dir="auto">Install</p><ul><li dir="auto">Debian</li></ul></li><li dir="auto">Harden</li></ol>');
});

test("a tab-indented code block in a list item keeps its fence and its own tabs", () => {
  const frag = render("- Build it:\n\t```make\n\tall:\n\t\tcc -o app main.c\n\t```\n- Run it", { copy: () => fakeDocument.createElement("button") });
  assert.equal(
    html(frag),
    '<ul><li dir="auto"><p dir="auto">Build it:</p><div class="kbq-code"><pre><code data-lang="make">all:\n\tcc -o app main.c</code></pre><button></button></div></li>' +
      '<li dir="auto">Run it</li></ul>'
  );
});
