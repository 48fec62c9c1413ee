// Helpers for the conversation tests: channels, messages and the event stream.
import { expect } from 'chai';
import type { Client } from './client.js';
import { stack, uniqueName } from './stack.js';
import { busEvents } from './bus.js';

export async function createChannel(client: Client, body: Record<string, unknown> = {}) {
  const res = await client.post('/api/v1/channels', { name: uniqueName('chan'), ...body });
  expect(res.status, res.text).to.equal(201);
  return res.body.data as { id: string; name: string; is_private: boolean; [k: string]: unknown };
}

export async function postMessage(client: Client, channelId: string, body: Record<string, unknown> | string, base = 'channels') {
  const res = await client.post(`/api/v1/${base}/${channelId}/messages`, typeof body === 'string' ? { content: body } : body);
  expect(res.status, res.text).to.equal(201);
  return res.body.data as { id: string; content: string; [k: string]: any };
}

export interface StreamEvent {
  type: string;
  to: { scope: string; channel_id?: string; user_ids?: string[]; workspace_id: string };
  data: any;
}

/** Every event on the run's stream so far (after draining the outbox). */
export async function streamEvents(): Promise<StreamEvent[]> {
  const s = stack();
  await s.relay?.drain();
  return (await busEvents(s)) as StreamEvent[];
}

/** Waits (up to 5 s) until events matching `match` are on the stream; returns them. */
export async function waitForEvents(match: (e: StreamEvent) => boolean, count = 1): Promise<StreamEvent[]> {
  const deadline = Date.now() + 5_000;
  for (;;) {
    const found = (await streamEvents()).filter(match);
    if (found.length >= count || Date.now() > deadline) {
      expect(found.length, 'events on the stream').to.be.at.least(count);
      return found;
    }
    await new Promise((r) => setTimeout(r, 25));
  }
}

export const messagesUrl = (channelId: string, base = 'channels') => `/api/v1/${base}/${channelId}/messages`;
