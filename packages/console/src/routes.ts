import type { Route } from "./router";
import { auditView } from "./views/admin-audit";
import { keysView } from "./views/admin-keys";
import { subscriptionsView } from "./views/admin-subscriptions";
import { toolsetReviewView, toolsetsView } from "./views/admin-toolsets";
import { approvalsView } from "./views/approvals";
import { catalogView } from "./views/catalog";
import { meView } from "./views/me";
import { runView } from "./views/run";
import { runsView } from "./views/runs";
import { toolView } from "./views/tool";

/** Every page of the console; the navigation lists those with a `nav` name, in this order. */
export const ROUTES: readonly Route[] = [
  { path: "/catalog", nav: "Catalog", view: catalogView },
  { path: "/tools/:id", view: toolView },
  { path: "/runs", nav: "Runs", view: runsView },
  { path: "/runs/:runId", view: runView },
  { path: "/approvals", nav: "Approvals", needs: "approve", view: approvalsView },
  { path: "/me", nav: "Me", view: meView },
  { path: "/admin/keys", nav: "Keys", needs: "admin", view: keysView },
  { path: "/admin/toolsets", nav: "Toolsets", needs: "admin", view: toolsetsView },
  { path: "/admin/toolsets/:name/review", view: toolsetReviewView },
  {
    path: "/admin/subscriptions",
    nav: "Subscriptions",
    needs: "subscribe",
    view: subscriptionsView,
  },
  { path: "/admin/audit", nav: "Audit", needs: "admin", view: auditView },
];
