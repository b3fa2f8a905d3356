import { createStreamWriter, deploymentFromEnv, streamWriterDeps } from "@toolbus/core/runtime";

/** Appends every Toolbus event to the stage-wide stream; fed in order by a FIFO queue. */
export const handler = createStreamWriter(() => streamWriterDeps(deploymentFromEnv()));
