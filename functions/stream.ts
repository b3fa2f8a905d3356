import { unitFromEnv } from "@toolbus/core/compose/entry";
import { streamWriterDeps } from "@toolbus/core/compose/stream";
import { createStreamWriter } from "@toolbus/core/runtime";

/** Appends every Toolbus event to the stage-wide stream; fed in order by a FIFO queue. */
export const handler = createStreamWriter(unitFromEnv(streamWriterDeps));
