import type { TestToolbus } from "./toolbus";

export interface ApiRoute {
  method: string;
  path: string;
  hasBody: boolean;
}

/** Every route the API documents in /openapi.json: what the hostile and fuzz tests walk. */
export async function documentedRoutes(system: TestToolbus): Promise<ApiRoute[]> {
  const doc = (await (await system.request("/openapi.json")).json()) as {
    paths: Record<string, Record<string, { requestBody?: unknown }>>;
  };
  return Object.entries(doc.paths).flatMap(([path, ops]) =>
    Object.entries(ops).map(([method, op]) => ({
      method: method.toUpperCase(),
      path,
      hasBody: op.requestBody !== undefined,
    })),
  );
}
