// __AXID_BOT_NAME__ on Cloudflare Workers: a cron trigger polls the bot's
// channels and answers mentions; the per-channel cursors live in KV.
import { pollOnce, type CursorStore } from './axid.js';

const BOT_NAME = "__AXID_BOT_NAME__";

export interface Env {
  /** The bot's API key: `npx wrangler secret put AXID_API_KEY`. */
  AXID_API_KEY: string;
  /** The Axid server, e.g. https://chat.example.com (wrangler.toml [vars]). */
  AXID_BASE_URL: string;
  /** KV namespace holding one cursor per channel. */
  AXID_CURSORS: KVNamespace;
}

function kvStore(kv: KVNamespace): CursorStore {
  return {
    get: (key) => kv.get(key),
    put: (key, value) => kv.put(key, value),
  };
}

async function poll(env: Env): Promise<void> {
  const result = await pollOnce({ apiKey: env.AXID_API_KEY, baseUrl: env.AXID_BASE_URL }, kvStore(env.AXID_CURSORS));
  console.log(`polled ${result.channels} channel(s), sent ${result.replied.length} repl(ies)`);
}

export default {
  async scheduled(_controller: ScheduledController, env: Env, ctx: ExecutionContext): Promise<void> {
    ctx.waitUntil(poll(env));
  },

  // GET / shows that the Worker is deployed; it does not poll.
  async fetch(): Promise<Response> {
    return new Response(`${BOT_NAME} is running; it polls Axid on its cron trigger.\n`);
  },
} satisfies ExportedHandler<Env>;
