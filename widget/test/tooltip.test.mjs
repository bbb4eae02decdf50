// The tooltip's preview of a passage: the writer's hard line wraps are joined.
import { test } from "node:test";
import assert from "node:assert/strict";
import { preview, tipPlace } from "../src/tooltip.js";
import { headingPath } from "../src/messages.js";

test("wrapped list items, paragraphs and admonitions read as one line each", () => {
  const text = [
    "### Daylight saving time",
    "",
    "- When clocks jump **forward**, a time that does not exist (for example 02:30",
    "  on the spring transition in `Europe/Berlin`) fires at the next valid minute,",
    "  03:00.",
    "- When clocks jump **back**, a time that occurs twice fires only once, at its",
    "  first occurrence.",
    "",
    "!!! note",
    "    Schedules declared with `every` ignore time zones entirely; a 15-minute",
    "    interval is always 15 minutes of elapsed time.",
  ].join("\n");
  assert.deepEqual(preview({ text, heading_path: ["Cron schedules", "Time zones", "Daylight saving time"] }).split("\n"), [
    "When clocks jump forward, a time that does not exist (for example 02:30 on the spring transition in Europe/Berlin) fires at the next valid minute, 03:00.",
    "When clocks jump back, a time that occurs twice fires only once, at its first occurrence.",
    "note",
    "Schedules declared with every ignore time zones entirely; a 15-minute interval is always 15 minutes of elapsed time.",
  ]);
});

test("table rows and code lines stay lines", () => {
  const text = "| a | b |\n|---|---|\n| 1 | 2 |\n\n```bash\nlumen jobs retry 1\nlumen jobs retry 2\n```";
  assert.deepEqual(preview({ text }).split("\n"), ["a b", "1 2", "lumen jobs retry 1", "lumen jobs retry 2"]);
});

test("bidi overrides in a heading or a passage do not reverse what the reader sees", () => {
  const c = { text: "Download \u202eexe.txt\u202c now.", heading_path: ["Release notes", "Download \u202eexe.txt"] };
  assert.equal(preview(c), "Download exe.txt now.");
  assert.equal(headingPath(c), "Release notes › Download exe.txt");
});

test("a tooltip never covers its own chip: with no room either way it is cut to fit", () => {
  const chip = { top: 300, bottom: 318 };
  assert.deepEqual(tipPlace(chip, 100, 60, 800), { top: 192, maxHeight: 0 }); // above
  assert.deepEqual(tipPlace({ top: 80, bottom: 98 }, 100, 60, 800), { top: 106, maxHeight: 0 }); // below
  const cut = tipPlace(chip, 400, 60, 500); // 232 px above, 166 below: above, cut
  assert.ok(cut.top + cut.maxHeight <= chip.top - 8 && cut.top >= 60, JSON.stringify(cut));
});

test("a heading underlined in the Markdown is a heading, not text its underline continues", () => {
  // scheduling.md's "Misfire handling" is a setext heading: the preview read "Misfire
  // handling ----------------".
  const text = "Misfire handling\n----------------\n\nA run that fires more than\n`misfire_grace` late is skipped.";
  assert.equal(
    preview({ text, heading_path: ["Cron schedules", "Misfire handling"] }),
    "A run that fires more than misfire_grace late is skipped."
  );
  // Under another heading's path the title stays, without its underline.
  assert.equal(preview({ text, heading_path: ["Cron schedules"] }).split("\n")[0], "Misfire handling");
});
