import type { Command } from "../command.js";
import { agentsCommands } from "./agents.js";
import { approvalsCommands } from "./approvals.js";
import { callsCommands } from "./calls.js";
import { capabilitiesCommands } from "./capabilities.js";
import { connectionsCommands } from "./connections.js";
import { eventsCommands } from "./events.js";
import { keysCommands } from "./keys.js";
import { runsCommands } from "./runs.js";
import { statsCommands } from "./stats.js";
import { subscriptionsCommands } from "./subscriptions.js";
import { toolsCommands } from "./tools.js";
import { toolsetsCommands } from "./toolsets.js";

// Every command `toolbus` has, group by group: the one place that decides what exists. The
// parser, `toolbus --help` (in this order) and the dispatcher all read it; a command's first
// word, when it has two, is the group that `toolbus <group> --help` lists.

export const COMMANDS = {
  ...toolsCommands,
  ...toolsetsCommands,
  ...capabilitiesCommands,
  ...callsCommands,
  ...eventsCommands,
  ...statsCommands,
  ...agentsCommands,
  ...keysCommands,
  ...runsCommands,
  ...approvalsCommands,
  ...subscriptionsCommands,
  ...connectionsCommands,
} satisfies Record<string, Command>;

export type CommandName = keyof typeof COMMANDS;
