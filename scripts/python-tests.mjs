// `pnpm test:python`: the Python client's checks (packages/client-python). It makes a virtual
// environment of its own, installs the test tools (requirements-test.txt) and the package from the
// package index (the machine's local mirror unless PIP_INDEX_URL names another; no pip
// configuration file is read, so pip never reaches for an index it cannot get to), runs
// `mypy --strict` over the package and its tests (the typing sample included), then pytest, which
// starts its own gateways on PGlite and Postgres. Skipped, saying why, only where python3 is absent.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const pkg = path.join(root, 'packages', 'client-python');
const venv = path.join(pkg, '.venv');
const bin = path.join(venv, 'bin');

const env = {
  ...process.env,
  PIP_CONFIG_FILE: '/dev/null',
  PIP_INDEX_URL: process.env.PIP_INDEX_URL ?? 'file:///opt/pypi/simple',
  PIP_FIND_LINKS: process.env.PIP_FIND_LINKS ?? '/opt/wheels',
  PIP_DISABLE_PIP_VERSION_CHECK: '1',
  // The gateways are started with this Node (test/gateway.ts).
  TMS_NODE: process.execPath,
  PYTHONDONTWRITEBYTECODE: '1',
};

/** Run a command in the package folder, its output shown; exit with its status when it fails. */
function step(title, command, args) {
  console.log(`\n> ${title}: ${[command, ...args].join(' ')}`);
  const run = spawnSync(command, args, { cwd: pkg, env, stdio: 'inherit' });
  if (run.status !== 0) {
    console.error(`python tests: ${title} failed (${run.error?.message ?? `exit ${run.status ?? run.signal}`})`);
    process.exit(run.status || 1);
  }
}

const probe = spawnSync('python3', ['-c', 'import sys; print("%d.%d" % sys.version_info[:2])'], { encoding: 'utf8' });
if (probe.error || probe.status !== 0) {
  console.log('python tests skipped: python3 is not on the PATH');
  process.exit(0);
}
const [major, minor] = probe.stdout.trim().split('.').map(Number);
if (major < 3 || (major === 3 && minor < 10)) {
  console.error(`python tests: tms-client needs Python 3.10 or later, python3 is ${probe.stdout.trim()}`);
  process.exit(1);
}

if (!fs.existsSync(path.join(bin, 'python'))) step('virtual environment', 'python3', ['-m', 'venv', venv]);
const python = path.join(bin, 'python');
step('test tools', python, ['-m', 'pip', 'install', '--quiet', '-r', 'requirements-test.txt']);
step('the package', python, ['-m', 'pip', 'install', '--quiet', '--no-build-isolation', '-e', '.[signatures]']);
step('types', python, ['-m', 'mypy', '--strict', 'src', 'test']);
step('pytest', python, ['-m', 'pytest', '-q', '-p', 'no:cacheprovider', ...process.argv.slice(2)]);
