// __AXID_BOT_NAME__ on Vercel: Axid POSTs the bot's events to /api/events (an
// event subscription, see README.md); the function answers mentions at once.
import { handleEventRequest } from './_axid.js';

const settings = () => ({
  apiKey: process.env.AXID_API_KEY ?? '',
  baseUrl: process.env.AXID_BASE_URL,
  signingSecret: process.env.AXID_SIGNING_SECRET,
});

export async function POST(request: Request): Promise<Response> {
  if (!process.env.AXID_API_KEY) return Response.json({ error: 'AXID_API_KEY is not set' }, { status: 500 });
  // The reply is sent before answering: Axid waits up to 10 s for the 200.
  return handleEventRequest(request, settings());
}

/** GET shows that the function is deployed. */
export async function GET(request: Request): Promise<Response> {
  return handleEventRequest(request, settings());
}
