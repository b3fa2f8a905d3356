import * as z from "zod";
import { capabilityStatus } from "../model/capability";

/** `GET /v1/capabilities` and its refresh: each capability's stored status. */
export const capabilitiesView = z.object({ capabilities: z.array(capabilityStatus) });
