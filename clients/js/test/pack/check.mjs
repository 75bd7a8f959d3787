/**
 * The packaging test: `npm pack` (which builds), then for each supported `ai` version an
 * empty project that installs the tarball next to that version, imports every export
 * and runs a chat against a real `adk-asgi serve` (smoke.mjs), and type-checks
 * sample.ts (and sample-approvals.ts with ai >= 6) with `tsc` and NodeNext resolution,
 * as well as the package's declarations themselves against that version's types.
 *
 *   node test/pack/check.mjs [--keep] [5.0.89 7.0.173 ...]
 *
 * The versions default to the lowest and the newest tested release of each major in
 * the peer range (5.0.92 is the first ai 5 whose schema takes the server's
 * `finish.finishReason`; 5.0.89 the first with `addToolOutput`). Installs prefer npm's cache. Uses ADK_ASGI_URL, else starts a server
 * from the repository's .venv. Exits non-zero when anything fails.
 */
import { execFile } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

import { startServer } from '../server.mjs';

const run = promisify(execFile);
const HERE = dirname(fileURLToPath(import.meta.url));
const PACKAGE = resolve(HERE, '../..');
const TSC = join(PACKAGE, 'node_modules/typescript/bin/tsc');
/** The lowest release of each major the peer range allows, and the newest tested. */
export const VERSIONS = ['5.0.92', '5.0.277', '6.0.0', '6.0.326', '7.0.0', '7.0.173'];
const EXPECTED_FILES = ['CHANGELOG.md', 'LICENSE', 'README.md', 'dist/index.d.ts', 'dist/index.js', 'package.json'];

const args = process.argv.slice(2);
const keep = args.includes('--keep');
const versions = args.filter(a => !a.startsWith('--'));
const work = mkdtempSync(join(tmpdir(), 'adk-asgi-pack-'));
const started = Date.now();
const seconds = since => `${((Date.now() - since) / 1000).toFixed(1)} s`;

async function sh(cwd, command, ...argv) {
  try {
    return (await run(command, argv, { cwd, maxBuffer: 64 * 1024 * 1024, env: { ...process.env, npm_config_loglevel: 'error' } })).stdout;
  } catch (error) {
    throw new Error(`${command} ${argv.join(' ')} (in ${cwd}) failed:\n${error.stdout ?? ''}${error.stderr ?? error.message}`);
  }
}

/** `npm pack` into the work folder; checks the tarball holds exactly what users need. */
async function pack() {
  await sh(PACKAGE, 'npm', 'run', 'build'); // what `prepack` does, apart from the JSON
  const [info] = JSON.parse(
    await sh(PACKAGE, 'npm', 'pack', '--json', '--ignore-scripts', '--pack-destination', work),
  );
  const files = info.files.map(f => f.path).sort();
  if (JSON.stringify(files) !== JSON.stringify(EXPECTED_FILES)) {
    throw new Error(`the tarball holds ${files.join(', ')}; expected ${EXPECTED_FILES.join(', ')}`);
  }
  return { tarball: join(work, info.filename), version: info.version, size: info.size };
}

function tsconfig(files) {
  return {
    compilerOptions: {
      target: 'ES2022',
      lib: ['ES2023', 'DOM', 'DOM.Iterable'],
      module: 'NodeNext',
      moduleResolution: 'NodeNext',
      strict: true,
      noEmit: true,
      skipLibCheck: true, // `ai`'s own declarations want @types/node; ours are checked below
      types: [],
    },
    files,
  };
}

async function check(version, tarball, server) {
  const t0 = Date.now();
  const dir = join(work, `ai-${version}`);
  mkdirSync(dir);
  writeFileSync(
    join(dir, 'package.json'),
    JSON.stringify({
      name: `pack-check-ai-${version}`,
      private: true,
      type: 'module',
      dependencies: { ai: version, 'adk-asgi': `file:${tarball}`, ws: '8.23.0' },
    }),
  );
  await sh(dir, 'npm', 'install', '--prefer-offline', '--no-audit', '--no-fund', '--ignore-scripts');
  const installed = JSON.parse(readFileSync(join(dir, 'node_modules/ai/package.json'), 'utf8')).version;
  if (installed !== version) throw new Error(`installed ai ${installed}, not ${version}`);
  const installTime = seconds(t0);
  const t1 = Date.now();
  copyFileSync(join(HERE, 'smoke.mjs'), join(dir, 'smoke.mjs'));
  const smoke = JSON.parse((await sh(dir, process.execPath, 'smoke.mjs', server)).trim().split('\n').at(-1));
  const smokeTime = seconds(t1);
  const t2 = Date.now();
  const files = ['sample.ts'];
  if (Number(version.split('.')[0]) >= 6) files.push('sample-approvals.ts');
  for (const file of files) copyFileSync(join(HERE, file), join(dir, file));
  // The package's declarations, as a source file: checked against this `ai` version's
  // types even with skipLibCheck (which skips every .d.ts, theirs and ours).
  copyFileSync(join(dir, 'node_modules/adk-asgi/dist/index.d.ts'), join(dir, 'declarations.ts'));
  files.push('declarations.ts');
  writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify(tsconfig(files)));
  await sh(dir, process.execPath, TSC, '-p', 'tsconfig.json');
  return { ai: version, ...smoke, typecheck: files.join(' + '), install: installTime, smoke: smokeTime, tsc: seconds(t2) };
}

async function main() {
  const server = await startServer();
  const failures = [];
  try {
    const { tarball, version, size } = await pack();
    console.log(`packed adk-asgi@${version} (${size} bytes) in ${seconds(started)}`);
    const queue = [...(versions.length > 0 ? versions : VERSIONS)];
    // two at a time: installs wait on the disk and the network, tsc on the CPU
    const worker = async () => {
      for (let v = queue.shift(); v != null; v = queue.shift()) {
        try {
          console.log(JSON.stringify(await check(v, tarball, server.url)));
        } catch (error) {
          failures.push(v);
          console.error(`ai ${v}: ${error.message}`);
        }
      }
    };
    await Promise.all([worker(), worker()]);
  } finally {
    server.stop();
    if (!keep) rmSync(work, { recursive: true, force: true });
    else console.log(`kept ${work}`);
  }
  console.log(failures.length === 0 ? `all passed in ${seconds(started)}` : `FAILED: ai ${failures.join(', ')}`);
  process.exitCode = failures.length === 0 ? 0 : 1;
}

await main();
