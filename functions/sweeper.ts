import { createSweeper, deploymentFromEnv, sweeperDeps } from "@toolbus/core/runtime";

/** Runs every minute: fails calls stuck in RUNNING past their deadline, and announces them. */
export const handler = createSweeper(() => sweeperDeps(deploymentFromEnv()));
