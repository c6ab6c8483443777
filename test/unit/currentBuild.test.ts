import { expect } from 'chai';
import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { currentBuild } from '../../bin/build.js';

/** `npm start`, the CLI and the tests run dist/ only while it is newer than everything it is built from. */
describe('currentBuild: when dist/ may run instead of the sources', () => {
  let root: string;
  const at = (path: string, seconds: number) => utimesSync(join(root, path), seconds, seconds);
  const file = (path: string, seconds: number) => {
    mkdirSync(join(root, path, '..'), { recursive: true });
    writeFileSync(join(root, path), '');
    at(path, seconds);
  };

  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'tock-build-'));
    file('services/jobs/main.ts', 1000);
    file('shared/log.ts', 1000);
    file('package.json', 1000);
    file('dist/services/embedded/main.js', 2000);
    file('dist/services/gateway/dashboard/static/app.js', 2000);
    // A directory's time moves when a file is added to it or removed: these were made before the build.
    for (const dir of ['services', 'services/jobs', 'shared']) at(dir, 1000);
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('a build newer than every source is current', () => {
    expect(currentBuild(root)).to.equal(join(root, 'dist'));
  });

  it('a source changed after the build, in any directory it compiles, or package.json, makes it stale', () => {
    for (const path of ['services/jobs/main.ts', 'shared/log.ts', 'package.json']) {
      at(path, 3000);
      expect(currentBuild(root), path).to.equal(undefined);
      at(path, 1000);
    }
    file('shared/new.ts', 1000);
    at('shared', 3000);
    expect(currentBuild(root), 'a new file').to.equal(undefined);
  });

  it("without the dashboard's bundle, or without the compiled entry point, there is no build", () => {
    rmSync(join(root, 'dist/services/gateway/dashboard/static/app.js'));
    expect(currentBuild(root)).to.equal(undefined);
  });

  it('an image (dist/ without the sources it came from) runs its build', () => {
    rmSync(join(root, 'services'), { recursive: true });
    rmSync(join(root, 'shared'), { recursive: true });
    at('package.json', 3000);
    expect(currentBuild(root)).to.equal(join(root, 'dist'));
  });
});
