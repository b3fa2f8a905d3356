import { ROUTES } from "./routes";
import { startConsole } from "./shell";

const root = document.getElementById("app");
if (root) startConsole(root, ROUTES);
