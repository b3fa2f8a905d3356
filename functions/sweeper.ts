import { unitFromEnv } from "@toolbus/core/compose/entry";
import { sweeperDeps } from "@toolbus/core/compose/sweeper";
import { createSweeper } from "@toolbus/core/runtime";

/** Runs every minute: fails calls stuck in RUNNING past their deadline, and announces them. */
export const handler = createSweeper(unitFromEnv(sweeperDeps));
