// __AXID_BOT_NAME__ on Cloudflare Workers: Axid POSTs the bot's events to this
// Worker (an event subscription, see README.md); it answers mentions at once.
import { handleEventRequest } from './axid.js';

export interface Env {
  /** The bot's API key: `npx wrangler secret put AXID_API_KEY`. */
  AXID_API_KEY: string;
  /** The Axid server, e.g. https://chat.example.com (wrangler.toml [vars]). */
  AXID_BASE_URL: string;
  /** The subscription's secret (`axsec_...`): `npx wrangler secret put AXID_SIGNING_SECRET`. */
  AXID_SIGNING_SECRET: string;
}

export default {
  // The reply is finished after the 200 (ctx.waitUntil), so Axid never waits on it.
  async fetch(request: Request, env: Env, ctx: ExecutionContext): Promise<Response> {
    return handleEventRequest(
      request,
      { apiKey: env.AXID_API_KEY, baseUrl: env.AXID_BASE_URL, signingSecret: env.AXID_SIGNING_SECRET },
      (work) => ctx.waitUntil(work),
    );
  },
} satisfies ExportedHandler<Env>;
