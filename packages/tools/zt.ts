import { z } from "zod";
const s = z.discriminatedUnion("action", [
  z.strictObject({ action: z.literal("a"), x: z.string() }),
  z.strictObject({ action: z.literal("b"), limit: z.number().int().min(1).max(30).default(10) }),
]).meta({ type: "object" });
console.log(JSON.stringify(z.toJSONSchema(s, { io: "input" }), null, 1));
console.log(JSON.stringify(s.parse({action:"b"})));
