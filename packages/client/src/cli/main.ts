import { runCli } from "./index.js";

// The process around runCli: Ctrl-C stops a running command (a second one exits at once), and
// a closed stdout (`toolbus events run-1 --follow | head`) ends the command quietly.
const stop = new AbortController();
process.once("SIGINT", () => {
  stop.abort();
  process.once("SIGINT", () => process.exit(130));
});
process.stdout.on("error", (error: NodeJS.ErrnoException) => {
  if (error.code === "EPIPE") {
    stop.abort();
    process.exit(0);
  }
  throw error;
});

process.exitCode = await runCli(process.argv.slice(2), { signal: stop.signal });
