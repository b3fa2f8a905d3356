import { toolSpec } from "@toolbus/wire/model/tool";
import { describe, expect, it } from "vitest";
import { matchedWords } from "./explain";
import { term } from "./terms";
import { ToolIndex } from "./tool-index";
import { words } from "./words";

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
      "jira_create_issue",
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

describe("ToolIndex reading names and half-typed words", () => {
  // MCP tools registered without a title have their raw name as title.
  const named = [
    tool("slack_list_channels", "slack_list_channels", "Lists the public channels of a workspace."),
    tool("create_issue", "create_issue", "Opens a new ticket in a repository."),
    tool("create_issue_comment", "createIssueComment", "Adds a comment to a ticket."),
    tool("stock_quote", "Stock quote", "The latest price of a share or a commodity."),
    tool("send_sms", "Send SMS", "Sends a short text to a phone."),
    tool("summarize", "Summarize", "Shortens a long text into a few sentences."),
  ];
  const index = ToolIndex.build(named);
  const ids = (query: string) =>
    index.search(query, { limit: 6, allowed: () => true }).map((hit) => hit.id);

  it("finds a tool by the words of its snake_case id and raw-name title", () => {
    const [first] = index.search("list channels", { limit: 1, allowed: () => true });
    expect(first).toMatchObject({
      id: "slack_list_channels",
      matched: ["id", "title", "description"],
    });
    // camelCase titles read as words too.
    expect(ids("comment")[0]).toBe("create_issue_comment");
  });

  it("matches a whole name above tools that merely share its words", () => {
    expect(ids("create_issue")[0]).toBe("create_issue");
    expect(ids("createIssueComment")[0]).toBe("create_issue_comment");
  });

  it("does not prefix-match a one- or two-letter fragment left at the end of a query", () => {
    // `s` (of today's) and `sh` would otherwise start send_sms, summarize, share, short ...
    expect(ids("gold price today's")).toEqual(["stock_quote"]);
    expect(ids("commodity s")).toEqual(["stock_quote"]);
    expect(ids("sh")).toEqual([]);
    expect(ids("ticket sho").sort()).toEqual(["create_issue", "create_issue_comment"]);
  });

  it("completes a last word of four letters or more, and only the last", () => {
    expect(ids("summ")).toEqual(["summarize"]);
    expect(ids("summ phone")).toEqual(["send_sms"]);
    expect(ids("phone short")[0]).toBe("send_sms");
  });
});

describe("ToolIndex weighing a word by how many tools hold it", () => {
  // Every tool's text says "file"; one tool is named for it.
  const index = ToolIndex.build([
    tool("open_file", "Open file", "Opens a file."),
    tool("read_text", "Read text", "Reads the text of a file."),
    tool("write_text", "Write text", "Writes text to a file."),
    tool("copy_path", "Copy path", "Copies a file or folder."),
    tool("move_path", "Move path", "Moves a file or folder."),
    tool("rotate_logs", "Rotate logs", "Starts new log files and archives the old."),
  ]);
  const score = (query: string, id: string) =>
    index.search(query, { limit: 10, allowed: () => true }).find((hit) => hit.id === id)?.score ??
    0;

  it("counts a word every tool holds for next to nothing, even in a tool's name", () => {
    // Rarity is over whole tools, not field by field: "file" is in one name only, but in
    // every tool, so naming a tool for it says little of what the need is.
    expect(score("rotate file", "open_file")).toBeLessThan(
      score("rotate file", "rotate_logs") / 10,
    );
  });

  it("counts a word a tool holds in several fields for more than in one", () => {
    // Two tools hold each word: "text" in their ids, titles and descriptions, "folder" in
    // their descriptions only.
    expect(score("text", "read_text")).toBeGreaterThan(1.5 * score("folder", "copy_path"));
  });
});

describe("ToolIndex reading what a tool takes", () => {
  const located = tool("point_weather", "Point weather", "The weather where you say.", {
    inputSchema: {
      type: "object",
      properties: {
        latitude: { type: "number" },
        longitude: { type: "number" },
        units: { type: "string", description: "Celsius or Fahrenheit." },
        window: {
          type: "object",
          properties: {
            startHour: { type: "integer", description: "Hour of the day it opens." },
            deep: { type: "object", properties: { buriedName: { type: "string" } } },
          },
        },
        stops: {
          type: "array",
          items: { type: "object", properties: { postcode: { type: "string" } } },
        },
      },
    },
  });
  const long = tool("long_input", "Long input", "Takes a lot.", {
    inputSchema: {
      type: "object",
      properties: {
        text: { type: "string", description: `${"word ".repeat(200)}faraway` },
        nearby: { type: "string" },
      },
    },
  });
  const index = ToolIndex.build([...tools, located, long]);
  const ids = (query: string) =>
    index.search(query, { limit: 5, allowed: () => true }).map((hit) => hit.id);

  it("finds a tool by its input's property names and their descriptions", () => {
    const [first] = index.search("latitude", { limit: 5, allowed: () => true });
    expect(first).toMatchObject({ id: "point_weather", matched: ["input"] });
    expect(ids("fahrenheit")).toEqual(["point_weather"]);
    // camelCase names read as words, one level down too (in an object or an array's items).
    expect(ids("start hour")).toEqual(["point_weather"]);
    expect(ids("postcode")).toEqual(["point_weather"]);
    // Not two levels down.
    expect(ids("buriedName")).toEqual([]);
  });

  it("reads a bounded part of the input", () => {
    expect(ids("nearby")).toEqual(["long_input"]);
    expect(ids("faraway")).toEqual([]);
  });

  it("counts the input for less than the tool's own text", () => {
    // "weather" is in the others' ids and titles; point_weather's input says "latitude" only.
    expect(ids("weather latitude")[0]).toBe("point_weather");
    expect(ids("city weather")[0]).not.toBe("point_weather");
  });

  it("explains an input match as the index found it", () => {
    const [first] = index.search("fahrenheit", { limit: 1, allowed: () => true });
    expect(first?.matched).toEqual(["input"]);
    const explained = matchedWords(index.matches("fahrenheit", located.id), located, undefined, [
      "input",
    ]);
    expect(explained).toEqual([{ word: "fahrenheit", fields: ["input"] }]);
  });
});

describe("ToolIndex reading products and WordNet's words", () => {
  const inSet = (toolset: string, id: string, title: string, description: string) =>
    tool(id, title, description, { toolset });
  const index = ToolIndex.build(
    [
      inSet("tracker", "report_bug", "Report a bug", "Files a bug report with its steps."),
      inSet(
        "linear",
        "linear_create_issue",
        "Create issue",
        "Creates an issue (a bug, a task) in a team.",
      ),
      inSet("atlassian_jira", "jira_post", "POST", "Sends a POST: reports a bug, an issue ..."),
      inSet("files", "file_info", "File info", "Tells a file's size and dates."),
      inSet("files", "revise_file", "Revise a file", "Revises a file."),
      // Tools of nothing above: a word's rarity is over whole tools, and in five tools a word
      // three of them hold ("bug") would say next to nothing.
      inSet("mail", "send_email", "Send an email", "Sends an email to a recipient."),
      inSet("calendar", "list_events", "List events", "Lists the events on a calendar."),
      inSet("weather", "get_forecast", "Get forecast", "The weather forecast for a city."),
    ],
    [
      { name: "linear", description: "Linear's issues." },
      { name: "atlassian_jira", description: "Jira." },
    ],
  );
  const ids = (query: string) =>
    index.search(query, { limit: 5, allowed: () => true }).map((hit) => hit.id);
  const score = (query: string, id: string) =>
    index.search(query, { limit: 10, allowed: () => true }).find((hit) => hit.id === id)?.score;

  it("favours the tools of a toolset the need names as a product", () => {
    expect(ids("report a bug in Linear")[0]).toBe("linear_create_issue");
    // A word of its name that no dictionary holds names atlassian_jira, however it is written.
    expect(ids("report a bug in our jira")[0]).toBe("jira_post");
  });

  it("does not take a dictionary word for a product unless it is written as a name", () => {
    const named = score("report a linear bug, in Linear", "linear_create_issue") as number;
    const plain = score("report a linear bug, in linear", "linear_create_issue") as number;
    expect(named / plain).toBeCloseTo(1.5, 3);
    // Nor the query's first word, capitalized as every sentence is.
    expect(score("Linear bug report", "linear_create_issue")).toBe(
      score("linear bug report", "linear_create_issue"),
    );
    expect(ids("linear bug report")[0]).toBe("report_bug");
  });

  it("finds a tool by a word WordNet relates when the catalog lacks the word", () => {
    // No tool says "amend", and no concept holds it: WordNet relates amend to revise.
    expect(ids("amend the file").slice(0, 2)).toEqual(["revise_file", "file_info"]);
  });

  it("counts a word WordNet relates for less than the word itself", () => {
    const withAmend = ToolIndex.build([
      inSet("files", "revise_file", "Revise a file", "Revises a file."),
      inSet("files", "patch_file", "Patch a file", "Amends a file in place."),
    ]);
    const found = withAmend.search("amend the file", { limit: 5, allowed: () => true });
    expect(found.map((hit) => hit.id)).toEqual(["patch_file", "revise_file"]);
  });
});

describe("actions in ranking", () => {
  const fields = [
    // First, so it wins every tie: its name states no action.
    tool("field_notes", "Field notes", "A field of a table: its name and type."),
    tool("create_field", "Create field", "A field of a table: its name and type."),
    tool("update_field", "Update field", "A field of a table: its name and type."),
    tool("delete_field", "Delete field", "A field of a table: its name and type."),
  ];
  const index = ToolIndex.build(fields);
  const first = (query: string) => index.search(query, { limit: 4, allowed: () => true })[0]?.id;

  it("puts the tool that does what the request asks above tools sharing its noun", () => {
    // The tools' texts differ only in their action word, which none of these requests uses
    // (nor a concept or WordNet relation of it): only the action read from each tool's name
    // tells them apart.
    for (const [query, id] of [
      ["rename the field of the orders table", "update_field"],
      ["destroy that field in the table", "delete_field"],
      ["register a field in the table", "create_field"],
    ] as const) {
      expect(first(query), query).toBe(id);
      expect(index.action(query, id)?.weight, query).toBeGreaterThan(1);
    }
  });
});
