/**
 * A promise checked by a bench: prints the figure next to its bound. A figure past its bound is
 * a finding to look into (the process then exits with 3 and `npm run bench` lists it), not a
 * flaky test: a shared machine's load moves these figures.
 */
export function bound(what: string, value: number, limit: number, unit = 'ms') {
  const line = `${what}: ${value.toFixed(0)} ${unit} (bound ${limit} ${unit})`;
  if (value < limit) console.log(`  ${line}`);
  else {
    console.log(`  FINDING: ${line}`);
    process.exitCode = FINDING_EXIT;
  }
}

/** A bench's exit status when it ran to the end but a bound did not hold. */
export const FINDING_EXIT = 3;
