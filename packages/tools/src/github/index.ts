export { githubTokenCapability } from "./capability";
export {
  GITHUB_API_URL,
  type GitHubInput,
  type GitHubOutput,
  type GitHubSettings,
  githubApi,
  githubInput,
  githubOutput,
  githubSettings,
} from "./github-api";
export { encodePath, gitRef, isValidRef, ownerName, repoName, repoPath } from "./names";
export {
  codeSearchPayload,
  contentEntry,
  decodeBase64,
  decodeText,
  issuePayload,
  releaseList,
} from "./payloads";
export { GITHUB_API_VERSION, GITHUB_TOKEN, githubFailure } from "./request";
export { githubToolset } from "./toolset";
