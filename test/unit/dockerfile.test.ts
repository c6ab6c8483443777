import { expect } from 'chai';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * deploy/Dockerfile read as a file (no Docker engine here): two stages, the runtime one holding
 * production dependencies and compiled JavaScript only, run by plain node as a numeric non-root
 * user on Node 24 by default. test/integration/compiled.test.ts runs the same build commands.
 */

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));

interface Instruction {
  op: string;
  args: string;
}
interface Stage {
  from: string;
  name: string;
  instructions: Instruction[];
}

/** Instructions with their line continuations joined and comments dropped, grouped by stage. */
function parseDockerfile(text: string): { args: Record<string, string>; stages: Stage[] } {
  const lines = text.replace(/\\\n/g, ' ').split('\n').map((l) => l.trim()).filter((l) => l && !l.startsWith('#'));
  const args: Record<string, string> = {};
  const stages: Stage[] = [];
  for (const line of lines) {
    const [, op, rest] = /^(\S+)\s+([\s\S]*)$/.exec(line)!;
    const instruction = { op: op!.toUpperCase(), args: rest!.replace(/\s+/g, ' ') };
    if (instruction.op === 'FROM') {
      const [, from, name] = /^(\S+)(?: AS (\S+))?$/i.exec(instruction.args)!;
      stages.push({ from: from!, name: name ?? String(stages.length), instructions: [] });
    } else if (instruction.op === 'ARG' && stages.length === 0) {
      const [key, value] = instruction.args.split('=');
      args[key!] = value ?? '';
    } else stages.at(-1)!.instructions.push(instruction);
  }
  return { args, stages };
}

const { args, stages } = parseDockerfile(readFileSync(join(ROOT, 'deploy/Dockerfile'), 'utf8'));
const build = stages.find((s) => s.name === 'build')!;
const runtime = stages.at(-1)!;
const ops = (stage: Stage, op: string) => stage.instructions.filter((i) => i.op === op).map((i) => i.args);
const execForm = (text: string): string[] => JSON.parse(text);

describe('deploy/Dockerfile', () => {
  it('has a build stage and a runtime stage, both on NODE_IMAGE (Node 24 LTS by default)', () => {
    expect(stages.map((s) => s.name)).to.deep.equal(['build', 'runtime']);
    for (const stage of stages) expect(stage.from).to.equal('${NODE_IMAGE}');
    expect(args.NODE_IMAGE).to.match(/^node:24(\.\d+)*-/);
  });

  it('the build stage installs from the lock file (npm ci), compiles, then drops dev dependencies', () => {
    const runs = ops(build, 'RUN').join(' && ');
    const order = ['npm ci', 'npm run build', 'npm prune --omit=dev'].map((step) => runs.indexOf(step));
    for (const [i, at] of order.entries()) expect(at, ['npm ci', 'npm run build', 'npm prune --omit=dev'][i]).to.be.greaterThan(-1);
    expect(order).to.deep.equal([...order].sort((a, b) => a - b));
    expect(pkg.scripts.build).to.contain('tsc -p tsconfig.build.json');
    // Whatever the build copies from the context exists (a missing file fails `docker build`).
    for (const copy of ops(build, 'COPY')) {
      for (const source of copy.split(' ').slice(0, -1).filter((s) => !s.startsWith('--'))) expect(existsSync(join(ROOT, source)), `COPY ${source}`).to.equal(true);
    }
  });

  it('the runtime stage holds production dependencies and dist/ only: no TypeScript source, no tsx', () => {
    const copies = ops(runtime, 'COPY');
    const fromBuild = copies.filter((c) => c.startsWith('--from=build')).map((c) => c.split(' ')[1]);
    expect(fromBuild).to.have.members(['/app/package.json', '/app/node_modules', '/app/dist']);
    const fromContext = copies.filter((c) => !c.startsWith('--from')).flatMap((c) => c.split(' ').slice(0, -1));
    expect(fromContext, 'only the CLI launcher comes from the context').to.deep.equal(['bin']);
    expect(runtime.instructions.map((i) => i.args).join('\n')).not.to.match(/\btsx\b|\.ts\b|(?<!dist\/)(services|shared)\//);
    // The build's prune only keeps what runs: tsx and the compiler are dev dependencies.
    for (const dev of ['tsx', 'typescript', 'cron-parser']) expect(pkg.dependencies, dev).not.to.have.property(dev);
  });

  it('runs the compiled embedded entry point with plain node as a numeric non-root user', () => {
    const cmd = execForm(ops(runtime, 'CMD')[0]!);
    expect(cmd[0]).to.equal('node');
    expect(cmd.filter((a) => a === '--import' || a === '--loader')).to.deep.equal([]);
    expect(cmd.at(-1)).to.equal('dist/services/embedded/main.js');
    expect(existsSync(join(ROOT, 'services/embedded/main.ts')), 'its source').to.equal(true);
    const [user] = ops(runtime, 'USER');
    expect(user).to.match(/^[1-9]\d*:[1-9]\d*$/);
  });

  it('checks its health on the gateway /healthz with a timeout', () => {
    const [check] = ops(runtime, 'HEALTHCHECK');
    expect(check).to.match(/--timeout=\d+s/);
    expect(check).to.match(/--start-period=\d+s/);
    const cmd = execForm(check!.slice(check!.indexOf('CMD ') + 4));
    expect(cmd[0]).to.equal('node');
    expect(cmd.join(' ')).to.contain('/healthz');
  });

  it('package.json names the supported Node lines (20, 22, 24) in engines', () => {
    const engines: string = pkg.engines.node;
    expect(engines.split('||').map((r) => /\^?(\d+)/.exec(r.trim())![1])).to.deep.equal(['20', '22', '24']);
  });
});
