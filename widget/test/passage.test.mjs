// The passage matcher: a citation carries the Markdown of its passage; the page shows rendered
// HTML. findPassage must find the same words in the page's text despite the differences.
import { test } from "node:test";
import assert from "node:assert/strict";
import * as kbqa from "../src/passage.js";

// Text of rendered sections as the widget collects it: text nodes in page order, a newline
// between block elements, permalinks ("¶") and buttons left out.
const RETRIES_PAGE = `
Default retry policy
Out of the box, every job gets the following policy:
Setting
Default
Meaning
retry.max_attempts
5
Total attempts, including the first one
retry.strategy
exponential
How the delay grows between attempts
retry.jitter
0.2
Random spread of ±20% applied to each delay
With these defaults a job that always fails is attempted five times, with
nominal delays of 10 s, 20 s, 40 s and 80 s between attempts: about two and a
half minutes from the first failure to the job being declared dead.
How the backoff delay is computed
For the n-th retry (n = 1 for the delay after the first failed attempt):
The result is capped at max_backoff, then jitter is applied.
Note
The cap is applied before jitter, so an individual delay can exceed
max_backoff by up to the jitter fraction (12 minutes with the defaults).
Server-wide
Change the defaults in lumen.yml; see the retry.* rows of the
configuration reference. Alternatively, set
an environment variable such as LUMEN_RETRY__MAX_ATTEMPTS=8.`;

const TABLE_PASSAGE = `## Default retry policy

Out of the box, every job gets the following policy:

| Setting | Default | Meaning |
|---|---|---|
| \`retry.max_attempts\` | \`5\` | Total attempts, including the first one |
| \`retry.strategy\` | \`exponential\` | How the delay grows between attempts |
| \`retry.jitter\` | \`0.2\` | Random spread of ±20% applied to each delay |

With these defaults a job that always fails is attempted **five times**, with
nominal delays of 10 s, 20 s, 40 s and 80 s between attempts: about two and a
half minutes from the first failure to the job being declared dead.`;

const slice = (text, span) => text.slice(span.start, span.end);

test("a table passage with code spans and bold matches its rendered cells", () => {
  const span = kbqa.findPassage(RETRIES_PAGE, { passage: TABLE_PASSAGE });
  assert.ok(span);
  const found = slice(RETRIES_PAGE, span);
  assert.ok(found.startsWith("Default retry policy\nOut of the box"), found);
  assert.ok(found.endsWith("declared dead."), found);
  assert.ok(!found.includes("How the backoff"));
});

test("the link fingerprint finds the same span as the whole passage", () => {
  const fp = kbqa.fingerprint(TABLE_PASSAGE);
  assert.ok(fp.includes(".."), fp);
  assert.ok(fp.length < 200, fp);
  assert.deepEqual(kbqa.findPassage(RETRIES_PAGE, fp), kbqa.findPassage(RETRIES_PAGE, { passage: TABLE_PASSAGE }));
});

test("admonition markers, link syntax and emphasis do not stop a match", () => {
  const passage = `!!! note
    The cap is applied **before** jitter, so an individual delay can exceed
    \`max_backoff\` by up to the jitter fraction (12 minutes with the defaults).

### Server-wide

Change the defaults in \`lumen.yml\`; see the \`retry.*\` rows of the
[configuration reference](../reference/configuration.md). Alternatively, set
an environment variable such as \`LUMEN_RETRY__MAX_ATTEMPTS=8\`.`;
  const found = slice(RETRIES_PAGE, kbqa.findPassage(RETRIES_PAGE, { passage }));
  assert.ok(found.startsWith("Note\nThe cap is applied"), found);
  assert.ok(found.endsWith("LUMEN_RETRY__MAX_ATTEMPTS=8."), found);
  // Both ends carried in a link work too.
  const viaLink = slice(RETRIES_PAGE, kbqa.findPassage(RETRIES_PAGE, kbqa.fingerprint(passage)));
  assert.equal(viaLink, found);
});

test("a passage in the middle of a section matches only itself", () => {
  const passage = "With these defaults a job that always fails is attempted **five times**, with\nnominal delays of 10 s, 20 s, 40 s and 80 s between attempts.";
  const found = slice(RETRIES_PAGE, kbqa.findPassage(RETRIES_PAGE, { passage }));
  assert.ok(found.startsWith("With these defaults"), found);
  assert.ok(found.endsWith("between attempts"), found);
});

test("the page adding words (line numbers, titles) and dropping some still matches", () => {
  const page = "Intro text here.\nNote\n1\n2\nThe cap is applied before jitter so an individual delay can exceed the cap.\nOther text.";
  const passage = "!!! warning \"\"\n    The cap is applied before jitter, so an individual delay can exceed the (documented) cap.";
  const found = slice(page, kbqa.findPassage(page, { passage }));
  assert.equal(found, "The cap is applied before jitter so an individual delay can exceed the cap.");
});

test("raw HTML in the Markdown is not expected as text; code spans are", () => {
  const page = "Documentation test fixture\nThis page deliberately contains one line of raw HTML in its Markdown source,\nshown below.\nA producer could enqueue a job whose kind was an HTML\nsnippet such as <img src=x onerror=alert(1)>, and the script ran.";
  const fixture = "### Documentation test fixture\n\nThis page deliberately contains one line of raw HTML in its Markdown source,\nshown below.\n\n<img src=\"x\" onerror=\"window.__xss=1\">";
  assert.equal(kbqa.stripMarkdown(fixture), "Documentation test fixture\n\nThis page deliberately contains one line of raw HTML in its Markdown source,\nshown below.");
  const found = slice(page, kbqa.findPassage(page, { passage: fixture }));
  assert.ok(found.endsWith("shown below."), found);
  const code = "A producer could enqueue a job whose kind was an HTML\nsnippet such as `<img src=x onerror=alert(1)>`, and the script ran.";
  assert.ok(kbqa.stripMarkdown(code).includes("<img src=x onerror=alert(1)>"));
  assert.ok(slice(page, kbqa.findPassage(page, { passage: code })).endsWith("the script ran."));
});

test("fenced code keeps its comment lines as text, not as headings", () => {
  const passage = "```bash\n# Inspect the last error of a dead job\nlumen jobs inspect 01HV7R --attempts\n```";
  assert.equal(kbqa.stripMarkdown(passage), "# Inspect the last error of a dead job\nlumen jobs inspect 01HV7R --attempts");
});

test("Chinese passages match character by character", () => {
  const page = "常见问题\n如何轮换令牌？\n运行 lumen token rotate <令牌ID> --grace 24h。在宽限期内，旧令牌和新令牌\n同时有效；默认宽限期为 1 小时。详细说明请参阅\n令牌轮换。\n服务器无法连接怎么办？\n确认 LUMEN_SERVER 的地址正确。";
  const passage = "### 如何轮换令牌？\n\n运行 `lumen token rotate <令牌ID> --grace 24h`。在宽限期内，旧令牌和新令牌\n同时有效；默认宽限期为 **1 小时**。详细说明请参阅\n[令牌轮换](../operations/authentication.md#token-rotation)。";
  const found = slice(page, kbqa.findPassage(page, { passage }));
  assert.ok(found.startsWith("如何轮换令牌"), found);
  assert.ok(found.endsWith("令牌轮换。"), found); // its full stop too, as an English "." is
  assert.ok(!found.includes("服务器"));
  const fp = kbqa.fingerprint(passage);
  assert.ok(fp.includes(".."));
  assert.equal(slice(page, kbqa.findPassage(page, fp)), found);
});

test("half-width katakana are words of one character, as their NFKC forms are", () => {
  // The page says "ｺｰﾋｰ" (U+FF65-U+FF9F); the citation carries NFKC's "コーヒー". Read as one
  // word against four, the passage was not found and the highlight fell back to the heading.
  const page = "豆の選び方\nｺｰﾋｰ豆はｴﾁｵﾋﾟｱ産を200gずつ買う。\n挽くのは淹れる直前に。";
  const passage = "ｺｰﾋｰ豆はｴﾁｵﾋﾟｱ産を200gずつ買う。".normalize("NFKC");
  assert.deepEqual(kbqa.words("ｺｰﾋｰ"), ["コ", "ー", "ヒ", "ー"]);
  const found = slice(page, kbqa.findPassage(page, { passage }));
  assert.equal(found, "ｺｰﾋｰ豆はｴﾁｵﾋﾟｱ産を200gずつ買う。");
  assert.equal(slice(page, kbqa.findPassage(page, kbqa.fingerprint(passage))), found);
});

test("an unrelated passage is not found", () => {
  assert.equal(kbqa.findPassage(RETRIES_PAGE, { passage: "Workers register with the scheduler over gRPC streams." }), null);
  assert.equal(kbqa.findPassage(RETRIES_PAGE, { passage: "" }), null);
  assert.equal(kbqa.findPassage("", "anything at all"), null);
});

test("tokenize gives offsets into the original text", () => {
  const text = "Ｆｕｌｌwidth Ünïcode 令牌ID";
  const tokens = kbqa.tokenize(text);
  assert.deepEqual(tokens.map((t) => t.t), ["fullwidth", "ünïcode", "令", "牌", "id"]);
  for (const t of tokens) assert.equal(text.slice(t.s, t.e).normalize("NFKC").toLowerCase(), t.t);
});

test("a footnote's text is text the page shows; a link definition is not", () => {
  const md = "Restores are drilled.[^1]\n\n[^1]: Last drill: 14 January, all green.\n\n[docs]: https://example.com/";
  const plain = kbqa.stripMarkdown(md);
  assert.ok(plain.includes("Last drill: 14 January, all green."), plain);
  assert.ok(!plain.includes("example.com"), plain);
});

// A cited section is as long as the page made it (a paragraph of 60,000 "[" is one 60 KB
// section), and the widget reads it for the link's fingerprint as soon as the answer shows:
// patterns that scanned from every "[", "<", "{" or blank to the line's end froze the
// reader's tab (60 KB of "[": 13 s). Each reaches a bounded distance now.
for (const opener of ["[", "[[", "![", "[^", " ", "\t", "<a ", "{#", "[a](", "|---|", "a #"]) {
  test(`a 60 KB run of ${JSON.stringify(opener)} is read in linear time`, () => {
    const text = "Widgets " + opener.repeat(Math.ceil(60000 / opener.length)) + " end";
    const started = performance.now();
    const fp = kbqa.fingerprint(text);
    kbqa.stripMarkdown(text);
    const took = performance.now() - started;
    assert.ok(took < 1000, `${Math.round(took)} ms`);
    assert.ok(fp.startsWith("widgets"), fp.slice(0, 40));
  });
}

test("links, images, footnotes, tags, attribute lists and heading marks read as before", () => {
  const cases = [
    ["See [the retry guide](retries.md#backoff) first.", "See the retry guide first."],
    ["Read [Lisp](https://en.wikipedia.org/wiki/Lisp_(language) \"Lisp\").", "Read Lisp."],
    ["Logo ![Lumen](logo.png) here.", "Logo here."],
    ["A [ref][r] and a note[^1].", "A ref and a note."],
    ["Press <kbd>Ctrl</kbd> <b class=\"x\">K</b>.", "Press Ctrl K ."],
    ["## Retries {#retries .big} ##", "Retries"],
    ["Defaults {: .note } apply.", "Defaults apply."],
    ["<https://example.com/x>", "https://example.com/x"],
    ["| a | b |\n|---|:--:|\n| 1 | 2 |", "a b\n1 2"],
    ["|  ---  |  ---  |   ", ""],
  ];
  for (const [md, shown] of cases) assert.equal(kbqa.stripMarkdown(md), shown, md);
});

test("a link's fingerprint is read for at most the words a fingerprint holds", () => {
  // ?kbqa-hl= comes from whatever link a reader followed: 50,000 words in it made the
  // alignment over a long section take 6 s. A fingerprint holds 28 words at most.
  const page = Array.from({ length: 5000 }, (_, i) => "word" + (i % 97)).join(" ");
  const huge = Array.from({ length: 50000 }, (_, i) => "word" + (i % 89)).join(" ");
  const started = performance.now();
  kbqa.findPassage(page, huge);
  kbqa.findPassage(page, huge + ".." + huge);
  const took = performance.now() - started;
  assert.ok(took < 1000, `${Math.round(took)} ms`);
  // A real fingerprint still finds its passage.
  const text = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi";
  const fp = kbqa.fingerprint(text);
  const found = kbqa.findPassage("Intro words. " + text + " More words.", fp);
  assert.deepEqual(found, { start: 13, end: 13 + text.length });
});

test("a link whose text holds a code span leaves no URL words behind", () => {
  // uv's docs: "[the `torchtriton` attack](https://pytorch.org/blog/...) from December 2022."
  // The target's seven words filled the link's fingerprint, whose end then matched nothing:
  // only the passage's first words were highlighted.
  const passage = "The intent is to prevent confusion. See, for example,\n[the `torchtriton` attack](https://pytorch.org/blog/compromised-nightly-dependency/) from\nDecember 2022. Set [`repo_url`][repo_url] too.";
  assert.equal(kbqa.stripMarkdown(passage), "The intent is to prevent confusion. See, for example,\n[the torchtriton attack from\nDecember 2022. Set [repo_url too.");
  const page = "Intro.\nThe intent is to prevent confusion. See, for example,\nthe torchtriton attack from\nDecember 2022. Set repo_url too.\nNext paragraph.";
  const found = slice(page, kbqa.findPassage(page, kbqa.fingerprint(passage)));
  assert.ok(found.startsWith("The intent") && found.endsWith("repo_url too."), found);
});

test("tab labels and admonition titles show no icon shortcodes; a code block shows its title", () => {
  const passage = '=== ":material-arrow-up-circle: Rank up"\n\n    ``` yaml title="mkdocs.yml"\n    search:\n      boost: 2\n    ```\n\n!!! tip ":octicons-light-bulb-16: Boost gently"';
  assert.equal(kbqa.stripMarkdown(passage), "Rank up\n\nmkdocs.yml\nsearch:\nboost: 2\n\nBoost gently");
});

test("a passage ending in two lines of code with the same words is found to its last line", () => {
  // pydantic's migration guide: the link's last twelve words are the last line's, and the line
  // before it has the same words (only a "/" differs). The first of the two was taken as the end.
  const passage = "Pydantic V2 uses Rust's [Url](https://crates.io/crates/url) crate for URL validation.\nOne notable difference is that the new `Url` types append slashes to the validated version if no path is included:\n\n```python\nfrom pydantic import AnyUrl\n\nassert str(AnyUrl(url='https://google.com')) == 'https://google.com/'\nassert str(AnyUrl(url='https://google.com/api')) == 'https://google.com/api'\nassert str(AnyUrl(url='https://google.com/api/')) == 'https://google.com/api/'\n```";
  const last = "assert str(AnyUrl(url='https://google.com/api/')) == 'https://google.com/api/'";
  const page = "URL and DSN types\nPydantic V2 uses Rust's Url crate for URL validation.\nOne notable difference is that the new Url types append slashes to the validated version if no path is included:\nfrom pydantic import AnyUrl\n\nassert str(AnyUrl(url='https://google.com')) == 'https://google.com/'\nassert str(AnyUrl(url='https://google.com/api')) == 'https://google.com/api'\n" + last + "\nNext paragraph.";
  const fp = kbqa.fingerprint(passage);
  assert.ok(fp.includes(".."), fp); // long enough for a link to carry both ends only
  const found = slice(page, kbqa.findPassage(page, fp));
  assert.ok(found.startsWith("Pydantic V2") && found.endsWith(last.slice(0, -2)), found);
});

test("a passage's last words said again after it do not stretch it", () => {
  // The same last line in the next block: not a repeat at the passage's end.
  const passage = "Pydantic V2 uses Rust's Url crate for URL validation. One notable difference is that the new Url types append slashes to the validated version:\n\n```python\nassert str(AnyUrl(url='https://google.com/api')) == 'https://google.com/api'\n```";
  const line = "assert str(AnyUrl(url='https://google.com/api')) == 'https://google.com/api'";
  const page = "Pydantic V2 uses Rust's Url crate for URL validation. One notable difference is that the new Url types append slashes to the validated version:\n" + line + "\nFor example, in a test:\nthe same call " + line;
  const found = slice(page, kbqa.findPassage(page, kbqa.fingerprint(passage)));
  assert.ok(found.endsWith(line) && !found.includes("For example"), found);
});

test("a passage whose last words also open it is marked to its end, not to their first place", () => {
  // Paperless-ngx: a traceback whose last line repeats its first; the link's last words were
  // aligned at their first place, and only the first line was marked.
  const lines = ["FATAL lumen.server: panic in scheduler loop: index out of range"];
  for (let i = 0; i < 6; i++) lines.push(`  at scheduler.tick (loop.go:${40 + i}) frame ${i} of the trace`);
  lines.push(lines[0]);
  const code = lines.join("\n");
  const passage = "The server logs this when it stops:\n\n```text\n" + code + "\n```";
  const page = "Crashes\nThe server logs this when it stops:\n" + code + "\nRestart it with lumen serve.";
  const fp = kbqa.fingerprint(passage);
  assert.ok(/\.\.\d+\.\./.test(fp), fp); // the passage's length travels in the link
  const found = slice(page, kbqa.findPassage(page, fp));
  assert.ok(found.startsWith("The server logs") && found.endsWith("index out of range"), found);
  assert.ok(found.includes("frame 5 of the trace"), found);
  // A link written before the length was carried still finds the passage's start.
  const old = fp.replace(/\.\.\d+\.\./, "..");
  assert.ok(slice(page, kbqa.findPassage(page, old)).startsWith("The server logs"));
});

test("a passage's own punctuation at its ends is marked: placeholders keep their brackets", () => {
  const page = "Run it\nRun docker compose exec webserver <command> <arguments>\nThen (after a restart) it works.";
  const passage = "Run `docker compose exec webserver <command> <arguments>`";
  assert.equal(slice(page, kbqa.findPassage(page, { passage })), "Run docker compose exec webserver <command> <arguments>");
  assert.equal(slice(page, kbqa.findPassage(page, kbqa.fingerprint(passage))), "Run docker compose exec webserver <command> <arguments>");
  const aside = "(after a restart) it works.";
  assert.equal(slice(page, kbqa.findPassage(page, kbqa.fingerprint(aside))), aside);
  // Punctuation the passage does not have is not marked ("works" then "." on the page).
  assert.equal(slice(page, kbqa.findPassage(page, { passage: "after a restart it works" })), "after a restart) it works");
});

test("a call's empty parentheses are marked with it: `lumen.serve()`, `print(client.zones())`", () => {
  // A QA pass's screenshots: the marks ended at "serve" and "zones". The link carried ")" and
  // "))" as the passage's end (its "(" was not punctuation), and the page has "()" and "())" there.
  const page = "Serving\nimport lumen\nlumen.serve()\nZones\nprint(client.zones()).\nAfter.";
  for (const [passage, marked] of [
    ["```python\nimport lumen\nlumen.serve()\n```", "import lumen\nlumen.serve()"],
    ["```python\nprint(client.zones())\n```", "print(client.zones())"],
    ["`print(client.zones()).`", "print(client.zones())."],
  ]) {
    assert.equal(slice(page, kbqa.findPassage(page, { passage })), marked);
    assert.equal(slice(page, kbqa.findPassage(page, kbqa.fingerprint(passage))), marked);
  }
});

test("a code example's opening and closing markup is marked with it", () => {
  // Zensical's starter page: "How do I make text bold?" quotes a Markdown example whose
  // "**" and "> " the page shows as code; they were left out of the mark.
  const page = "Formatting\nText can be **bold text** or ~~struck~~.\n> Blockquote line\nAfter.";
  for (const [passage, marked] of [
    ["```md\nText can be **bold text**\n```", "Text can be **bold text**"],
    ["```md\n~~struck~~\n```", "~~struck~~"],
    ["```md\n> Blockquote line\n```", "> Blockquote line"],
  ]) {
    assert.equal(slice(page, kbqa.findPassage(page, { passage })), marked);
    assert.equal(slice(page, kbqa.findPassage(page, kbqa.fingerprint(passage))), marked);
  }
});

test("French punctuation is marked with its passage: the space before ? ! : ; » and after «", () => {
  // The mark stopped at "« clé inconnue" and left " »." out, left "\u00a0!" out, and
  // left the opening "«\u00a0" out: the space French sets there was not taken as its own.
  const page = "Erreurs\nLe serveur affiche l’avertissement « clé inconnue ». Puis il s’arrête.\n" +
    "Démarrage\nLa barre indique synchronisation en cours\u00a0! Patientez.\n" +
    "Accueil\n«\u00a0Bonjour et bienvenue\u00a0» est le titre. Questions\u202f? Aucune.";
  for (const passage of [
    "Le serveur affiche l’avertissement « clé inconnue ».",
    "La barre indique synchronisation en cours\u00a0!",
    "«\u00a0Bonjour et bienvenue\u00a0» est le titre.",
    "« Bonjour et bienvenue »",
    "Questions\u202f?",
  ]) {
    const marked = passage.replace("« Bonjour et bienvenue »", "«\u00a0Bonjour et bienvenue\u00a0»");
    assert.equal(slice(page, kbqa.findPassage(page, { passage })), marked);
    assert.equal(slice(page, kbqa.findPassage(page, kbqa.fingerprint(passage))), marked);
  }
});

// A section with math as highlight.js reads it: each formula element (MathJax's, KaTeX's, or
// arithmatex's span with its TeX) is one character, passage.ATOM.
const F = "\uE000";
const MATH_PAGE = `How do I compute the mean?
The sample mean is ${F} and the variance is
${F}.
The bisection method halves the bracket ${F} each step, so after ${F} steps the error is at most
${F}
Bisection converges linearly with rate ${F} and needs ${F}.
Let ${F} be the probability simplex; for ${F} and ${F} we write ${F}.
It costs $5 and $10 to print, ${F} each.`;

test("a passage's math spans match the page's formulas, one for one", () => {
  const cases = [
    [
      "The sample mean is $\\bar{x} = \\frac{1}{n}\\sum_{i=1}^{n} x_i$ and the variance is\n$s^2 = \\frac{1}{n-1}\\sum_{i=1}^{n} (x_i - \\bar{x})^2$.",
      `The sample mean is ${F} and the variance is\n${F}.`,
    ],
    [
      "at most\n\n$$\n|x_n - x^*| \\le \\frac{b - a}{2^{n+1}}\n$$\n\nBisection converges linearly with rate \\(1/2\\) and needs $f(a) \\cdot f(b) < 0$.",
      `at most\n${F}\nBisection converges linearly with rate ${F} and needs ${F}.`,
    ],
    [
      "Let $S = \\{ x \\in \\mathbb{R}^n : x_i > 0 \\ \\text{and}\\ \\sum_i x_i = 1 \\}$ be the probability simplex; for $a<b$ and $b>c$ we write $a<b>c$.",
      `Let ${F} be the probability simplex; for ${F} and ${F} we write ${F}.`,
    ],
    ["It costs $5 and $10 to print, $x_1*y_1$ each.", `It costs $5 and $10 to print, ${F} each.`],
  ];
  for (const [passage, shown] of cases) {
    assert.equal(slice(MATH_PAGE, kbqa.findPassage(MATH_PAGE, { passage })), shown);
    assert.equal(slice(MATH_PAGE, kbqa.findPassage(MATH_PAGE, kbqa.fingerprint(passage))), shown);
  }
  // A display formula alone, in its own lines: \[ .. \] as $$ .. $$.
  assert.equal(kbqa.stripMarkdown("Next:\n\n\\[\nx_{k+1} = x_k - \\frac{f(x_k)}{f'(x_k)}\n\\]\n\nDone.", true), `Next:\n\n${F}\n\nDone.`);
});

test("read as text, a passage's math keeps its characters, as code does", () => {
  assert.equal(kbqa.stripMarkdown("Norm $\\|x\\|_p$, $a_1*b_1*c_1$ and \\(\\{x\\}\\), not $5 *or* $6."), "Norm $\\|x\\|_p$, $a_1*b_1*c_1$ and \\(\\{x\\}\\), not $5 or $6.");
});

test("what Logseq hides is no word of the passage a citation highlights", () => {
  // /view hides a block's id:: and collapsed:: lines and its :LOGBOOK: drawer: a citation
  // holding them highlighted nothing there.
  const md = "\t- restic to B2\n\t  id:: 64f1a2b3-0c1d-4e5f-8a9b-123456789abc\n\t  collapsed:: true\n" +
    "- DONE buy a kettle\n  :LOGBOOK:\n  CLOCK: [2025-03-14 Fri 09:02:11]\n  :END:\n  - 39 euros";
  const plain = kbqa.stripMarkdown(md);
  assert.ok(!/64f1a2b3|collapsed|LOGBOOK|CLOCK/.test(plain), plain);
  assert.ok(plain.includes("restic to B2") && plain.includes("39 euros"), plain);
});
