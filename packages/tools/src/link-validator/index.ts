export { checkLink } from "./check";
export { mapWithConcurrency } from "./concurrency";
export { linkValidator, linkValidatorToolset } from "./link-validator";
export {
  LINK_CONCURRENCY,
  LINK_ERROR_KINDS,
  type LinkCheck,
  type LinkValidatorInput,
  type LinkValidatorOutput,
  linkCheck,
  linkValidatorInput,
  linkValidatorOutput,
  MAX_URLS,
} from "./schemas";
