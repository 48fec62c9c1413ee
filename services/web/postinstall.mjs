// `npm install` builds the web app (services/web/dist), so `npm start` and
// `npm test` serve the current one with no extra step. In the container build
// the manifests are installed before the sources are copied: nothing to build
// yet (infra/Dockerfile runs `npm run build:web` once they are there).
import { existsSync } from 'node:fs';
import { spawnSync } from 'node:child_process';

if (!existsSync(new URL('./index.html', import.meta.url))) {
  console.log('axid: web app sources not present yet, skipping its build');
  process.exit(0);
}
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const result = spawnSync(npm, ['run', '--silent', 'build:web'], { stdio: 'inherit' });
process.exit(result.status ?? 1);
