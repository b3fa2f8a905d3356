/**
 * Rewrites a TypeScript module so that it says which file control is in: on entering any of
 * its functions, and on coming back to it after a call, a `new` or an `await` returns. The
 * calls go to two globals the tracer defines (`trace.ts`); the code otherwise runs as before.
 */
import ts from "typescript";

export const ENTER = "__toolbusTraceEnter";
export const BACK = "__toolbusTraceBack";

/** The module as JavaScript (ES2022 modules), instrumented with `file` as its name. */
export function instrumentModule(file: string, text: string): string {
  return ts.transpileModule(text, {
    fileName: file,
    compilerOptions: {
      module: ts.ModuleKind.ESNext,
      target: ts.ScriptTarget.ES2022,
      // As the repository compiles: imports stay as written, types go.
      verbatimModuleSyntax: true,
      sourceMap: false,
    },
    transformers: { before: [tracer(file)] },
  }).outputText;
}

function tracer(file: string): ts.TransformerFactory<ts.SourceFile> {
  return (context) => {
    const { factory } = context;
    const mark = (name: string, ...rest: ts.Expression[]) =>
      factory.createCallExpression(factory.createIdentifier(name), undefined, [
        factory.createStringLiteral(file),
        ...rest,
      ]);

    const visit = (node: ts.Node): ts.Node => {
      const visited = ts.visitEachChild(node, visit, context);
      if (isFunctionWithBody(visited)) return withEntry(visited);
      if (returnsHere(node) && ts.isExpression(visited)) {
        return mark(BACK, visited as ts.Expression);
      }
      return visited;
    };

    const withEntry = (node: FunctionWithBody): ts.Node => {
      const body = node.body;
      if (ts.isBlock(body)) {
        const entered = factory.updateBlock(body, [
          factory.createExpressionStatement(mark(ENTER)),
          ...body.statements,
        ]);
        return updateBody(factory, node, entered);
      }
      // `() => value`: entered, then the value, in one expression.
      const entered = factory.createParenthesizedExpression(
        factory.createCommaListExpression([mark(ENTER), body]),
      );
      return updateBody(factory, node, entered);
    };

    return (source) => ts.visitNode(source, visit) as ts.SourceFile;
  };
}

type FunctionWithBody = (
  | ts.FunctionDeclaration
  | ts.FunctionExpression
  | ts.ArrowFunction
  | ts.MethodDeclaration
  | ts.ConstructorDeclaration
  | ts.GetAccessorDeclaration
  | ts.SetAccessorDeclaration
) & { body: ts.ConciseBody };

function isFunctionWithBody(node: ts.Node): node is FunctionWithBody {
  return (
    (ts.isFunctionDeclaration(node) ||
      ts.isFunctionExpression(node) ||
      ts.isArrowFunction(node) ||
      ts.isMethodDeclaration(node) ||
      ts.isConstructorDeclaration(node) ||
      ts.isGetAccessorDeclaration(node) ||
      ts.isSetAccessorDeclaration(node)) &&
    node.body !== undefined
  );
}

/**
 * Where control comes back to this file: after a call, a `new` or an `await`. Not inside an
 * optional chain (wrapping its middle would change what `?.` skips), not `super(...)` (the
 * constructor's fields are set right after it), not a call the next link of a chain makes
 * (the chain's end is wrapped instead).
 */
function returnsHere(node: ts.Node): boolean {
  if (!(ts.isCallExpression(node) || ts.isNewExpression(node) || ts.isAwaitExpression(node))) {
    return false;
  }
  if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.SuperKeyword) {
    return false;
  }
  const parent = node.parent;
  if (!parent) return true;
  if (ts.isOptionalChain(parent) && (parent as { expression?: ts.Node }).expression === node) {
    return false;
  }
  // A decorator's expression must stay a call.
  return !ts.isDecorator(parent);
}

function updateBody(
  factory: ts.NodeFactory,
  node: FunctionWithBody,
  body: ts.ConciseBody,
): ts.Node {
  if (ts.isArrowFunction(node)) {
    return factory.updateArrowFunction(
      node,
      node.modifiers,
      node.typeParameters,
      node.parameters,
      node.type,
      node.equalsGreaterThanToken,
      body,
    );
  }
  const block = body as ts.Block;
  if (ts.isFunctionDeclaration(node)) {
    return factory.updateFunctionDeclaration(
      node,
      node.modifiers,
      node.asteriskToken,
      node.name,
      node.typeParameters,
      node.parameters,
      node.type,
      block,
    );
  }
  if (ts.isFunctionExpression(node)) {
    return factory.updateFunctionExpression(
      node,
      node.modifiers,
      node.asteriskToken,
      node.name,
      node.typeParameters,
      node.parameters,
      node.type,
      block,
    );
  }
  if (ts.isMethodDeclaration(node)) {
    return factory.updateMethodDeclaration(
      node,
      node.modifiers,
      node.asteriskToken,
      node.name,
      node.questionToken,
      node.typeParameters,
      node.parameters,
      node.type,
      block,
    );
  }
  if (ts.isConstructorDeclaration(node)) {
    return factory.updateConstructorDeclaration(node, node.modifiers, node.parameters, block);
  }
  if (ts.isGetAccessorDeclaration(node)) {
    return factory.updateGetAccessorDeclaration(
      node,
      node.modifiers,
      node.name,
      node.parameters,
      node.type,
      block,
    );
  }
  return factory.updateSetAccessorDeclaration(
    node as ts.SetAccessorDeclaration,
    node.modifiers,
    node.name,
    node.parameters,
    block,
  );
}
