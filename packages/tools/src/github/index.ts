export { githubTokenCapability } from "./capability";
export { githubApi } from "./github-api";
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
export { type GitHubInput, type GitHubOutput, githubInput, githubOutput } from "./schemas";
export { GITHUB_API_URL, type GitHubSettings, githubSettings } from "./settings";
export { githubToolset } from "./toolset";
