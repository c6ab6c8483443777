import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

/**
 * The architecture picture is held by the dependency rules; these checks keep the pages that show
 * it and the rules' list in step: the README's picture is the one of docs/architecture.md, and
 * that page lists exactly the rules `npm run depcheck` applies.
 */
const read = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8');
const pictureOf = (page: string) => /```\n( API clients[\s\S]*?)```/.exec(page)?.[1];
const rules = (createRequire(import.meta.url)('../../.dependency-cruiser.cjs') as { forbidden: { name: string; comment?: string }[] }).forbidden;

describe('docs/architecture.md and the dependency rules', () => {
  const page = read('docs/architecture.md');

  it('the README shows the picture of docs/architecture.md', () => {
    const picture = pictureOf(page);
    expect(picture, 'the picture in docs/architecture.md').to.be.a('string');
    expect(pictureOf(read('README.md'))).to.equal(picture);
  });

  it('lists every rule of .dependency-cruiser.cjs, and no other, each with its reason in the config', () => {
    const section = page.slice(page.indexOf('## The rules that keep it so'), page.indexOf('## Adding a job setting'));
    const listed = new Set([...section.matchAll(/^\| (`[a-z-]+`(?:, `[a-z-]+`)*) \|/gm)].flatMap((m) => [...m[1]!.matchAll(/`([a-z-]+)`/g)].map((n) => n[1]!)));
    listed.delete('rule');
    expect([...listed].sort()).to.deep.equal(rules.map((r) => r.name).sort());
    for (const rule of rules) expect(rule.comment, rule.name).to.be.a('string').and.not.equal('');
  });
});
