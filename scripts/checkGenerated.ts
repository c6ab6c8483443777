// Fails when shared/gen is stale: regenerates from proto/ into a temp dir and compares.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';

const root = join(import.meta.dirname, '..');
const out = mkdtempSync(join(tmpdir(), 'tock-gen-'));
const files = (dir: string): string[] =>
  readdirSync(dir).flatMap((name) => (statSync(join(dir, name)).isDirectory() ? files(join(dir, name)) : [join(dir, name)]));

try {
  execFileSync(join(root, 'node_modules/.bin/buf'), ['generate', '--template', JSON.stringify({
    version: 'v2',
    plugins: [{ local: join(root, 'node_modules/.bin/protoc-gen-es'), out, opt: ['target=ts', 'import_extension=ts'] }],
  }), 'proto'], { cwd: root, stdio: 'inherit' });
  const fresh = files(out).map((f) => relative(out, f)).sort();
  const committed = files(join(root, 'shared/gen')).map((f) => relative(join(root, 'shared/gen'), f)).sort();
  const stale = [...new Set([...fresh, ...committed])].filter((f) => {
    try {
      return readFileSync(join(out, f), 'utf8') !== readFileSync(join(root, 'shared/gen', f), 'utf8');
    } catch {
      return true;
    }
  });
  if (stale.length) {
    console.error(`shared/gen is stale (run npm run gen): ${stale.join(', ')}`);
    process.exit(1);
  }
  console.log(`shared/gen is current (${fresh.length} files)`);
} finally {
  rmSync(out, { recursive: true, force: true });
}
