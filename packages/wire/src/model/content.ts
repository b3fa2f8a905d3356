import * as z from "zod";

/**
 * MCP content blocks, as a tool's server sent them: text, image, audio, a link to a resource,
 * or a resource embedded whole. A call keeps them as they came (annotations and `_meta`
 * included: the objects are loose), so an image reaches the caller as an image, not as a
 * description of one. Shapes follow MCP 2025-11-25 `ContentBlock`.
 */
const base64 = z.string().regex(/^[A-Za-z0-9+/]*={0,2}$/, "base64");

const textContent = z.looseObject({ type: z.literal("text"), text: z.string() });
const imageContent = z.looseObject({
  type: z.literal("image"),
  data: base64,
  mimeType: z.string().min(1),
});
const audioContent = z.looseObject({
  type: z.literal("audio"),
  data: base64,
  mimeType: z.string().min(1),
});
const resourceLink = z.looseObject({
  type: z.literal("resource_link"),
  uri: z.string().min(1),
  name: z.string(),
});
const embeddedResource = z.looseObject({
  type: z.literal("resource"),
  resource: z.union([
    z.looseObject({ uri: z.string().min(1), text: z.string() }),
    z.looseObject({ uri: z.string().min(1), blob: base64 }),
  ]),
});

export const contentBlock = z.union([
  textContent,
  imageContent,
  audioContent,
  resourceLink,
  embeddedResource,
]);
export type ContentBlock = z.infer<typeof contentBlock>;

/**
 * What a model reads of content that is not text: a line naming it, so an agent that only
 * reads `output` still learns an image or a file came back and where to find it.
 */
export function describeContent(block: ContentBlock): string {
  switch (block.type) {
    case "text":
      return block.text;
    case "image":
    case "audio":
      return `[${block.type}: ${block.mimeType}, ${base64Bytes(block.data)} bytes]`;
    case "resource_link":
      return `[resource link: ${block.name} <${block.uri}>]`;
    case "resource":
      return "text" in block.resource
        ? `[resource ${block.resource.uri}]\n${block.resource.text}`
        : `[resource ${block.resource.uri}: ${base64Bytes(String(block.resource.blob))} bytes]`;
  }
}

/** How many bytes a base64 string decodes to. */
function base64Bytes(data: string): number {
  const padding = data.endsWith("==") ? 2 : data.endsWith("=") ? 1 : 0;
  return Math.floor((data.length * 3) / 4) - padding;
}
