import { AssertionError } from 'chai';

/** The first group of `pattern` in `text`, which a test expects to match; no match fails the test. */
export function capture(pattern: RegExp, text: string): string {
  const group = pattern.exec(text)?.[1];
  if (group === undefined) throw new AssertionError(`expected ${pattern} to match ${JSON.stringify(text.slice(0, 500))}`);
  return group;
}
