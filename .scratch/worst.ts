import { loadSearchFixture } from "../bench/search-fixture";
import { ToolIndex } from "../packages/core/src/app/search/tool-index";
const f = loadSearchFixture();
const big = Array.from({ length: 1000 }, (_, i) => { const t = f.tools[i % f.tools.length]; return i < f.tools.length ? t : { ...t, id: `${t.id.slice(0, 40)}_c${i}` }; });
const index = ToolIndex.build(big, f.toolsets);
const rnd = (n: number) => Array.from({ length: n }, () => "abcdefghijklmnopqrstuvwxyz"[Math.floor(Math.random() * 26)]).join("");
const cases: Record<string, string> = {
  "45 random 10-letter words": Array.from({ length: 45 }, () => rnd(10)).join(" ").slice(0, 500),
  "83 random 5-letter words": Array.from({ length: 83 }, () => rnd(5)).join(" ").slice(0, 500),
  "one 500-letter word": rnd(500),
  "real words x many": "refund payment weather forecast create issue deploy service ".repeat(8).slice(0, 500),
  "'e' repeated": "eeeeeeeeee ".repeat(45).slice(0, 500),
  "prefix bomb 'a'": "a ".repeat(250),
  "typo'd common words": "wether forcast paymnt refnd isue deplloy servce custmer invoise calender ".repeat(6).slice(0, 500),
};
for (const [name, q] of Object.entries(cases)) {
  const s = performance.now(); let n = 0;
  for (let i = 0; i < 5; i++) n = index.search(q, { limit: 5, allowed: () => true }).length;
  console.log(name.padEnd(30), ((performance.now() - s) / 5).toFixed(2), "ms", n);
}
