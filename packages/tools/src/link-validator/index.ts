export { checkLink } from "./check";
export { mapWithConcurrency } from "./concurrency";
export {
  LINK_CONCURRENCY,
  LINK_ERROR_KINDS,
  type LinkCheck,
  type LinkValidatorInput,
  type LinkValidatorOutput,
  linkCheck,
  linkValidator,
  linkValidatorInput,
  linkValidatorOutput,
  linkValidatorToolset,
  MAX_URLS,
} from "./link-validator";
