// Toolbus runs where Lambda runs it: Node 24 (`nodejs24.x`). npm puts node_modules/.bin first
// on a script's PATH, and the per-platform Node binary packages in optionalDependencies link
// `node` there, so `npm start` and `npm test` get Node 24 even where the system's Node is
// older. Where no package fits the platform, the system's Node must be 24 or newer.
const MINIMUM = 24;
const major = Number(process.versions.node.split(".")[0]);
if (major < MINIMUM) {
  console.error(
    `Toolbus needs Node ${MINIMUM} or newer (Lambda's nodejs${MINIMUM}.x); this is ${process.version}, and no Node binary package fits ${process.platform}-${process.arch}. Install Node ${MINIMUM} (nvm install ${MINIMUM}, or your package manager) and run the command again.`,
  );
  process.exit(1);
}
