export {
  type PromptOptions,
  type PromptTool,
  type RenderedPrompt,
  renderPrompt,
} from "./prompt";
export {
  byCategoryThenId,
  type ExcludedTool,
  type ExclusionReason,
  resolveMode,
  type Selection,
  type SelectionInput,
  type ServedByFallback,
  select,
} from "./select";
