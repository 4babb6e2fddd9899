// A node:test reporter that writes one line per failed test — its file and line, its name
// and the first line of what it asserted — so scripts/test can end a run by naming every
// failure, however long the log above it. Used beside the spec reporter:
//   node --test --test-reporter=spec --test-reporter-destination=stdout \
//     --test-reporter=./tests/reporter.mjs --test-reporter-destination=FILE …
import { relative } from "node:path";

/** The first line of the error a test failed with (the assertion's own, not the runner's wrapper). */
function firstLine(error) {
  const cause = error?.cause ?? error;
  const text = String(cause?.message ?? cause ?? "failed").trim();
  return text.split("\n").find((l) => l.trim()) ?? text;
}

export default async function* failures(source) {
  for await (const { type, data } of source) {
    if (type !== "test:fail") continue;
    const error = data.details?.error;
    // a suite fails because a test in it did: that test has its own line
    if (data.details?.type === "suite" && error?.failureType === "subtestsFailed") continue;
    const where = data.file ? `${relative(process.cwd(), data.file)}:${data.line ?? "?"}` : "(no file)";
    const why = error?.failureType === "testTimeoutFailure" ? `timed out: ${firstLine(error)}` : firstLine(error);
    yield `${where}  ${data.name}\n    ${why}\n`;
  }
}
