import { z } from "zod";
import { command } from "../command.js";
import { json } from "../format.js";
import { statsReport } from "../stats.js";

// `toolbus stats`: the stage's call counters. The report's layout is in ../stats.ts.

export const statsCommands = {
  stats: command({
    usage: "stats",
    summary:
      "Calls by tool since start: outcomes, cache, rate limits, fallbacks, p50 / p99 (admin).",
    args: [],
    options: {},
    help: [
      "Under npm start the server counts every call it ran; on AWS the counters are in",
      "CloudWatch (each tool's function writes its own), and stats says where to look.",
    ],
    schema: z.object({}),
    async run(_args, { client, io, json: asJson }) {
      const metrics = await client.metrics();
      io.stdout.write(asJson ? json(metrics) : statsReport(metrics));
      return 0;
    },
  }),
};
