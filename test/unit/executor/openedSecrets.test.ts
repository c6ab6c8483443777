import { expect } from 'chai';
import { createKeyring, EnvelopeError, generateKey, secretBox } from '../../../shared/crypto/envelope.ts';
import { rememberOpened } from '../../../services/executor/openedSecrets.ts';

describe('secrets the executor has opened', () => {
  const box = secretBox(createKeyring([{ key: generateKey() }]));

  it('opens each sealed value once, then answers from memory, keeping at most its bound', () => {
    let opens = 0;
    const counted = { seal: box.seal, open: (v: string) => (opens++, box.open(v)) };
    const remembered = rememberOpened(counted, 2);
    const [a, b, c] = ['alpha', 'beta', 'gamma'].map((p) => box.seal(p)) as [string, string, string];
    expect([remembered.open(a), remembered.open(a), remembered.open(b)]).to.deep.equal(['alpha', 'alpha', 'beta']);
    expect(opens).to.equal(2);
    remembered.open(c); // a, the oldest, goes
    remembered.open(b);
    expect(opens).to.equal(3);
    remembered.open(a);
    expect(opens).to.equal(4);
  });

  it('remembers no failure: a value that does not open throws every time', () => {
    const remembered = rememberOpened(box);
    const other = secretBox(createKeyring([{ id: 'other', key: generateKey() }])).seal('x');
    expect(() => remembered.open(other)).to.throw(EnvelopeError);
    expect(() => remembered.open(other)).to.throw(EnvelopeError);
  });
});
