import { busClient } from "../bus-client";
import type { Deployment } from "../deployment";
import { EventPublisher } from "../events/publisher";
import { shared } from "./pieces";

/** The deployment's publisher, shared by every unit in this process. */
export const busOf = (deployment: Deployment): EventPublisher =>
  shared(
    deployment,
    "bus",
    () => new EventPublisher({ client: busClient(deployment), busName: deployment.busName }),
  );
