// __AXID_BOT_NAME__ on Vercel: a cron job (vercel.json) calls GET /api/poll,
// which answers the mentions posted since the previous run.
import { pollOnce, type CursorStore } from './_axid.js';

/** Cursors in Upstash Redis / Vercel KV over its REST API (KV_REST_API_URL, KV_REST_API_TOKEN). */
function restStore(url: string, token: string): CursorStore {
  const call = async (command: unknown[]) => {
    const res = await fetch(url, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify(command),
    });
    if (!res.ok) throw new Error(`KV ${String(command[0])} failed: HTTP ${res.status}`);
    return ((await res.json()) as { result: unknown }).result;
  };
  return {
    get: async (key) => ((await call(['GET', key])) as string | null) ?? null,
    put: async (key, value) => {
      await call(['SET', key, value]);
    },
  };
}

/** Without a KV store the cursors only live as long as this function instance (fine for trying it out). */
const memory = new Map<string, string>();
const memoryStore: CursorStore = {
  get: async (key) => memory.get(key) ?? null,
  put: async (key, value) => {
    memory.set(key, value);
  },
};

export async function GET(request: Request): Promise<Response> {
  const env = process.env;
  // Vercel sends `Authorization: Bearer $CRON_SECRET` with cron requests.
  if (env.CRON_SECRET && request.headers.get('authorization') !== `Bearer ${env.CRON_SECRET}`) {
    return new Response('unauthorized', { status: 401 });
  }
  if (!env.AXID_API_KEY) return Response.json({ error: 'AXID_API_KEY is not set' }, { status: 500 });
  const store = env.KV_REST_API_URL && env.KV_REST_API_TOKEN ? restStore(env.KV_REST_API_URL, env.KV_REST_API_TOKEN) : memoryStore;
  const result = await pollOnce({ apiKey: env.AXID_API_KEY, baseUrl: env.AXID_BASE_URL }, store);
  return Response.json(result);
}
