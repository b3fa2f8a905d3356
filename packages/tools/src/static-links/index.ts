export { staticLinksCapability } from "./capability";
export {
  type StaticLink,
  type StaticLinksSettings,
  staticLink,
  staticLinksSettings,
} from "./settings";
export {
  type StaticLinksInput,
  type StaticLinksOutput,
  staticLinks,
  staticLinksInput,
  staticLinksOutput,
} from "./static-links";
