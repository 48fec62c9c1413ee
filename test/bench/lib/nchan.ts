// nginx with the Nchan module as a peer of the gateway in scenarios 3 and 5:
// a widely deployed SSE fan-out server, run on this machine next to Axid and
// the floor. The bench installs nothing; it uses nginx when it finds it
// (Debian/Ubuntu: `apt-get install nginx libnginx-mod-nchan`).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { freePort } from '../../../shared/embedded.js';
import { sleep, spawnProgram, tail, type Proc } from './proc.js';

export interface NchanInstall {
  nginx: string;
  /** The dynamic module to load, or null when nginx has Nchan built in. */
  module: string | null;
}

const NGINX = ['/usr/sbin/nginx', '/usr/local/sbin/nginx', '/usr/local/nginx/sbin/nginx'];
const MODULES = ['/usr/lib/nginx/modules/ngx_nchan_module.so', '/usr/lib64/nginx/modules/ngx_nchan_module.so', '/usr/local/nginx/modules/ngx_nchan_module.so'];

export const NCHAN_HINT = 'apt-get install nginx libnginx-mod-nchan (or set BENCH_NGINX and BENCH_NCHAN_MODULE)';

/** nginx and its Nchan module, or why they cannot be used. */
export function findNchan(): NchanInstall | string {
  const nginx = [process.env.BENCH_NGINX, ...NGINX].find((f): f is string => !!f && existsSync(f));
  if (!nginx) return `nginx was not found (${NCHAN_HINT})`;
  // `nginx -V` prints its configure arguments on stderr: a static Nchan shows there.
  const built = spawnSync(nginx, ['-V'], { encoding: 'utf8' });
  if (/nchan/i.test(`${built.stdout}${built.stderr}`)) return { nginx, module: null };
  const module = [process.env.BENCH_NCHAN_MODULE, ...MODULES].find((f): f is string => !!f && existsSync(f));
  if (!module) return `${nginx} has no Nchan module (${NCHAN_HINT})`;
  return { nginx, module };
}

/**
 * One nginx process (no master, one worker loop) on a spare loopback port:
 * the same URL shapes as the SSE floor (`GET /api/v1/stream?channel=<id>`,
 * `POST /api/v1/channels/<id>/messages` publishes), so the same client and
 * poster drive all three.
 */
export async function startNchan(install: NchanInstall, dir: string): Promise<{ proc: Proc; url: string }> {
  mkdirSync(path.join(dir, 'logs'), { recursive: true });
  const port = await freePort();
  const conf = path.join(dir, 'nginx.conf');
  writeFileSync(
    conf,
    `${install.module ? `load_module ${install.module};\n` : ''}daemon off;
master_process off;
worker_processes 1;
worker_rlimit_nofile 65536;
pid ${dir}/nginx.pid;
error_log ${dir}/logs/error.log warn;
events { worker_connections 30000; }
http {
  access_log off;
  client_body_temp_path ${dir}/body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
  keepalive_timeout 65s;
  server {
    listen 127.0.0.1:${port};
    location = /ready { return 200 "ok\\n"; }
    location ~ ^/api/v1/channels/([^/]+)/messages$ {
      nchan_publisher;
      nchan_channel_id $1;
      nchan_message_buffer_length 20;
    }
    location = /api/v1/stream {
      nchan_subscriber eventsource;
      nchan_channel_id $arg_channel;
      nchan_eventsource_event message.created;
      nchan_subscriber_timeout 0;
    }
  }
}
`,
  );
  const proc = spawnProgram('nchan', install.nginx, ['-c', conf, '-p', dir, '-e', `${dir}/logs/error.log`], { raiseFileLimit: true });
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 10_000;
  for (;;) {
    if (proc.child.exitCode !== null) throw new Error(`nginx exited early (${proc.child.exitCode}): ${tail(proc.output())}`);
    if (await fetch(`${url}/ready`).then((r) => r.status === 200).catch(() => false)) return { proc, url };
    if (Date.now() > deadline) throw new Error(`nginx did not answer on ${url} in 10 s: ${tail(proc.output())}`);
    await sleep(100);
  }
}
