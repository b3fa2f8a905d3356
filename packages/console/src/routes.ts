import type { Route } from "./router";
import { catalogView } from "./views/catalog";

/** Every page of the console; the navigation lists those with a `nav` name, in this order. */
export const ROUTES: readonly Route[] = [{ path: "/catalog", nav: "Catalog", view: catalogView }];
