import type { CapabilityDetector } from "@toolbus/core/capabilities";
import { staticLinksSettings } from "./settings";

/**
 * `static_links`, named after the tool: whether it has anything to serve on this stage, that
 * is links in `tools.static_links.links`. The tool itself needs none (without links it says
 * so, which is worth an agent knowing), so it does not require this; but it serves as a
 * fallback (web_search's) only when it is there: selection and the runtime read a capability
 * named after a fallback this way (app/selection/select.ts, runtime/policies.ts).
 */
export const staticLinksCapability: CapabilityDetector = {
  name: "static_links",
  description:
    "Links configured for static_links (tools.static_links.links), so it can serve as a fallback.",
  detect: ({ config }) => {
    const parsed = staticLinksSettings.safeParse(config.tools.static_links ?? {});
    const source = "config:tools.static_links.links";
    if (!parsed.success) {
      return {
        available: false,
        reason: "static_links is not configured correctly on this stage.",
        source,
      };
    }
    return parsed.data.links.length > 0
      ? { available: true, source }
      : {
          available: false,
          reason: "static_links has no links configured on this stage.",
          source,
        };
  },
};
