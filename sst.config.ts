import type { SSTConfig } from "sst";
import { Toolbus } from "./stacks/Toolbus";

/**
 * Toolbus on AWS, one stack per stage: `npx sst deploy --stage <name>`. Each stage's sizes,
 * retention and runtime configuration are in `stacks/config/<stage>.json`.
 */
export default {
  config(input) {
    return { name: "toolbus", region: input.region ?? process.env.AWS_REGION ?? "us-east-1" };
  },
  stacks(app) {
    app.stack(Toolbus);
  },
} satisfies SSTConfig;
