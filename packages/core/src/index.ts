export {
  type BusRule,
  busRules,
  DETAIL_TYPES,
  type DetailType,
  EVENT_SOURCE,
  RECORDER_HANDLER,
  toolHandlerId,
} from "./wiring";
