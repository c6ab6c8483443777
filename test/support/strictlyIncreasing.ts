import { expect } from 'chai';

/** Fails the test unless each event store position is after the one before it. */
export function expectStrictlyIncreasing(positions: bigint[]) {
  for (const [i, position] of positions.entries()) {
    const previous = positions[i - 1];
    if (previous === undefined) continue;
    expect(position > previous, `position ${position} after ${previous}`).to.equal(true);
  }
}
