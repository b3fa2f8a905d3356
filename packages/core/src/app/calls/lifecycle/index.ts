/*
 * The call lifecycle, one owner for every step of a call: how it starts (pending, direct,
 * awaiting approval, refused), claim and release, completion, expiry, its deadlines, the one
 * builder of a failed result, and every event it announces. The API's CallService and the tool
 * runtime both call it; neither decides a step itself.
 */
export {
  announceApprovalRequested,
  announceFinished,
  announceFinishedCall,
  announceScheduled,
  type FinishAnnouncer,
  progressEvent,
  type ScheduledEnvelope,
  scheduledDetail,
  scheduledEntry,
  scheduledEnvelope,
} from "./announce";
export {
  CANCEL_POLL_MS,
  type CancelDeps,
  type CancelOutcome,
  type CancelWatchDeps,
  cancelCall,
  RunningCalls,
  watchCancel,
} from "./cancel";
export { type DecisionDeps, decideApproval, expireApprovals } from "./decide";
export {
  PROGRESS_WINDOW_MS,
  type ProgressReport,
  type ProgressThrottle,
  type ReportProgress,
  type ThrottleClock,
  throttleProgress,
} from "./progress";
export {
  type CallStart,
  callStart,
  claimDeadline,
  completionTime,
  failedResult,
  initialStatus,
  needsApproval,
  type Produced,
  refusedCall,
  releasedCall,
  resultSize,
} from "./records";
export { type CallReach, type RunDeps, type RunnableCall, type RunOutcome, runCall } from "./run";
export { type SweepDeps, sweep } from "./sweep";
