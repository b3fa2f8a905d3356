/**
 * An offline checker for CloudWatch metric math: CloudFormation accepts any string as an alarm's
 * `Expression` or a dashboard row's `expression`, and CloudWatch only rejects a bad one while the
 * stack deploys (CREATE_FAILED, then a rollback). This parses each expression and checks it
 * against the function signatures CloudWatch documents, so the stack tests catch it first.
 *
 * Source of the signatures: "Metric math syntax and functions" in the CloudWatch User Guide,
 * https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/using-metric-math.html
 * (its source: awsdocs/amazon-cloudwatch-user-guide, doc_source/using-metric-math.md), plus
 * search-expression-syntax.html for SEARCH and ContributorInsights-GraphReportData.html for
 * INSIGHT_RULE_METRIC. The page names three data types: S (a scalar), TS (a time series) and
 * TS[] (an array of time series); strings appear only as arguments.
 *
 * The parser is one pass over a token list with bounded recursion (MAX_DEPTH), and types are
 * computed while parsing, so the check is linear in the expression's length and never throws.
 */

/** TS[] is what the docs call an array of time series; SEARCH and METRICS return one. */
export type MathType = "Scalar" | "TimeSeries" | "TimeSeries[]" | "String";

/** Nesting ((…), […], calls, ^-) beyond this is reported instead of recursed into. */
const MAX_DEPTH = 100;
/** A long garbage expression yields a bounded report, not one line per token. */
const MAX_PROBLEMS = 10;

// ---------------------------------------------------------------------------------------------
// Function signatures, as documented. An overload lists its parameters; `optional` trailing ones
// may be left out. A parameter is a data type or a set of bare keywords (SORT's AVG / DESC).

type Param = MathType | readonly string[];
interface Overload {
  params: readonly Param[];
  optional?: number;
  returns: MathType;
}

const S = "Scalar";
const TS = "TimeSeries";
const TSA = "TimeSeries[]";
const STR = "String";

/** "TS TS[] → TS TS[]" in the docs' table: applied to each series of an array. */
const PER_SERIES: readonly Overload[] = [
  { params: [TS], returns: TS },
  { params: [TSA], returns: TSA },
];
/** "TS TS[] → S TS": over one series it reduces to a scalar, over an array to one series. */
const REDUCING: readonly Overload[] = [
  { params: [TS], returns: S },
  { params: [TSA], returns: TS },
];
/** MINUTE, HOUR, DAY, DATE, MONTH, YEAR, EPOCH: "TS → TS", a series made of timestamps. */
const TIMESTAMP: readonly Overload[] = [{ params: [TS], returns: TS }];
const FIRST_LAST: readonly Overload[] = [{ params: [TSA], returns: TS }];
/** IF's condition is a series or a scalar; the docs list which branch types go with which. */
const ifForm = (cond: MathType, then: MathType, otherwise: MathType): Overload => ({
  params: [cond, then, otherwise],
  optional: 1,
  returns: TS,
});

/**
 * Every function the using-metric-math page documents, with its documented signatures.
 * Functions AWS added to the page later (LAMBDA, DB_PERF_INSIGHTS and others) are left out on
 * purpose: their signatures were not confirmed here, so using one is reported as an unknown
 * function until it is added with the documented form.
 */
const FUNCTIONS: Readonly<Record<string, readonly Overload[]>> = {
  ABS: PER_SERIES,
  ANOMALY_DETECTION_BAND: [{ params: [TS, S], optional: 1, returns: TSA }],
  AVG: REDUCING,
  CEIL: PER_SERIES,
  DATAPOINT_COUNT: REDUCING,
  DIFF: PER_SERIES,
  DIFF_TIME: PER_SERIES,
  // "TS, [S | REPEAT | LINEAR]" and "TS[], [TS | S | REPEAT | LINEAR]".
  FILL: [
    { params: [TS, S], returns: TS },
    { params: [TS, ["REPEAT", "LINEAR"]], returns: TS },
    { params: [TSA, TS], returns: TSA },
    { params: [TSA, S], returns: TSA },
    { params: [TSA, ["REPEAT", "LINEAR"]], returns: TSA },
  ],
  FIRST: FIRST_LAST,
  LAST: FIRST_LAST,
  FLOOR: PER_SERIES,
  // "Using IF expressions" lists the valid forms: IF(TS comparison S, S | TS, S | TS),
  // IF(TS, TS, TS), IF(TS, S, TS), IF(TS, TS, S), IF(TS, S, S) and IF(S, TS, TS); the false
  // value may be left out (those data points are then dropped). The result is always one TS.
  IF: [
    ifForm(TS, TS, TS),
    ifForm(TS, S, TS),
    ifForm(TS, TS, S),
    ifForm(TS, S, S),
    ifForm(S, TS, TS),
  ],
  // INSIGHT_RULE_METRIC(ruleName, metricName): the docs' example quotes both names.
  INSIGHT_RULE_METRIC: [{ params: [STR, STR], returns: TS }],
  LOG: PER_SERIES,
  LOG10: PER_SERIES,
  MAX: REDUCING,
  METRIC_COUNT: [{ params: [TSA], returns: S }],
  // METRICS() or METRICS("part of an id").
  METRICS: [{ params: [STR], optional: 1, returns: TSA }],
  MIN: REDUCING,
  MINUTE: TIMESTAMP,
  HOUR: TIMESTAMP,
  DAY: TIMESTAMP,
  DATE: TIMESTAMP,
  MONTH: TIMESTAMP,
  YEAR: TIMESTAMP,
  EPOCH: TIMESTAMP,
  // The docs add that PERIOD's input must be a metric, not another expression's result; the
  // type check sees a TS either way.
  PERIOD: [{ params: [TS], returns: S }],
  RATE: PER_SERIES,
  REMOVE_EMPTY: [{ params: [TSA], returns: TSA }],
  RUNNING_SUM: PER_SERIES,
  // SEARCH(' {Namespace, Dimensions} SearchTerm', 'Statistic', Period): the page gives the
  // period; the current page and the CDK's own examples also leave it out.
  SEARCH: [{ params: [STR, STR, S], optional: 1, returns: TSA }],
  SERVICE_QUOTA: [{ params: [TS], returns: TS }],
  // (TS[], S, S) or (TS[], S): start (inclusive) and end (exclusive) of the slice.
  SLICE: [{ params: [TSA, S, S], optional: 1, returns: TSA }],
  // (TS[], FUNCTION, SORT_ORDER[, S]): FUNCTION is AVG, MIN, MAX or SUM, written bare.
  SORT: [
    { params: [TSA, ["AVG", "MIN", "MAX", "SUM"], ["ASC", "DESC"], S], optional: 1, returns: TSA },
  ],
  STDDEV: REDUCING,
  SUM: REDUCING,
  TIME_SERIES: [{ params: [S], returns: TS }],
};

/** Own properties only: an expression calling constructor(...) is an unknown function. */
function functionNamed(name: string): readonly Overload[] | undefined {
  return Object.hasOwn(FUNCTIONS, name) ? FUNCTIONS[name] : undefined;
}

// ---------------------------------------------------------------------------------------------
// Tokenizer: one pass, no regular expressions over the rest of the input (each token is a
// bounded step forward), so it is linear however hostile the input.

type TokenKind = "number" | "string" | "word" | "op" | "(" | ")" | "[" | "]" | "," | "end";
interface Token {
  kind: TokenKind;
  /** The source text (AND and OR read as && and ||). */
  text: string;
  start: number;
  end: number;
}

/** Two-character operators first, so "<=" is not read as "<" then "=". */
const OPERATORS = ["==", "!=", "<=", ">=", "&&", "||", "+", "-", "*", "/", "^", "<", ">"];
const PUNCTUATION = new Set(["(", ")", "[", "]", ","]);

class SyntaxProblem extends Error {}

const isDigit = (c: string) => c >= "0" && c <= "9";
const isWordStart = (c: string) => (c >= "a" && c <= "z") || (c >= "A" && c <= "Z") || c === "_";
const isWordPart = (c: string) => isWordStart(c) || isDigit(c);

function tokenize(source: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < source.length) {
    const c = source.charAt(i);
    const start = i;
    if (c === " " || c === "\t" || c === "\n" || c === "\r") {
      i++;
      continue;
    }
    if (isDigit(c) || (c === "." && isDigit(source.charAt(i + 1)))) {
      while (isDigit(source.charAt(i))) i++;
      if (source.charAt(i) === ".") {
        i++;
        while (isDigit(source.charAt(i))) i++;
      }
      tokens.push({ kind: "number", text: source.slice(start, i), start, end: i });
      continue;
    }
    if (isWordStart(c)) {
      while (isWordPart(source.charAt(i))) i++;
      const text = source.slice(start, i);
      // AND and OR are the docs' spellings of && and ||.
      const kind = text === "AND" || text === "OR" ? "op" : "word";
      tokens.push({
        kind,
        text: text === "AND" ? "&&" : text === "OR" ? "||" : text,
        start,
        end: i,
      });
      continue;
    }
    if (c === "'" || c === '"') {
      // SEARCH takes single quotes (with double-quoted exact matches inside), the docs'
      // METRICS and INSIGHT_RULE_METRIC examples take double quotes. A backslash escapes the
      // next character, as search expressions do for " \ ( ).
      i++;
      while (i < source.length && source.charAt(i) !== c) i += source.charAt(i) === "\\" ? 2 : 1;
      if (i >= source.length) throw new SyntaxProblem(`at ${start + 1}: string is never closed`);
      i++;
      tokens.push({ kind: "string", text: source.slice(start, i), start, end: i });
      continue;
    }
    if (PUNCTUATION.has(c)) {
      tokens.push({ kind: c as TokenKind, text: c, start, end: i + 1 });
      i++;
      continue;
    }
    const op = OPERATORS.find((candidate) => source.startsWith(candidate, i));
    if (op) {
      tokens.push({ kind: "op", text: op, start, end: i + op.length });
      i += op.length;
      continue;
    }
    throw new SyntaxProblem(`at ${start + 1}: unexpected character ${JSON.stringify(c)}`);
  }
  tokens.push({ kind: "end", text: "end of expression", start: source.length, end: source.length });
  return tokens;
}

// ---------------------------------------------------------------------------------------------
// Parser and type checker in one: every parse step returns the value's type, so no tree is kept
// and nothing walks one recursively afterwards.

/**
 * What an id stands for, as the checker sees it: a MetricStat row is a TimeSeries, an expression
 * row is typed by its result, "cycle" is an expression that (indirectly) refers to itself.
 */
type IdLookup = (id: string) => MathType | "Unknown" | "cycle" | undefined;

/** "Keyword" is a bare uppercase word (SORT's DESC); "Unknown" follows a reported problem. */
type ValueType = MathType | "Keyword" | "Unknown";
interface Value {
  type: ValueType;
  start: number;
  end: number;
  /** For a bare uppercase word: the word. */
  word?: string;
  /** For an array literal: its elements' types, to name the ones that are not time series. */
  elements?: { type: ValueType; start: number; end: number }[];
}

const COMPARISONS = new Set(["==", "!=", "<=", ">=", "<", ">"]);

class Checker {
  private readonly tokens: Token[];
  private pos = 0;
  private depth = 0;
  readonly problems: string[] = [];
  usesSearch = false;

  constructor(
    private readonly source: string,
    private readonly lookup: IdLookup,
  ) {
    this.tokens = tokenize(source);
  }

  /** The whole expression: one value, then the end. */
  run(): ValueType {
    const value = this.expression();
    const next = this.peek();
    if (next.kind !== "end") this.syntax(next, `unexpected ${describe(next)}`);
    const type = this.operand(value, "the expression's result");
    if (type === "Scalar") {
      this.problem(
        value,
        "the result is a scalar; CloudWatch needs a time series or an array of time series " +
          "(use it within a larger expression, or wrap it in TIME_SERIES(...))",
      );
    }
    return type;
  }

  // Precedence, loosest first: OR, AND, comparisons, + -, * /, unary -, ^. The docs do not
  // spell it out; the types come out the same either way except for comparisons, which is why
  // the stacks parenthesise a sum before comparing it.

  private expression(): Value {
    if (++this.depth > MAX_DEPTH) {
      this.syntax(this.peek(), `nested more than ${MAX_DEPTH} levels deep`);
    }
    const value = this.binary(0);
    this.depth--;
    return value;
  }

  private static readonly LEVELS: readonly ((op: string) => boolean)[] = [
    (op) => op === "||",
    (op) => op === "&&",
    (op) => COMPARISONS.has(op),
    (op) => op === "+" || op === "-",
    (op) => op === "*" || op === "/",
  ];

  /** A left-associative chain of the operators at `level`; a loop, so long chains are flat. */
  private binary(level: number): Value {
    const operatorAt = Checker.LEVELS[level];
    if (!operatorAt) return this.unary();
    let left = this.binary(level + 1);
    for (;;) {
      const token = this.peek();
      if (token.kind !== "op" || !operatorAt(token.text)) return left;
      this.pos++;
      const right = this.binary(level + 1);
      left =
        level <= 2
          ? this.logical(left, right, token.text)
          : this.arithmetic(left, right, token.text);
    }
  }

  /** Unary minus: documented for S, TS and TS[]. Any run of them is read in one loop. */
  private unary(): Value {
    const first = this.peek();
    let negations = 0;
    while (this.peek().kind === "op" && this.peek().text === "-") {
      this.pos++;
      negations++;
    }
    const value = this.power();
    if (negations === 0) return value;
    const type = this.operand(value, "unary -");
    return { type, start: first.start, end: value.end };
  }

  /**
   * a ^ b ^ c, read as a loop (the types are the same whichever way it associates); an exponent
   * may carry its own minus, as in 2 ^ -1.
   */
  private power(): Value {
    let left = this.primary();
    while (this.peek().kind === "op" && this.peek().text === "^") {
      this.pos++;
      let negated = false;
      while (this.peek().kind === "op" && this.peek().text === "-") {
        this.pos++;
        negated = true;
      }
      let right = this.primary();
      if (negated)
        right = { type: this.operand(right, "unary -"), start: right.start, end: right.end };
      left = this.arithmetic(left, right, "^");
    }
    return left;
  }

  private primary(): Value {
    const token = this.next();
    switch (token.kind) {
      case "number":
        return { type: "Scalar", start: token.start, end: token.end };
      case "string":
        return { type: "String", start: token.start, end: token.end };
      case "word":
        if (this.peek().kind === "(") return this.call(token);
        return this.identifier(token);
      case "(": {
        const inner = this.expression();
        const close = this.expect(")", token);
        return { ...inner, start: token.start, end: close.end };
      }
      case "[":
        return this.array(token);
      default:
        return this.syntax(token, `expected a value, found ${describe(token)}`);
    }
  }

  /** Ids start with a lowercase letter (the docs' rule); a bare uppercase word is a keyword. */
  private identifier(token: Token): Value {
    const span = { start: token.start, end: token.end };
    const first = token.text.charAt(0);
    if (!(first >= "a" && first <= "z")) return { type: "Keyword", word: token.text, ...span };
    const type = this.lookup(token.text);
    if (type === undefined) {
      this.problem(span, `unknown id "${token.text}" (no metric or expression has this Id)`);
      return { type: "Unknown", ...span };
    }
    if (type === "cycle") {
      this.problem(span, `"${token.text}" refers back to this expression`);
      return { type: "Unknown", ...span };
    }
    return { type, ...span };
  }

  /** `[a, b, ...]`: the docs' TS[]; its elements must be series or arrays of series. */
  private array(open: Token): Value {
    const elements: Value[] = [];
    if (this.peek().kind === "]") {
      const close = this.next();
      this.problem(open, "an array needs at least one time series");
      return { type: "Unknown", start: open.start, end: close.end };
    }
    for (;;) {
      const element = this.expression();
      if (element.elements) {
        // [[m1, m2], m3]: the inner array's elements are this one's too.
        elements.push(...element.elements);
      } else {
        elements.push(element);
      }
      if (this.peek().kind !== ",") break;
      this.pos++;
    }
    const close = this.expect("]", open);
    return { type: "TimeSeries[]", start: open.start, end: close.end, elements };
  }

  private call(name: Token): Value {
    const open = this.next();
    const args: Value[] = [];
    if (this.peek().kind !== ")") {
      for (;;) {
        args.push(this.expression());
        if (this.peek().kind !== ",") break;
        this.pos++;
      }
    }
    const close = this.expect(")", open);
    const span = { start: name.start, end: close.end };
    const overloads = functionNamed(name.text);
    if (!overloads) {
      const hint = functionNamed(name.text.toUpperCase())
        ? " (functions are written in uppercase)"
        : "";
      this.problem(name, `unknown function ${name.text}${hint}`);
      for (const arg of args) this.operand(arg, `an argument of ${name.text}`);
      return { type: "Unknown", ...span };
    }
    if (name.text === "SEARCH") this.usesSearch = true;

    const fitting = overloads.filter(
      (o) => args.length <= o.params.length && args.length >= o.params.length - (o.optional ?? 0),
    );
    if (fitting.length === 0) {
      this.problem(span, `${name.text} takes ${arity(overloads)}, got ${args.length}`);
      return { type: "Unknown", ...span };
    }

    const types = args.map((arg, index) => this.argument(name.text, arg, index, fitting));
    const match = fitting.find((o) =>
      types.every(
        (type, index) => type === "Unknown" || accepts(o.params[index], type, args[index]),
      ),
    );
    if (!match) {
      const given = types.map((type, index) => describeArgument(type, args[index]));
      this.problem(
        span,
        `${name.text}(${given.join(", ")}) is not a documented form; ` +
          `CloudWatch documents ${overloads.map((o) => signature(name.text, o)).join(", ")}`,
      );
      return { type: "Unknown", ...span };
    }
    return { type: match.returns, ...span };
  }

  /**
   * One argument's type for overload matching. An array literal holding a scalar is the
   * failure this checker exists for: MAX([invocations, 1]) deploys as CREATE_FAILED with
   * "Unsupported operand type(s) for MAX: '[Array[TimeSeries, Scalar]]'".
   */
  private argument(fn: string, arg: Value, index: number, fitting: readonly Overload[]): ValueType {
    if (arg.elements) {
      const bad = arg.elements.filter((e) => !isSeries(e.type));
      if (bad.length > 0) {
        const named = this.nonSeries(bad);
        const shown = arg.elements
          .slice(0, 10)
          .map((e) => (e.type === "Unknown" ? "?" : kindOf(e.type)));
        this.problem(
          arg,
          `${fn}'s array argument ${this.excerpt(arg)} holds the ${named}; an array holds only ` +
            `time series (CloudWatch rejects it: Unsupported operand type(s) for ${fn}: ` +
            `'[Array[${shown.join(", ")}${arg.elements.length > 10 ? ", ..." : ""}]]')`,
        );
      }
      return "TimeSeries[]";
    }
    if (arg.type === "Keyword") {
      const word = arg.word ?? "";
      const wanted = fitting.some((o) => {
        const param = o.params[index];
        return Array.isArray(param) && param.includes(word);
      });
      if (!wanted) {
        this.problem(arg, unknownWord(word));
        return "Unknown";
      }
    }
    return arg.type;
  }

  /** Comparisons and AND / OR: documented for pairs of series or scalars (TS > S included). */
  private logical(left: Value, right: Value, op: string): Value {
    const a = this.operand(left, op);
    const b = this.operand(right, op);
    const span = { start: left.start, end: right.end };
    if (a === "Unknown" || b === "Unknown") return { type: "Unknown", ...span };
    if (a === "TimeSeries[]" || b === "TimeSeries[]") {
      this.problem(span, `${op} compares time series or scalars, not an array of time series`);
      return { type: "Unknown", ...span };
    }
    return { type: a === "TimeSeries" || b === "TimeSeries" ? "TimeSeries" : "Scalar", ...span };
  }

  /**
   * + - * / ^: the docs list S S, TS TS, TS S, TS[] TS and TS[] S (either order, per the
   * examples 5 * m1 and SUM(100/[m1, m2])); the result is the widest operand. Two arrays are
   * not among them.
   */
  private arithmetic(left: Value, right: Value, op: string): Value {
    const a = this.operand(left, op);
    const b = this.operand(right, op);
    const span = { start: left.start, end: right.end };
    if (a === "Unknown" || b === "Unknown") return { type: "Unknown", ...span };
    if (a === "TimeSeries[]" && b === "TimeSeries[]") {
      this.problem(span, `${op} between two arrays of time series is not a documented form`);
      return { type: "Unknown", ...span };
    }
    const rank = (t: ValueType) => (t === "TimeSeries[]" ? 2 : t === "TimeSeries" ? 1 : 0);
    return { type: rank(a) >= rank(b) ? a : b, ...span };
  }

  /**
   * A value used anywhere but as a function argument: strings and keywords have no meaning
   * there, and an array literal must still hold only series.
   */
  private operand(value: Value, where: string): ValueType {
    if (value.type === "String") {
      this.problem(
        value,
        `${this.excerpt(value)} is a string, which only SEARCH, METRICS and ` +
          `INSIGHT_RULE_METRIC take as an argument (not ${where})`,
      );
      return "Unknown";
    }
    if (value.type === "Keyword") {
      this.problem(value, unknownWord(value.word ?? ""));
      return "Unknown";
    }
    const bad = value.elements?.filter((e) => !isSeries(e.type)) ?? [];
    if (bad.length > 0) {
      const named = this.nonSeries(bad);
      this.problem(
        value,
        `the array ${this.excerpt(value)} holds the ${named}; an array holds only time series`,
      );
    }
    return value.type;
  }

  private peek(): Token {
    return this.tokens[this.pos] ?? (this.tokens.at(-1) as Token);
  }

  private next(): Token {
    const token = this.peek();
    if (token.kind !== "end") this.pos++;
    return token;
  }

  private expect(kind: ")" | "]", open: Token): Token {
    const token = this.peek();
    if (token.kind !== kind) {
      this.syntax(
        token,
        `expected "${kind}" to close the "${open.text}" at ${open.start + 1}, found ${describe(token)}`,
      );
    }
    return this.next();
  }

  /** A syntax error ends the check: what follows it cannot be read reliably. */
  private syntax(token: { start: number }, message: string): never {
    throw new SyntaxProblem(`at ${token.start + 1}: ${message}`);
  }

  private problem(span: { start: number }, message: string) {
    if (this.problems.length < MAX_PROBLEMS) this.problems.push(`at ${span.start + 1}: ${message}`);
    else if (this.problems.length === MAX_PROBLEMS) this.problems.push("... and more problems");
  }

  /** The first few array elements that are not time series, for a message. */
  private nonSeries(bad: readonly { type: ValueType; start: number; end: number }[]): string {
    const named = bad.slice(0, 3).map((e) => `${kindOf(e.type)} ${this.excerpt(e)}`);
    return `${named.join(", ")}${bad.length > 3 ? `, and ${bad.length - 3} more` : ""}`;
  }

  /** The source of a value, shortened so a huge expression gives short messages. */
  private excerpt(span: { start: number; end: number }): string {
    return quoteExcerpt(this.source.slice(span.start, Math.min(span.end, span.start + 81)));
  }
}

function quoteExcerpt(text: string): string {
  return `"${text.length > 80 ? `${text.slice(0, 77)}...` : text}"`;
}

const isSeries = (type: ValueType) =>
  type === "TimeSeries" || type === "TimeSeries[]" || type === "Unknown";

/** The names CloudWatch's own error messages use. */
const kindOf = (type: ValueType) => (type === "Keyword" ? "name" : type);

function unknownWord(word: string): string {
  return (
    `unknown name "${word}" (ids start with a lowercase letter; a function needs its ` +
    "parentheses; bare words are only SORT's AVG/MIN/MAX/SUM and ASC/DESC, FILL's REPEAT/LINEAR)"
  );
}

function accepts(param: Param | undefined, type: ValueType, arg: Value | undefined): boolean {
  if (param === undefined || arg === undefined) return false;
  if (typeof param !== "string") return type === "Keyword" && param.includes(arg.word ?? "");
  return param === type;
}

function describeArgument(type: ValueType, arg: Value | undefined): string {
  if (type === "Keyword") return arg?.word ?? "?";
  return type === "Unknown" ? "?" : type;
}

function signature(fn: string, overload: Overload): string {
  const required = overload.params.length - (overload.optional ?? 0);
  const params = overload.params.map((p, i) => {
    const text = typeof p === "string" ? p : p.join("|");
    return i >= required ? `[${text}]` : text;
  });
  return `${fn}(${params.join(", ")})`;
}

function arity(overloads: readonly Overload[]): string {
  const counts = new Set<number>();
  for (const o of overloads) {
    for (let n = o.params.length - (o.optional ?? 0); n <= o.params.length; n++) counts.add(n);
  }
  const sorted = [...counts].sort((a, b) => a - b);
  const text = sorted.join(" or ");
  return `${text} argument${sorted.length === 1 && sorted[0] === 1 ? "" : "s"}`;
}

function describe(token: Token): string {
  if (token.kind === "end") return "the end of the expression";
  if (token.kind === "string") return "a string";
  return `"${token.text}"`;
}

interface Analysis {
  problems: string[];
  type: ValueType | undefined;
  usesSearch: boolean;
}

/** Metrics Insights queries share the Expression field but are a different language. */
const isInsightsQuery = (expression: string) => /^\s*SELECT\s/i.test(expression);

function analyse(expression: string, lookup: IdLookup): Analysis {
  if (isInsightsQuery(expression)) return { problems: [], type: "Unknown", usesSearch: false };
  let checker: Checker | undefined;
  try {
    checker = new Checker(expression, lookup);
    const type = checker.run();
    return { problems: checker.problems, type, usesSearch: checker.usesSearch };
  } catch (error) {
    if (!(error instanceof SyntaxProblem)) throw error;
    const problems = [...(checker?.problems ?? []), `syntax error ${error.message}`];
    return { problems, type: undefined, usesSearch: checker?.usesSearch ?? false };
  }
}

/**
 * The problems with one metric math expression (none when CloudWatch's documented rules accept
 * it). `ids.timeSeries` are the ids of the other metrics and expressions that yield one time
 * series, `ids.timeSeriesArrays` those that yield an array of them (a SEARCH row).
 */
export function checkMetricMath(
  expression: string,
  ids: { timeSeries: string[]; timeSeriesArrays?: string[] },
): string[] {
  const series = new Set(ids.timeSeries);
  const arrays = new Set(ids.timeSeriesArrays ?? []);
  return analyse(expression, (id) =>
    series.has(id) ? "TimeSeries" : arrays.has(id) ? "TimeSeries[]" : undefined,
  ).problems;
}

// ---------------------------------------------------------------------------------------------
// Synthesized templates: every alarm's Metrics[].Expression and every dashboard row's
// expression, each checked against the ids of the rows beside it.

interface Query {
  id: string | undefined;
  expression: string | undefined;
  returnData: boolean;
}

/**
 * Checks one group of queries (an alarm's Metrics, a dashboard widget's rows). A metric row's
 * id is a TimeSeries; an expression row's id has its own result type, worked out on first use
 * (memoised, and a reference back to an expression still being worked out is a cycle).
 */
function queryProblems(where: string, queries: Query[], alarm: boolean): string[] {
  const byId = new Map<string, Query>();
  for (const q of queries) if (q.id !== undefined) byId.set(q.id, q);
  const results = new Map<Query, Analysis | "pending">();

  const resultOf = (query: Query & { expression: string }): Analysis => {
    const known = results.get(query);
    if (known && known !== "pending") return known;
    results.set(query, "pending");
    const analysis = analyse(query.expression, (id) => {
      const other = byId.get(id);
      if (!other) return undefined;
      if (other.expression === undefined) return "TimeSeries";
      if (results.get(other) === "pending") return "cycle";
      const type = resultOf(other as Query & { expression: string }).type;
      return type === undefined || type === "Keyword" ? "Unknown" : type;
    });
    results.set(query, analysis);
    return analysis;
  };

  const problems: string[] = [];
  for (const query of queries) {
    if (query.expression === undefined) continue;
    const analysis = resultOf(query as Query & { expression: string });
    const found = [...analysis.problems];
    // PutMetricAlarm: "Any expression used in a PutMetricAlarm operation must return a single
    // time series", and the docs: "You can't create an alarm based on a SEARCH expression".
    if (alarm && analysis.usesSearch) found.push("an alarm cannot use SEARCH");
    if (alarm && query.returnData && analysis.type === "TimeSeries[]") {
      found.push("an alarm watches one time series; this returns an array of time series");
    }
    const label = `${where}${query.id ? ` ${query.id}` : ""} ${quoteExcerpt(query.expression)}`;
    for (const problem of found) problems.push(`${label}: ${problem}`);
  }
  return problems;
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/**
 * A CloudFormation value as text: strings as they are, Fn::Join joined, and any other token
 * (Ref, Fn::GetAtt, ...) as a placeholder that is safe inside a JSON string, which is where the
 * CDK puts them in a dashboard body (the region, an alarm's ARN).
 */
function renderTokens(value: unknown): string {
  if (typeof value === "string") return value;
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  if (isObject(value)) {
    const join = value["Fn::Join"];
    if (Array.isArray(join) && Array.isArray(join[1])) {
      return join[1].map(renderTokens).join(renderTokens(join[0]));
    }
    if (typeof value.Ref === "string") return `<Ref ${value.Ref}>`;
    const getAtt = value["Fn::GetAtt"];
    if (getAtt !== undefined) {
      return `<GetAtt ${Array.isArray(getAtt) ? getAtt.join(".") : String(getAtt)}>`;
    }
    return `<${Object.keys(value)[0] ?? "token"}>`;
  }
  return "<token>";
}

function alarmProblems(logicalId: string, properties: unknown): string[] {
  if (!isObject(properties) || !Array.isArray(properties.Metrics)) return [];
  const queries = properties.Metrics.filter(isObject).map((m) => ({
    id: typeof m.Id === "string" ? m.Id : undefined,
    expression: m.Expression === undefined ? undefined : renderTokens(m.Expression),
    returnData: m.ReturnData !== false,
  }));
  return queryProblems(logicalId, queries, true);
}

function dashboardProblems(logicalId: string, properties: unknown): string[] {
  if (!isObject(properties) || properties.DashboardBody === undefined) return [];
  let body: unknown;
  try {
    body = JSON.parse(renderTokens(properties.DashboardBody));
  } catch (error) {
    return [`${logicalId}: DashboardBody is not JSON (${(error as Error).message})`];
  }
  const widgets = isObject(body) && Array.isArray(body.widgets) ? body.widgets : [];
  const problems: string[] = [];
  widgets.forEach((widget, index) => {
    const widgetProperties = isObject(widget) ? widget.properties : undefined;
    if (!isObject(widgetProperties) || !Array.isArray(widgetProperties.metrics)) return;
    // A row is [namespace, metricName, dimension..., options?] or [options]; the options
    // object, when there is one, is the row's last element and holds its id and expression.
    const queries = widgetProperties.metrics.filter(Array.isArray).map((row: unknown[]) => {
      const options = row.at(-1);
      const opts = isObject(options) ? options : {};
      return {
        id: typeof opts.id === "string" ? opts.id : undefined,
        expression: typeof opts.expression === "string" ? opts.expression : undefined,
        returnData: opts.visible !== false,
      };
    });
    const title =
      typeof widgetProperties.title === "string"
        ? ` ${JSON.stringify(widgetProperties.title)}`
        : "";
    problems.push(...queryProblems(`${logicalId} widgets[${index}]${title}`, queries, false));
  });
  return problems;
}

/**
 * Every metric math problem in a synthesized template, each naming the resource's logical id
 * and the expression: AWS::CloudWatch::Alarm Metrics[].Expression and every
 * AWS::CloudWatch::Dashboard widget row's expression.
 */
export function metricMathProblems(
  // biome-ignore lint/suspicious/noExplicitAny: CloudFormation JSON is untyped by nature.
  template: { Resources?: Record<string, any> },
): string[] {
  const problems: string[] = [];
  for (const [logicalId, resource] of Object.entries(template.Resources ?? {})) {
    if (!isObject(resource)) continue;
    if (resource.Type === "AWS::CloudWatch::Alarm") {
      problems.push(...alarmProblems(logicalId, resource.Properties));
    } else if (resource.Type === "AWS::CloudWatch::Dashboard") {
      problems.push(...dashboardProblems(logicalId, resource.Properties));
    }
  }
  return problems;
}
