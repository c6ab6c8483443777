import { absAtom, absJoin, absNot, VAR_INDEX, type Abs, type FilterFn, type FilterVars } from './filterAbstract.ts';
import { ScheduleError } from './scheduleError.ts';

export type { FilterFn, FilterVars };

/** A compiled filter and which variables it reads (lets the scheduler skip whole hours/days). */
export interface CompiledFilter {
  readonly test: FilterFn;
  readonly uses: ReadonlySet<keyof FilterVars>;
  /** The same condition over sets of values (filterAbstract.ts), for skipping spans that cannot pass. */
  readonly abs: Abs;
}

type Tok = { kind: 'num' | 'str' | 'id' | 'op' | 'end'; text: string; pos: number; value?: number | string };

const WEEKDAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
const VARIABLES = ['minute', 'hour', 'day', 'month', 'weekday'] as const;

function tokenize(src: string, fail: (pos: number, problem: string) => never): Tok[] {
  const out: Tok[] = [];
  const re = /\s*(?:(\d+)|'([^']*)'|"([^"]*)"|([A-Za-z_]\w*)|(==|!=|<=|>=|<|>|\(|\)|\[|\]|,)|(\S))/y;
  for (;;) {
    const m = re.exec(src);
    if (!m) break; // only whitespace is left
    const pos = m.index + m[0].length - m[0].trimStart().length;
    if (m[1] !== undefined) out.push({ kind: 'num', text: m[1], pos, value: Number(m[1]) });
    else if (m[2] !== undefined || m[3] !== undefined) out.push({ kind: 'str', text: m[0].trim(), pos, value: m[2] ?? m[3] });
    else if (m[4] !== undefined) out.push({ kind: 'id', text: m[4], pos });
    else if (m[5] !== undefined) out.push({ kind: 'op', text: m[5], pos });
    else {
      const c = m[6]!;
      if (c === "'" || c === '"') fail(pos, `a string without its closing ${c}`);
      const hint = c === '=' ? "; compare with '=='" : c === '&' || c === '|' || c === '!' ? "; write 'and', 'or', 'not'" : '';
      fail(pos, `unexpected '${c}'${hint}`);
    }
    if (re.lastIndex >= src.length) break;
  }
  out.push({ kind: 'end', text: 'the end', pos: src.length });
  return out;
}

/** A typed node: the static type, an evaluator and the variables it reads (bits of VAR_INDEX). */
type Node =
  | { type: 'bool'; pos: number; ev: FilterFn; vars: number; abs: Abs }
  | { type: 'number' | 'weekday'; pos: number; ev: (v: FilterVars) => number; constant?: number; vars: number }
  | { type: 'string'; pos: number; value: string; vars: 0 }
  | { type: 'list'; pos: number; items: Node[]; vars: 0 };
type BoolNode = Extract<Node, { type: 'bool' }>;

/**
 * Compiles a filter such as `day == 12 and weekday == 'Fri'` with a hand-written tokenizer and
 * recursive-descent parser (never eval). Precedence, loosest first: or, and, comparison
 * (== != < <= > >= in, not in), not (so `not day == 1` is an error: write `not (day == 1)`).
 * Types are checked here, so a compiled filter cannot fail at run time.
 */
export function compileFilter(src: string): CompiledFilter {
  const fail = (pos: number, problem: string): never => {
    throw new ScheduleError('filter', `filter '${src}' at column ${pos + 1}: ${problem}`);
  };
  const toks = tokenize(src, fail);
  const uses = new Set<keyof FilterVars>();
  let i = 0;
  const peek = () => toks[i]!;
  const isWord = (t: Tok, w: string) => t.kind === 'id' && t.text.toLowerCase() === w;
  const expectClose = (text: string, open: Tok) => {
    const t = toks[i]!;
    if (t.text !== text) fail(t.pos, `expected '${text}' to close the '${open.text}' at column ${open.pos + 1}, found ${describeTok(t)}`);
    i++;
  };
  const asBool = (n: Node, what: string): BoolNode => {
    if (n.type !== 'bool') fail(n.pos, `${what} needs a condition (true or false), not a ${n.type}`);
    return n as BoolNode;
  };
  const join = (k: 'and' | 'or', pos: number, a: BoolNode, b: BoolNode): BoolNode => {
    const x = a.ev;
    const y = b.ev;
    const ev: FilterFn = k === 'and' ? (v) => x(v) && y(v) : (v) => x(v) || y(v);
    return { type: 'bool', pos, ev, vars: a.vars | b.vars, abs: absJoin(k, a.abs, b.abs) };
  };

  const parseOr = (): Node => {
    let left = parseAnd();
    while (isWord(peek(), 'or')) {
      const pos = toks[i++]!.pos;
      left = join('or', pos, asBool(left, "'or'"), asBool(parseAnd(), "'or'"));
    }
    return left;
  };
  const parseAnd = (): Node => {
    let left = parseCompare();
    while (isWord(peek(), 'and')) {
      const pos = toks[i++]!.pos;
      left = join('and', pos, asBool(left, "'and'"), asBool(parseCompare(), "'and'"));
    }
    return left;
  };
  const parseCompare = (): Node => {
    const left = parseUnary();
    const t = peek();
    if (t.kind === 'op' && ['==', '!=', '<', '<=', '>', '>='].includes(t.text)) {
      i++;
      return compare(left, t, parseUnary(), fail);
    }
    const negated = isWord(t, 'not') && isWord(toks[i + 1]!, 'in');
    if (isWord(t, 'in') || negated) {
      i += negated ? 2 : 1;
      const test = member(left, parseUnary(), fail);
      const ev: FilterFn = negated ? (v) => !test(v) : test;
      return { type: 'bool', pos: t.pos, ev, vars: left.vars, abs: absAtom(ev, left.vars) };
    }
    return left;
  };
  const parseUnary = (): Node => {
    const t = peek();
    if (isWord(t, 'not') && !isWord(toks[i + 1]!, 'in')) {
      i++;
      const inner = parseUnary();
      if (inner.type !== 'bool') fail(t.pos, "'not' applies to a condition; 'not' binds tighter than '==', so write 'not (...)'");
      const { ev, vars, abs } = inner as BoolNode;
      return { type: 'bool', pos: t.pos, ev: (v) => !ev(v), vars, abs: absNot(abs) };
    }
    return parsePrimary();
  };
  const parsePrimary = (): Node => {
    const t = toks[i++]!;
    if (t.kind === 'num') {
      const n = t.value as number;
      return { type: 'number', pos: t.pos, ev: () => n, constant: n, vars: 0 };
    }
    if (t.kind === 'str') return { type: 'string', pos: t.pos, value: t.value as string, vars: 0 };
    if (t.text === '(') {
      const inner = parseOr();
      expectClose(')', t);
      return inner;
    }
    if (t.text === '[') {
      const items: Node[] = [];
      if (peek().text !== ']') {
        items.push(parsePrimary());
        while (peek().text === ',') {
          i++;
          items.push(parsePrimary());
        }
      }
      expectClose(']', t);
      return { type: 'list', pos: t.pos, items, vars: 0 };
    }
    if (t.kind === 'id') {
      const name = t.text.toLowerCase() as (typeof VARIABLES)[number];
      if (!VARIABLES.includes(name)) {
        fail(t.pos, `unknown variable '${t.text}'; use minute, hour, day, month or weekday`);
      }
      uses.add(name);
      return { type: name === 'weekday' ? 'weekday' : 'number', pos: t.pos, ev: (v) => v[name], vars: 1 << VAR_INDEX[name] };
    }
    return fail(t.pos, `expected a value but found ${describeTok(t)}`);
  };

  const root = parseOr();
  if (peek().kind !== 'end') fail(peek().pos, `unexpected ${describeTok(peek())}; join conditions with 'and' or 'or'`);
  const { ev: test, abs } = asBool(root, 'the filter');
  return { test, uses, abs };
}

function describeTok(t: Tok): string {
  return t.kind === 'end' ? 'the end of the filter' : `'${t.text}'`;
}

/** Folds a string literal into a weekday number, or fails naming the valid spellings. */
function weekdayValue(n: Node, fail: (pos: number, p: string) => never): number {
  const s = (n as { value: string }).value;
  const i = WEEKDAYS.findIndex((w) => w.toLowerCase() === s.toLowerCase());
  if (i < 0) fail(n.pos, `'${s}' is not a weekday; use 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat' or 'Sun'`);
  return i;
}

/** A side of a comparison as a number evaluator, given the type of the other side. */
function operand(n: Node, other: Node, fail: (pos: number, p: string) => never): (v: FilterVars) => number {
  if (n.type === 'number' || n.type === 'weekday') return n.ev;
  if (n.type === 'string' && other.type === 'weekday') {
    const w = weekdayValue(n, fail);
    return () => w;
  }
  if (n.type === 'bool') {
    const ev = n.ev;
    return (v) => (ev(v) ? 1 : 0);
  }
  return fail(n.pos, `a ${n.type} cannot be compared here`);
}

function compare(a: Node, op: Tok, b: Node, fail: (pos: number, p: string) => never): Node {
  const kind = (n: Node) => (n.type === 'string' || n.type === 'weekday' ? 'string' : n.type);
  if (kind(a) !== kind(b)) fail(op.pos, `'${op.text}' compares a ${kind(a)} with a ${kind(b)}`);
  if (a.type === 'string' && b.type === 'string') fail(a.pos, 'compare a variable (minute, hour, day, month, weekday) with a value');
  if (kind(a) !== 'number' && op.text !== '==' && op.text !== '!=') {
    fail(op.pos, `'${op.text}' needs numbers; use '==', '!=' or 'in' for ${kind(a)}s`);
  }
  const x = operand(a, b, fail);
  const y = operand(b, a, fail);
  const ops: Record<string, FilterFn> = {
    '==': (v) => x(v) === y(v),
    '!=': (v) => x(v) !== y(v),
    '<': (v) => x(v) < y(v),
    '<=': (v) => x(v) <= y(v),
    '>': (v) => x(v) > y(v),
    '>=': (v) => x(v) >= y(v),
  };
  const ev = ops[op.text]!;
  return { type: 'bool', pos: op.pos, ev, vars: a.vars | b.vars, abs: absAtom(ev, a.vars | b.vars) };
}

function member(a: Node, list: Node, fail: (pos: number, p: string) => never): FilterFn {
  if (list.type !== 'list') return fail(list.pos, "'in' needs a list such as [1, 2] or ['Sat', 'Sun']");
  if (a.type !== 'number' && a.type !== 'weekday') return fail(a.pos, "'in' needs minute, hour, day, month or weekday on its left");
  const values = new Set<number>();
  for (const item of list.items) {
    if (a.type === 'weekday' && item.type === 'string') values.add(weekdayValue(item, fail));
    else if (a.type === 'number' && item.type === 'number' && item.constant !== undefined) values.add(item.constant);
    else fail(item.pos, `a list after 'in' holds ${a.type === 'weekday' ? "weekday names ('Sat')" : 'numbers'} only`);
  }
  const ev = a.ev;
  return (v) => values.has(ev(v));
}
