import type { SweepDeps } from "../app/calls/lifecycle";
import type { Deployment } from "../deployment";
import { busOf } from "./bus";
import { callsOf } from "./calls";

/** The sweeper's dependencies: the calls, and the bus it announces on. */
export function sweeperDeps(deployment: Deployment): SweepDeps {
  return { calls: callsOf(deployment), bus: busOf(deployment) };
}
