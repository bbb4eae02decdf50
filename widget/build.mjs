// Bundle src/main.js and the modules it imports into kb-qa.js, the one plain script site owners
// include, and write src/kb-qa.css without its comments as kb-qa.css. `node build.mjs --check`
// fails when kb-qa.js or kb-qa.css is not what src/ builds (a test runs it).
import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import * as esbuild from "esbuild";

const here = (name) => fileURLToPath(new URL(name, import.meta.url));
const entry = here("src/main.js");
// The header comment of main.js leads the bundle: what this file is and how to include it.
const header = /^\/\*![\s\S]*?\*\//.exec(readFileSync(entry, "utf8"))[0];

const result = await esbuild.build({
  absWorkingDir: here("."), // esbuild names paths (in its warnings) from widget/
  entryPoints: [entry],
  bundle: true,
  format: "iife",
  target: ["es2020"],
  charset: "utf8",
  legalComments: "none",
  // Whitespace only: identifiers keep their names, so a reader's devtools pretty-print reads
  // like src/ (less than esbuild's full minify saves, but the widget had reached its 40 KB
  // gzipped budget, and whitespace and the modules' path comments were 2.9 KB of it).
  minifyWhitespace: true,
  banner: { js: header },
  write: false,
  logLevel: "warning",
});
// The stylesheet's comments are for whoever edits src/kb-qa.css (the bundle drops the modules'
// too): it ships with the first only, what the file is; they were a third of its gzipped size.
const styles = readFileSync(here("src/kb-qa.css"), "utf8");
const lead = /^\/\*[\s\S]*?\*\/\n/.exec(styles)[0];
const css = lead + styles.slice(lead.length).replace(/\/\*[\s\S]*?\*\//g, "").replace(/[ \t]+$/gm, "").replace(/\n\n+/g, "\n");
const built = { "kb-qa.js": result.outputFiles[0].text, "kb-qa.css": css };

for (const [name, code] of Object.entries(built)) {
  const out = here(name);
  if (process.argv.includes("--check")) {
    let committed = "";
    try {
      committed = readFileSync(out, "utf8");
    } catch {
      committed = "";
    }
    if (committed !== code) {
      console.error(`widget/${name} is stale: it is not what widget/src/ builds. Run \`npm run build\` in widget/ and commit ${name}.`);
      process.exit(1);
    }
    console.log(`widget/${name} matches widget/src/`);
  } else {
    writeFileSync(out, code);
    console.log(`wrote ${out} (${code.length} bytes)`);
  }
}
