export { staticLinksCapability } from "./capability";
export {
  type StaticLink,
  type StaticLinksInput,
  type StaticLinksOutput,
  type StaticLinksSettings,
  staticLink,
  staticLinks,
  staticLinksInput,
  staticLinksOutput,
  staticLinksSettings,
} from "./static-links";
