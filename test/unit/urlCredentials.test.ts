import { expect } from 'chai';
import { maskUrl, maskUrlsIn } from '../../shared/urlCredentials.ts';

describe('URL credentials: one masker for answers, events and logs', () => {
  it('a URL alone and a URL inside text are masked to the same `***@` form', () => {
    for (const url of ['https://alice:pw@example.com/p', 'https://token@example.com:8443/x?y=1', 'postgres://u:p@db.example.com:5432/tock']) {
      expect(maskUrlsIn(`connect to ${url} failed`)).to.equal(`connect to ${maskUrl(url)} failed`);
      expect(maskUrl(url)).to.match(/^[a-z]+:\/\/\*\*\*@/);
    }
  });

  it('an @ outside the authority is no credential', () => {
    expect(maskUrl('http://example.com/x?mail=a@b.c')).to.equal('http://example.com/x?mail=a@b.c');
    expect(maskUrlsIn('mail a@b.c about http://example.com/x')).to.equal('mail a@b.c about http://example.com/x');
  });
});
