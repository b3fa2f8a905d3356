import { createRecorder, deploymentFromEnv, recorderDeps } from "@toolbus/core/runtime";

/** Appends every Toolbus event to its run's event log. */
export const handler = createRecorder(() => recorderDeps(deploymentFromEnv()));
