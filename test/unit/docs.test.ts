import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { nextCommand } from '../../services/cli/nextCommand.ts';
import { parseSchedule } from '../../shared/schedule/index.ts';

/**
 * The user documentation is checked against the code: every `$ tock next ...` example in
 * docs/schedule.md must print what the page shows, and every expression or filter in its tables
 * must be accepted.
 */
const page = readFileSync(new URL('../../docs/schedule.md', import.meta.url), 'utf8');

/** Splits a command line the way a POSIX shell does for plain words and '...' / "..." quotes. */
function shellWords(line: string): string[] {
  const words: string[] = [];
  const re = /'([^']*)'|"([^"]*)"|(\S+)/g;
  let word: string | null = null;
  let last = 0;
  for (let m = re.exec(line); m; m = re.exec(line)) {
    const glued = word !== null && m.index === last;
    const part = m[1] ?? m[2] ?? m[3] ?? '';
    if (glued) word += part;
    else {
      if (word !== null) words.push(word);
      word = part;
    }
    last = m.index + m[0].length;
  }
  if (word !== null) words.push(word);
  return words;
}

interface Example {
  command: string;
  expected: string[];
}

function examples(markdown: string): Example[] {
  const found: Example[] = [];
  for (const block of markdown.matchAll(/^```[a-z]*\n([\s\S]*?)^```/gm)) {
    const lines = (block[1] ?? '').split('\n').filter((l) => l !== '');
    if (!lines[0]?.startsWith('$ tock next ')) continue;
    found.push({ command: lines[0].slice(2), expected: lines.slice(1) });
  }
  return found;
}

/** The backticked first cell of every table row under a header whose first cell is `header`. */
function tableColumn(markdown: string, header: string): string[] {
  const cells: string[] = [];
  let inTable = false;
  for (const line of markdown.split('\n')) {
    if (!line.startsWith('|')) {
      inTable = false;
      continue;
    }
    const first = line.split('|')[1]?.trim() ?? '';
    if (first === header) inTable = true;
    else if (inTable && /^`.*`$/.test(first)) cells.push(first.slice(1, -1));
  }
  return cells;
}

describe('docs/schedule.md', () => {
  const found = examples(page);

  it('has runnable examples', () => expect(found.length).to.be.greaterThan(15));

  for (const { command, expected } of found) {
    it(command, async () => {
      const printed: string[] = [];
      const args = shellWords(command).slice(2);
      await nextCommand(args, (l) => printed.push(l), (l) => printed.push(l));
      expect(printed).to.deep.equal(expected);
    });
  }

  it('accepts every expression in its tables', () => {
    const expressions = tableColumn(page, 'expression');
    expect(expressions.length).to.be.greaterThan(20);
    for (const expression of expressions) {
      expect(() => parseSchedule({ expression, timezone: 'UTC', jobId: 1 }), expression).not.to.throw();
    }
  });

  it('accepts every filter in its tables', () => {
    const filters = tableColumn(page, 'filter');
    expect(filters.length).to.be.greaterThan(3);
    for (const filter of filters) {
      expect(() => parseSchedule({ expression: '*/5 * * * *', timezone: 'UTC', filter, jobId: 1 }), filter).not.to.throw();
    }
  });
});
