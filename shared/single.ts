/**
 * The one element a list is known to hold (a query that always answers one row, a batch of one).
 * An empty list is a broken promise of the code that made it, not bad input: it throws.
 */
export function single<T>(list: readonly T[], what: string): T {
  const [first] = list;
  if (first === undefined) throw new Error(`${what}: expected one element, got none`);
  return first;
}
