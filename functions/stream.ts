import { unitFromEnv } from "@toolbus/core/compose/entry";
import { streamWriterDeps } from "@toolbus/core/compose/stream";
import { createStreamWriter } from "@toolbus/core/runtime";

/** Appends every run-log entry's events to the stage-wide stream; fed by the table's change stream. */
export const handler = createStreamWriter(unitFromEnv(streamWriterDeps));
