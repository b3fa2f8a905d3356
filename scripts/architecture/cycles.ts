/**
 * Import cycles as strongly connected components (Tarjan). Iterative, so a long import chain
 * cannot overflow the stack; linear in files plus edges.
 */
export type Graph = ReadonlyMap<string, readonly string[]>;

/** Every group of two or more files that reach each other, plus files that import themselves. */
export function importCycles(graph: Graph): string[][] {
  return stronglyConnected(graph)
    .filter(
      (group) =>
        group.length > 1 || (graph.get(group[0] as string) ?? []).includes(group[0] as string),
    )
    .map((group) => [...group].sort())
    .sort((a, b) => b.length - a.length || (a[0] as string).localeCompare(b[0] as string));
}

/** Tarjan's strongly connected components, every node in exactly one. */
function stronglyConnected(graph: Graph): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const components: string[][] = [];
  let next = 0;

  for (const start of graph.keys()) {
    if (index.has(start)) continue;
    // Each frame: a node and how far through its edges the walk has got.
    const frames: { node: string; edge: number }[] = [{ node: start, edge: 0 }];
    open(start);
    while (frames.length > 0) {
      const frame = frames[frames.length - 1] as { node: string; edge: number };
      const edges = graph.get(frame.node) ?? [];
      if (frame.edge < edges.length) {
        const target = edges[frame.edge++] as string;
        if (!graph.has(target)) continue;
        if (!index.has(target)) {
          open(target);
          frames.push({ node: target, edge: 0 });
        } else if (onStack.has(target)) {
          low.set(frame.node, Math.min(low.get(frame.node) as number, index.get(target) as number));
        }
        continue;
      }
      frames.pop();
      const parent = frames[frames.length - 1];
      if (parent) {
        low.set(
          parent.node,
          Math.min(low.get(parent.node) as number, low.get(frame.node) as number),
        );
      }
      if (low.get(frame.node) === index.get(frame.node)) {
        const component: string[] = [];
        let member: string;
        do {
          member = stack.pop() as string;
          onStack.delete(member);
          component.push(member);
        } while (member !== frame.node);
        components.push(component);
      }
    }
  }
  return components;

  function open(node: string): void {
    index.set(node, next);
    low.set(node, next);
    next++;
    stack.push(node);
    onStack.add(node);
  }
}
