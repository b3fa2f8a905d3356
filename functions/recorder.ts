import { unitFromEnv } from "@toolbus/core/compose/entry";
import { recorderDeps } from "@toolbus/core/compose/recorder";
import { createRecorder } from "@toolbus/core/runtime";

/** Appends every Toolbus event to its run's event log. */
export const handler = createRecorder(unitFromEnv(recorderDeps));
