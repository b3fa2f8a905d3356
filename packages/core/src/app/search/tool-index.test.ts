import { toolSpec } from "@toolbus/wire/model/tool";
import { describe, expect, it } from "vitest";
import { term, words } from "./terms";
import { ToolIndex } from "./tool-index";

const tool = (id: string, title: string, description: string, extra: object = {}) =>
  toolSpec.parse({
    id,
    toolset: "kit",
    title,
    description,
    category: "utility",
    usageHint: "In tests.",
    inputSchema: { type: "object" },
    outputSchema: { type: "object" },
    ...extra,
  });

const tools = [
  tool("weather_forecast", "Weather forecast", "The forecast for the next days in a city."),
  tool("weather_current", "Current weather", "The weather in a city right now."),
  tool("refund_payment", "Refund a payment", "Refunds a charge to the customer.", {
    examples: [{ title: "Refund a duplicate", input: { reason: "duplicate charge" } }],
  }),
];

describe("words and terms", () => {
  it("splits on anything but letters and digits, snake_case included, after NFKC", () => {
    expect(words("jira_create_issue: Ｆｉｘ the ﬁle!")).toEqual([
      "jira",
      "create",
      "issue",
      "fix",
      "the",
      "file",
    ]);
    expect(words("\u0000\ud800\u202e")).toEqual([]);
    expect(words("Größe 東京 42")).toEqual(["größe", "東京", "42"]);
  });

  it("drops stop words, stems English words and leaves long or non-Latin words whole", () => {
    expect(term("the")).toBeNull();
    expect(["refunds", "refunded", "refunding"].map(term)).toEqual(["refund", "refund", "refund"]);
    const long = "y".repeat(10_000);
    expect(term(long)).toBe(long);
    expect(term("東京")).toBe("東京");
  });
});

describe("ToolIndex", () => {
  const index = ToolIndex.build(tools);
  const search = (query: string, allowed = (_: string) => true, limit = 5) =>
    index.search(query, { limit, allowed });

  it("ranks by the words of the need and names the fields they were found in", () => {
    const [first, ...rest] = search("what will the weather be in the next days");
    expect(first).toMatchObject({ id: "weather_forecast" });
    expect(first?.matched).toEqual(["id", "title", "description"]);
    expect(rest.map((hit) => hit.id)).toEqual(["weather_current"]);
    expect(search("duplicate charges refunded")[0]?.id).toBe("refund_payment");
    expect(search("duplicate")[0]?.matched).toEqual(["examples"]);
  });

  it("tolerates a typo and a half-typed last word", () => {
    expect(search("wether forcast")[0]?.id).toBe("weather_forecast");
    expect(search("refu")[0]?.id).toBe("refund_payment");
  });

  it("counts each term of a query once, and reads at most 32 distinct terms", () => {
    expect(search("weather weather weather city city")).toEqual(search("weather city"));
    expect(search("refund refunds refunded refunding weather")).toEqual(search("refund weather"));
    const filler = Array.from({ length: 40 }, (_, i) => `filler${i}`).join(" ");
    expect(search(`${filler} refund`)).toEqual([]);
    expect(search(`refund ${filler}`)[0]?.id).toBe("refund_payment");
    // Stop words are not terms: they take none of the 32 places.
    const stops = "the a an and of to for with in on at by from ".repeat(4);
    expect(search(`${stops} refund`)[0]?.id).toBe("refund_payment");
  });

  it("finds only allowed tools, at most limit of them", () => {
    expect(search("weather", (id) => id !== "weather_forecast").map((hit) => hit.id)).toEqual([
      "weather_current",
    ]);
    expect(search("weather", () => true, 1)).toHaveLength(1);
    expect(search("?!")).toEqual([]);
    expect(search("zzzz qqqq")).toEqual([]);
  });
});
