import { parseStageConfig } from "@toolbus/core/config";
import { testToolContext } from "@toolbus/core/testing";
import { toolSpecOf } from "@toolbus/core/tool-definition";
import { toolSpec } from "@toolbus/wire/model";
import { describe, expect, it } from "vitest";
import { staticLinksCapability } from "./capability";
import { type StaticLinksSettings, staticLinksSettings } from "./settings";
import { staticLinks, staticLinksInput, staticLinksOutput } from "./static-links";

const configured = staticLinksSettings.parse({
  links: [
    {
      platform: "github",
      url: "https://github.com/acme/widget",
      label: "Source code",
      tags: ["code", "Contributing"],
    },
    {
      platform: "Discord",
      url: "https://discord.gg/acme",
      label: "Chat with us",
      tags: ["community", "support"],
      description: "Questions and help, answered by maintainers.",
    },
    {
      platform: "mastodon",
      url: "https://fosstodon.org/@acme",
      label: "Release news",
      tags: ["community", "news"],
    },
    { platform: "docs", url: "https://docs.acme.dev", label: "Documentation" },
  ],
});

function context(settings: StaticLinksSettings) {
  return testToolContext(settings, { now: () => new Date("2026-01-15T12:00:00Z") });
}

async function run(input: unknown, settings: StaticLinksSettings = configured) {
  return staticLinks.execute(staticLinksInput.parse(input), context(settings));
}

describe("static_links", () => {
  it("returns every configured link in configured order, with one citation each", async () => {
    const { data, citations, output } = await run({});
    expect(data.links.map((l) => l.label)).toEqual([
      "Source code",
      "Chat with us",
      "Release news",
      "Documentation",
    ]);
    expect(data.total).toBe(4);
    expect(data.filteredBy).toEqual({ limit: 50 });
    expect(citations).toEqual([
      { title: "Source code", url: "https://github.com/acme/widget" },
      {
        title: "Chat with us",
        url: "https://discord.gg/acme",
        snippet: "Questions and help, answered by maintainers.",
      },
      { title: "Release news", url: "https://fosstodon.org/@acme" },
      { title: "Documentation", url: "https://docs.acme.dev" },
    ]);
    expect(output).toContain("- [Source code](https://github.com/acme/widget) (github, #code");
    expect(output).toContain("— Questions and help, answered by maintainers.");
  });

  it("filters by platform ignoring case", async () => {
    const { data } = await run({ platform: "DISCORD" });
    expect(data.links.map((l) => l.url)).toEqual(["https://discord.gg/acme"]);
    expect(data.filteredBy).toEqual({ platform: "DISCORD", limit: 50 });
  });

  it("filters by tag ignoring case", async () => {
    const { data } = await run({ tag: "contributing" });
    expect(data.links.map((l) => l.platform)).toEqual(["github"]);
  });

  it("requires both filters to match when both are given", async () => {
    expect((await run({ platform: "mastodon", tag: "Community" })).data.total).toBe(1);
    expect((await run({ platform: "github", tag: "community" })).data.total).toBe(0);
  });

  it("applies the limit after filtering and reports the full match count", async () => {
    const { data, citations, output } = await run({ tag: "community", limit: 1 });
    expect(data.links.map((l) => l.label)).toEqual(["Chat with us"]);
    expect(data.total).toBe(2);
    expect(citations).toHaveLength(1);
    expect(output).toContain('for tag "community" (1 of 2 links)');
  });

  it("succeeds with an empty list and says so when no links are configured", async () => {
    const settings = staticLinksSettings.parse({});
    const result = await run({ platform: "github" }, settings);
    expect(result.data).toEqual({
      links: [],
      total: 0,
      filteredBy: { platform: "github", limit: 50 },
    });
    expect(result.citations).toEqual([]);
    expect(result.output).toMatch(/No links are configured/);
  });

  it("names the configured platforms and tags when nothing matches", async () => {
    const { data, output } = await run({ platform: "twitter" });
    expect(data.links).toEqual([]);
    expect(output).toContain('No configured link matches platform "twitter".');
    expect(output).toContain("Platforms configured: discord, docs, github, mastodon.");
    expect(output).toContain("Tags in use: code, community, contributing, news, support.");
  });

  it("keeps labels and URLs with Markdown punctuation from breaking the list", async () => {
    const settings = staticLinksSettings.parse({
      links: [
        {
          platform: "website",
          url: "https://en.wikipedia.org/wiki/Widget_(software)",
          label: "Widget [wiki]",
        },
      ],
    });
    const { output } = await run({}, settings);
    expect(output).toContain(
      "- [Widget \\[wiki\\]](<https://en.wikipedia.org/wiki/Widget_(software)>) (website)",
    );
  });

  it("returns data that matches its output schema", async () => {
    for (const input of [{}, { tag: "community", limit: 1 }, { platform: "none" }]) {
      const { data } = await run(input);
      expect(staticLinksOutput.safeParse(data).success).toBe(true);
    }
    const { data } = await run({}, staticLinksSettings.parse({}));
    expect(staticLinksOutput.safeParse(data).success).toBe(true);
  });

  describe("settings schema", () => {
    it("defaults to no links when the stage has no static_links section", () => {
      expect(staticLinksSettings.parse({})).toEqual({ links: [] });
    });

    it("defaults a link's tags to an empty list and trims its text", () => {
      const parsed = staticLinksSettings.parse({
        links: [{ platform: " github ", url: "https://github.com/acme", label: " Code " }],
      });
      expect(parsed.links[0]).toEqual({
        platform: "github",
        url: "https://github.com/acme",
        label: "Code",
        tags: [],
      });
    });

    it.each([
      ["plain http", "http://github.com/acme"],
      ["another scheme", "ftp://files.acme.dev"],
      ["no domain", "https://localhost:8080"],
      ["not a URL", "github.com/acme"],
    ])("rejects a link URL with %s", (_, url) => {
      const result = staticLinksSettings.safeParse({
        links: [{ platform: "github", url, label: "Code" }],
      });
      expect(result.success).toBe(false);
      expect(result.error?.issues[0]).toMatchObject({
        path: ["links", 0, "url"],
        message: "url must be an https URL with a domain name",
      });
    });

    it("rejects a link without a label and unknown fields", () => {
      const noLabel = { platform: "github", url: "https://github.com/acme" };
      expect(staticLinksSettings.safeParse({ links: [noLabel] }).success).toBe(false);
      expect(staticLinksSettings.safeParse({ link: [] }).success).toBe(false);
    });
  });

  describe("input schema", () => {
    it("defaults the limit to 50 and accepts limits from 1 to 100", () => {
      expect(staticLinksInput.parse({})).toEqual({ limit: 50 });
      expect(staticLinksInput.safeParse({ limit: 1 }).success).toBe(true);
      expect(staticLinksInput.safeParse({ limit: 100 }).success).toBe(true);
    });

    it("rejects limits out of range, fractions, empty filters and unknown fields", () => {
      for (const input of [
        { limit: 0 },
        { limit: 101 },
        { limit: 2.5 },
        { platform: "" },
        { tag: "  " },
        { query: "github" },
      ]) {
        expect(staticLinksInput.safeParse(input).success).toBe(false);
      }
    });

    it("accepts every example in the spec", () => {
      const examples = staticLinks.spec.examples ?? [];
      expect(examples.length).toBeGreaterThanOrEqual(2);
      for (const example of examples) {
        expect(staticLinksInput.safeParse(example.input).success).toBe(true);
      }
    });
  });

  it("publishes a valid catalog spec with JSON Schema input and output", () => {
    const spec = toolSpecOf(staticLinks);
    expect(toolSpec.parse(spec)).toEqual(spec);
    expect(spec).toMatchObject({
      id: "static_links",
      toolset: "static_links",
      category: "reference",
      optionality: "optional",
      requires: [],
      produces: ["links", "citations"],
      annotations: { readOnly: true, openWorld: false, idempotent: true },
    });
    expect(spec.setup.map((field) => field.name)).toEqual(["tools.static_links.links"]);
    expect(spec.inputSchema).toMatchObject({
      type: "object",
      properties: {
        platform: { type: "string" },
        tag: { type: "string" },
        limit: { type: "integer", minimum: 1, maximum: 100, default: 50 },
      },
      additionalProperties: false,
    });
    expect(spec.inputSchema.required ?? []).toEqual([]);
    expect(spec.outputSchema).toMatchObject({
      type: "object",
      required: ["links", "total", "filteredBy"],
    });
  });
});

describe("the static_links capability: whether it has anything to serve as a fallback", () => {
  const detect = (tools: unknown) =>
    staticLinksCapability.detect({
      config: parseStageConfig({ tools }),
      secret: () => undefined,
    });

  it("is there when links are configured", () => {
    expect(detect({ static_links: { links: [configured.links[0]] } })).toEqual({
      available: true,
      source: "config:tools.static_links.links",
    });
  });

  it("is missing without links, and says so in words a failure can quote", () => {
    for (const tools of [{}, { static_links: {} }, { static_links: { links: [] } }]) {
      expect(detect(tools)).toEqual({
        available: false,
        reason: "static_links has no links configured on this stage.",
        source: "config:tools.static_links.links",
      });
    }
  });
});
