// `npm start`: embedded Tock from the compiled build (dist/), plain JavaScript. Run through a
// TypeScript loader instead, the process held about 75 MB more and compiled every file again at
// each start. The build is made first when there is none or the sources changed after it (dev
// dependencies needed: `npm install` has them). The image runs dist/ directly.
import { ensureBuild } from './build.js';

try {
  ensureBuild();
} catch (error) {
  process.stderr.write(`${error.message}\n`);
  process.exit(1);
}
await import('../dist/services/embedded/main.js');
