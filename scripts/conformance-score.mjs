// Scores one run of the MCP conformance suite (0.2.x, `server
// --requirements REV -o DIR`): counts the check statuses of the scenarios
// the requirement set scores (the run's text output lists the others
// under "Not scored"), prints one line, and exits 1 on any FAILURE or
// WARNING among them.
// Usage: node conformance-score.mjs RESULT.txt OUTDIR LABEL
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";

const [text, dir, label] = process.argv.slice(2);
const out = readFileSync(text, "utf8");
const unscored = new Set();
const tail = out.split(/Not scored for [^:]*:/)[1] ?? "";
for (const m of tail.matchAll(/^\s+[✓✗~]\s+(\S+)\s+\(/gm)) unscored.add(m[1]);

const counts = { SUCCESS: 0, FAILURE: 0, WARNING: 0, INFO: 0, SKIPPED: 0 };
const bad = [];
for (const entry of readdirSync(dir)) {
  const scenario = entry.replace(/^server-/, "").replace(/-\d{4}-\d{2}-\d{2}T.*$/, "");
  if (unscored.has(scenario)) continue;
  for (const c of JSON.parse(readFileSync(join(dir, entry, "checks.json"), "utf8"))) {
    counts[c.status] = (counts[c.status] ?? 0) + 1;
    if (c.status === "FAILURE" || c.status === "WARNING") bad.push(`${scenario}/${c.id}: ${c.status} ${c.errorMessage ?? ""}`);
  }
}
console.log(`${label}: scored checks: ${counts.SUCCESS} passed, ${counts.FAILURE} failed, ${counts.WARNING} warnings, ${counts.INFO} info`);
for (const b of bad) console.log(`  ${b}`);
process.exit(bad.length ? 1 : 0);
