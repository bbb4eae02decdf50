// The widget's Markdown renderer on replies built to be slow to parse: time per KB from 10 KB
// to 1 MB for each pattern (flat = linear). Run: node bench/widget_markdown.mjs
// Prints figures only; the same patterns render in Chromium in tests/test_widget_reading.py.
import { renderMarkdown } from "../widget/src/markdown.js";

// Just enough of `document` for the renderer: it only creates elements, text and fragments.
class Node {
  constructor() {
    this.children = [];
  }
  appendChild(child) {
    this.children.push(child);
    return child;
  }
  setAttribute() {}
  set className(_) {}
}
const doc = {
  createElement: () => new Node(),
  createTextNode: (text) => ({ text }),
  createDocumentFragment: () => new Node(),
};

const PATTERNS = ["*a ", "_a ", "**a ", "[", "[a](", "[[[a]]] ", "](", "`".repeat(7) + " ", "` ``", "| ", "> ", "- ", "<https://", "https://a.b/)"];
const SIZES = [10_000, 100_000, 1_000_000];

function time(md) {
  const start = process.hrtime.bigint();
  renderMarkdown(md, doc, {});
  return Number(process.hrtime.bigint() - start) / 1e6;
}

// Every size renders 2 MB in all (200 × 10 KB … 2 × 1 MB), so each figure pays the same
// garbage collection per KB; the median run is printed. A pass over every size first warms
// the JIT up.
const TOTAL = 2_000_000;

function perKb(p, size) {
  const md = p.repeat(Math.ceil(size / p.length)).slice(0, size);
  const runs = [];
  for (let done = 0; done < TOTAL; done += size) runs.push(time(md));
  runs.sort((a, b) => a - b);
  return runs[runs.length >> 1] / (size / 1000);
}

for (const p of PATTERNS) for (const size of SIZES) perKb(p, size);
console.log(`${"pattern".padEnd(16)}${SIZES.map((s) => `${s / 1000} KB`.padStart(12)).join("")}   ms per KB (median)`);
for (const p of PATTERNS) {
  console.log(JSON.stringify(p).padEnd(16) + SIZES.map((size) => perKb(p, size).toFixed(4).padStart(12)).join(""));
}
