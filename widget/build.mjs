// Bundle src/main.js and the modules it imports into kb-qa.js, the one plain script site owners
// include. `node build.mjs --check` fails when kb-qa.js is not what src/ builds (a test runs it).
import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import * as esbuild from "esbuild";

const here = (name) => fileURLToPath(new URL(name, import.meta.url));
const entry = here("src/main.js");
const out = here("kb-qa.js");
// The header comment of main.js leads the bundle: what this file is and how to include it.
const header = /^\/\*![\s\S]*?\*\//.exec(readFileSync(entry, "utf8"))[0];

const result = await esbuild.build({
  absWorkingDir: here("."), // module comments in the bundle name paths from widget/
  entryPoints: [entry],
  bundle: true,
  format: "iife",
  target: ["es2020"],
  charset: "utf8",
  legalComments: "none",
  banner: { js: header },
  write: false,
  logLevel: "warning",
});
const code = result.outputFiles[0].text;

if (process.argv.includes("--check")) {
  let committed = "";
  try {
    committed = readFileSync(out, "utf8");
  } catch {
    committed = "";
  }
  if (committed !== code) {
    console.error("widget/kb-qa.js is stale: it is not what widget/src/ builds. Run `npm run build` in widget/ and commit kb-qa.js.");
    process.exit(1);
  }
  console.log("widget/kb-qa.js matches widget/src/");
} else {
  writeFileSync(out, code);
  console.log(`wrote ${out} (${code.length} bytes)`);
}
