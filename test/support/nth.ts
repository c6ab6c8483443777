import { AssertionError } from 'chai';

/** Element `i` of a list a test expects to hold it; a shorter list fails the test with a clear message. */
export function nth<T>(list: readonly T[], i = 0): T {
  const element = list[i];
  if (element === undefined) throw new AssertionError(`expected an element at index ${i}, the list has ${list.length}`);
  return element;
}
