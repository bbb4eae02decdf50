// Inline Markdown: CommonMark's emphasis rules, links, code spans, citations, and bounded work
// on input built to be slow.
import { test } from "node:test";
import assert from "node:assert/strict";
import { MAX_DEPTH, parseInline } from "../src/inline.js";

/** Nodes as compact HTML-like text, to compare structure at a glance. */
function show(nodes) {
  return nodes
    .map((n) => {
      if (n.type === "text") return n.text;
      if (n.type === "code") return `<code>${n.text}</code>`;
      if (n.type === "cite") return `{${n.n}${n.glued ? " glued" : ""}}`;
      if (n.type === "link") return `<a ${n.href}>${show(n.children)}</a>`;
      return `<${n.type}>${show(n.children)}</${n.type}>`;
    })
    .join("");
}
const md = (s) => show(parseInline(s));

test("emphasis follows CommonMark's delimiter rules", () => {
  assert.equal(md("*a* **b** ***c***"), "<em>a</em> <strong>b</strong> <em><strong>c</strong></em>");
  assert.equal(md("snake_case_name and __init__"), "snake_case_name and <strong>init</strong>");
  assert.equal(md("2 * 3 * 4"), "2 * 3 * 4");
  assert.equal(md("**unclosed and *em*"), "**unclosed and <em>em</em>");
  assert.equal(md("*a **b** c*"), "<em>a <strong>b</strong> c</em>");
  assert.equal(md("**a*"), "*<em>a</em>");
});

test("links nest no links, keep emphasis, and stop at a bounded target", () => {
  assert.equal(md("[*a*](http://x.org/p_(1))"), "<a http://x.org/p_(1)><em>a</em></a>");
  assert.equal(md("[[a](b)](c)"), "[<a b>a</a>](c)");
  assert.equal(md('[t](u "title") [t](<v w>)'), "<a u>t</a> [t](<v w>)");
  assert.equal(md("[a](" + "x".repeat(5000) + ")"), "[a](" + "x".repeat(5000) + ")");
  assert.equal(md("see https://x.org/a). and <https://y.org>"), "see <a https://x.org/a>https://x.org/a</a>). and <a https://y.org>https://y.org</a>");
});

test("code spans match runs of the same length and hide markup", () => {
  assert.equal(md("`a` ``b ` c`` ```d"), "<code>a</code> <code>b ` c</code> ```d");
  assert.equal(md("`*not em*` *em*"), "<code>*not em*</code> <em>em</em>");
  assert.equal(md("\\`not code`"), "`not code`");
});

test("a number glued to a word is marked, so the renderer can leave indexing as text", () => {
  assert.equal(md("Retries back off [1][2]. Tokens.[3] arr[0] word[4] `x`[5] [6](u)"), "Retries back off {1}{2}. Tokens.{3} arr{0 glued} word{4 glued} <code>x</code>{5 glued} <a u>6</a>");
});

test("nesting deeper than MAX_DEPTH stays text", () => {
  const deep = "*".repeat(40) + "a" + "*".repeat(40);
  let depth = 0;
  for (let nodes = parseInline(deep); nodes.length; depth++) nodes = nodes.find((n) => n.children)?.children || [];
  assert.ok(depth <= MAX_DEPTH + 1, `depth ${depth}`);
  // The levels past the limit are shown as the asterisks they were written with.
  const flat = show(parseInline(deep)).replace(/<\/?\w+>/g, "");
  assert.match(flat, /^\*+a\*+$/);
  const links = "[".repeat(30) + "a" + "](u)".repeat(30);
  assert.ok(md(links).includes("<a u>a</a>"));
});

test("input built to be slow parses to its own text", () => {
  for (const p of ["*a ", "_a ", "**a ", "[", "[a](", "[[[a]]] ", "](", "` ``", "<https://"]) {
    const s = p.repeat(20000);
    const text = show(parseInline(s));
    assert.ok(text.length >= s.length * 0.9, p);
  }
});

test("a bracket a quoted passage escapes is its text, not a citation", () => {
  // Extractive answers escape the docs' own "result[1]" or "section [12]" (kb_qa's
  // extractive.literal): the reader sees them as written; a real marker stays a chip.
  assert.equal(md("result\\[1] and section \\[12] of \\[Source 2] [1]"), "result[1] and section [12] of [Source 2] {1}");
});

test("math is its own characters, as code is: no escapes, emphasis, links or citations", () => {
  const norm = "$\\|x\\|_p = \\left( \\sum_{i=1}^{n} |x_i|^p \\right)^{1/p}$";
  assert.equal(md(`The norm is ${norm} [1].`), `The norm is ${norm} {1}.`);
  assert.equal(md("$S = \\{ x \\}$ and $a_1*b_1*c_1$ and *em*"), "$S = \\{ x \\}$ and $a_1*b_1*c_1$ and <em>em</em>");
  assert.equal(md("$[1](x)$ $a<b>c$"), "$[1](x)$ $a<b>c$");
  assert.equal(md("\\(a_1 * b_1 * c\\) and \\(\\{x\\}\\)"), "\\(a_1 * b_1 * c\\) and \\(\\{x\\}\\)");
  assert.equal(md("$$\n\\sum_{i=1}^{n} x_i * y_i\n$$"), "$$\n\\sum_{i=1}^{n} x_i * y_i\n$$");
  assert.equal(md("so\n\\[\n\\bar{x}_1 = \\frac{1}{n}\n\\]"), "so\n\\[\n\\bar{x}_1 = \\frac{1}{n}\n\\]");
  assert.equal(md("$a\\$b_1*c_1$ and \\$x_1*y_1*"), "$a\\$b_1*c_1$ and $x_1<em>y_1</em>");
});

test("prices and dollars that open or close nothing are not math", () => {
  // pandoc's and arithmatex's rule: "$" opens before a non-space, closes after one and not
  // before a digit.
  assert.equal(md("costs $5 and $10 for *a* item"), "costs $5 and $10 for <em>a</em> item");
  assert.equal(md("from $5 to $10, *or* $20"), "from $5 to $10, <em>or</em> $20");
  assert.equal(md("$ a_1*b_1*c $"), "$ a_1<em>b_1</em>c $");
  assert.equal(md("$x$5 *y*"), "$x$5 <em>y</em>");
  assert.equal(md("a \\[2\\] b *c*"), "a [2] b <em>c</em>");
  assert.equal(md("\\(a *b* and $$ *c*"), "(a <em>b</em> and $$ <em>c</em>");
});

test("math openers with no closer are read once", () => {
  for (const p of ["$a ", "\\(", "$$", "\\[\n", "$a\\$"]) {
    const s = p.repeat(20000);
    const started = performance.now();
    const text = show(parseInline(s));
    assert.ok(performance.now() - started < 500, p);
    assert.ok(text.length >= s.length * 0.45, p);
  }
});

test("character references in text are the characters they name; in code and math they are as written", () => {
  // A model's answer copied a page's "&plusmn;0.5&nbsp;&deg;C" and the chat showed it so.
  assert.equal(md("within &plusmn;0.5&nbsp;&deg;C &amp; &#x3bc;s, &#176; &copy;"), "within ±0.5\u00a0°C & μs, ° ©");
  assert.equal(md("`&amp;` and $a &amp; b$ and [&rarr; next](/n)"), "<code>&amp;</code> and $a &amp; b$ and <a /n>→ next</a>");
  // A name not known, no ";", an escaped "&", or no character: as written, or U+FFFD.
  assert.equal(md("&bogus; &amp &#; \\&amp; &#0; &#x110000;"), "&bogus; &amp &#; &amp; \ufffd \ufffd");
  // A decoded character is text, never markup; a bidi control is dropped, as written ones are.
  assert.equal(md("&#42;a&#42; &lt;b&gt; &#x202e;x&#8238;"), "*a* <b> x");
  // One pass: "&amp;lt;" is the text "&lt;".
  assert.equal(md("&amp;lt;"), "&lt;");
});
