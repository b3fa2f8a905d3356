import * as z from "zod";

/** Every error the API answers, whatever its status: a code to branch on and a message. */
export const errorBody = z
  .object({
    error: z.object({
      code: z.string().meta({ example: "invalid_request" }),
      message: z.string(),
      details: z.unknown().optional(),
    }),
  })
  .meta({ id: "Error" });
