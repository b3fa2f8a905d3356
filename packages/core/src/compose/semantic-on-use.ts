import type { EmbeddingsConfig, SemanticRanking } from "../app/search/semantic";
import type { Deployment } from "../deployment";
import type { HttpClient } from "../outbound/types";
import { loadedOnUse } from "./loaded-on-use";
import { secretOf, storeOf } from "./pieces";

/**
 * Search's semantic ranking (`search.embeddings`), its code and its store loaded with the
 * first search: the API's cold start carries neither.
 */
export function semanticOnUse(
  deployment: Deployment,
  config: EmbeddingsConfig,
  http: HttpClient,
): Pick<SemanticRanking, "rank"> {
  return loadedOnUse(async () => {
    const [{ semanticRanking }, { DynamoVectorStore }] = await Promise.all([
      import("../app/search/semantic"),
      import("../store/dynamodb/embeddings"),
    ]);
    return semanticRanking({
      config,
      http,
      secret: secretOf(deployment),
      store: new DynamoVectorStore(storeOf(deployment)),
      log: deployment.log,
    });
  }, ["rank"]);
}
