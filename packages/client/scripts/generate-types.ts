import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";

// Writes every type that scripts/catalog-types.source.ts exports out in full, as plain
// TypeScript with no imports, into src/generated/catalog-types.ts. The source names them from
// the zod schemas of @toolbus/wire (the API's contract), @toolbus/harness and @toolbus/tools,
// so there is one source for each; the generated file is what the published client carries
// instead of those packages.

const root = fileURLToPath(new URL("..", import.meta.url));
const SOURCE = join(root, "scripts/catalog-types.source.ts");
export const GENERATED = join(root, "src/generated/catalog-types.ts");

/** Deep enough for every catalog type; deeper means a recursive type, printed as unknown. */
const MAX_DEPTH = 24;

export function generateCatalogTypes(): string {
  const config = ts.getParsedCommandLineOfConfigFile(
    join(root, "tsconfig.build.json"),
    {},
    { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {} },
  );
  if (!config) throw new Error("tsconfig.build.json cannot be read.");
  const program = ts.createProgram([SOURCE], { ...config.options, noEmit: true });
  const source = program.getSourceFile(SOURCE);
  if (!source) throw new Error(`${SOURCE} is not in the program.`);
  const problems = [
    ...program.getSyntacticDiagnostics(source),
    ...program.getSemanticDiagnostics(source),
  ];
  if (problems.length > 0) {
    throw new Error(ts.formatDiagnostics(problems, ts.createCompilerHost(config.options)));
  }
  const checker = program.getTypeChecker();
  const moduleSymbol = checker.getSymbolAtLocation(source);
  if (!moduleSymbol) throw new Error(`${SOURCE} has no exports.`);

  function print(type: ts.Type, depth: number, indent: string): string {
    if (depth > MAX_DEPTH) return "unknown";
    const { flags } = type;
    if (flags & ts.TypeFlags.Any) return "any";
    if (flags & ts.TypeFlags.Unknown) return "unknown";
    if (flags & ts.TypeFlags.Never) return "never";
    if (flags & (ts.TypeFlags.String | ts.TypeFlags.Number | ts.TypeFlags.Boolean)) {
      return checker.typeToString(type);
    }
    if (flags & (ts.TypeFlags.BooleanLiteral | ts.TypeFlags.Null | ts.TypeFlags.Undefined)) {
      return checker.typeToString(type);
    }
    if (flags & (ts.TypeFlags.Void | ts.TypeFlags.BigInt | ts.TypeFlags.ESSymbol)) {
      return checker.typeToString(type);
    }
    if (type.isStringLiteral()) return JSON.stringify(type.value);
    if (type.isNumberLiteral()) return String(type.value);
    if (type.isUnion()) return printUnion(type.types, depth, indent);
    if (type.isIntersection()) {
      return type.types.map((member) => `(${print(member, depth + 1, indent)})`).join(" & ");
    }
    if (checker.isArrayType(type)) {
      const [element] = checker.getTypeArguments(type as ts.TypeReference);
      return `Array<${element ? print(element, depth + 1, indent) : "unknown"}>`;
    }
    if (checker.isTupleType(type)) {
      const elements = checker.getTypeArguments(type as ts.TypeReference);
      return `[${elements.map((element) => print(element, depth + 1, indent)).join(", ")}]`;
    }
    if (flags & ts.TypeFlags.Object) {
      if (type.getCallSignatures().length > 0) return checker.typeToString(type);
      const inner = `${indent}  `;
      const lines: string[] = [];
      for (const info of checker.getIndexInfosOfType(type)) {
        const key = checker.typeToString(info.keyType);
        lines.push(`${inner}[key: ${key}]: ${print(info.type, depth + 1, inner)};`);
      }
      for (const property of checker.getPropertiesOfType(type)) {
        const optional = (property.flags & ts.SymbolFlags.Optional) !== 0;
        const propertyType = checker.getTypeOfSymbol(property);
        const docs = ts.displayPartsToString(property.getDocumentationComment(checker)).trim();
        if (docs) lines.push(`${inner}/** ${docs.replace(/\*\//g, "* /").replace(/\n/g, " ")} */`);
        const name = /^[A-Za-z_$][\w$]*$/.test(property.name)
          ? property.name
          : JSON.stringify(property.name);
        // `?` already says "may be undefined": the union need not repeat it.
        const shown = optional
          ? printUnion(
              propertyType.isUnion()
                ? propertyType.types.filter((member) => !(member.flags & ts.TypeFlags.Undefined))
                : [propertyType],
              depth + 1,
              inner,
            )
          : print(propertyType, depth + 1, inner);
        lines.push(`${inner}${name}${optional ? "?" : ""}: ${shown};`);
      }
      return lines.length === 0 ? "{}" : `{\n${lines.join("\n")}\n${indent}}`;
    }
    return checker.typeToString(type, undefined, ts.TypeFormatFlags.NoTruncation);
  }

  function printUnion(types: readonly ts.Type[], depth: number, indent: string): string {
    const members = types.map((member) => print(member, depth + 1, indent));
    // `boolean` is `true | false` inside the checker.
    const bools = ["false", "true"].every((literal) => members.includes(literal));
    const shown = bools
      ? ["boolean", ...members.filter((member) => member !== "false" && member !== "true")]
      : members;
    return shown.map((member) => (member.includes("=>") ? `(${member})` : member)).join(" | ");
  }

  const blocks = checker
    .getExportsOfModule(moduleSymbol)
    .sort((a, b) => a.name.localeCompare(b.name))
    .map((exported) => {
      const symbol =
        exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported;
      const type = checker.getDeclaredTypeOfSymbol(symbol);
      const docs = ts.displayPartsToString(symbol.getDocumentationComment(checker)).trim();
      const doc = docs ? `/** ${docs.replace(/\n/g, "\n * ")} */\n` : "";
      return `${doc}export type ${exported.name} = ${print(type, 0, "")};\n`;
    });
  return [
    "// Generated by scripts/generate-types.ts from @toolbus/wire, @toolbus/harness and @toolbus/tools: do not edit.",
    "// `npm run generate -w @toolbus/client` writes it again; a test fails when it is stale.",
    "",
    blocks.join("\n"),
  ].join("\n");
}

/** The generated file as it is on disk, or undefined. */
export async function readGenerated(): Promise<string | undefined> {
  return readFile(GENERATED, "utf8").catch(() => undefined);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  await writeFile(GENERATED, generateCatalogTypes());
  console.log(`Wrote ${GENERATED}`);
}
