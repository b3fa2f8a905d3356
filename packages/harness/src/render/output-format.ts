/**
 * The forms an agent file is written in. Apart from the YAML serializer (./frontmatter), so
 * the request schema that names them does not load it: the API loads rendering on first use.
 */
export const OUTPUT_FORMATS = ["markdown", "json", "yaml"] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];
