// __AXID_BOT_NAME__: an Axid bot that answers mentions.
//
// Node 20+, no dependencies: it uses the global fetch and reads the
// server-sent-events stream by hand. Configuration (environment):
//   AXID_API_KEY   the bot's API key (required)
//   AXID_BASE_URL  the Axid server, default http://localhost:3000
//
// How it works: it learns its own id and name (GET /users/me), listens on
// GET /api/v1/stream, and for every `message.created` that mentions it (a
// mention node, or "@<name>" in the text) it replies in the same channel, in
// the thread when the message was in a thread. When the stream drops it
// reconnects with exponential backoff and then reads the messages of its
// channels posted in the gap, so no mention is missed.
//
// At feature level 3 (the server says so in X-Service-Feature-Level) the reply
// is streamed as it is written ("streaming": true, then .../append, then
// .../finish), and a click on one of the bot's actionId buttons (the
// `interaction.action` event, sent to the bot alone) is answered in its channel.
// Also at level 3 (docs/bots.md, "Agents at home"):
// - it shows a working status ("is thinking…") while it works; its next post
//   in that thread clears it;
// - it declares a slash command, /deploy (PUT /users/me/commands), answers
//   the person who invoked it with an ephemeral message only they see, asks
//   for approval (a block_approval_request only they may answer), and does a
//   pretend deploy once approved (the `interaction.approval` event).

const API_KEY = process.env.AXID_API_KEY;
const BASE_URL = (process.env.AXID_BASE_URL || 'http://localhost:3000').replace(/\/+$/, '');
/** The stream sends a keep-alive comment at least every 20 s; silence this long means a dead connection. */
const IDLE_TIMEOUT_MS = 45_000;
const MAX_BACKOFF_MS = 30_000;

if (!API_KEY) {
  console.error('AXID_API_KEY is not set. Run: AXID_API_KEY=<the bot key> npm start');
  process.exit(1);
}

/** Replace this with what a click on one of your actionId buttons does. Returns the reply text. */
async function onButton(interaction) {
  return `Button "${interaction.action_id}" clicked.`;
}

/** The slash commands this bot declares at level 3 (names: a-z, 0-9, -; unique in the workspace). */
const COMMANDS = [{ name: process.env.AXID_COMMAND || 'deploy', description: 'Deploy a branch (pretend), once approved', usage: '/deploy <branch>' }];

/** Replace this with your real deploy. Resolves when it is done. */
async function pretendDeploy(target) {
  await new Promise((resolve) => setTimeout(resolve, 300));
  return `${target} is live (pretend).`;
}

/** Replace this with your bot's brain. Returns the reply text. */
async function answer(message, me) {
  const question = stripMentions(message.content, me).trim();
  return question ? `Hi! You said: "${question}"` : 'Hi! How can I help?';
}

// ---------------------------------------------------------------------------

const log = (...args) => console.log(new Date().toISOString(), ...args);

class ApiError extends Error {
  constructor(status, code, message) {
    super(`${status} ${code}: ${message}`);
    this.status = status;
    this.code = code;
  }
}

async function api(method, path, body) {
  const res = await fetch(`${BASE_URL}/api/v1${path}`, {
    method,
    headers: {
      authorization: `Bearer ${API_KEY}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(15_000),
  });
  const header = Number(res.headers.get('x-service-feature-level'));
  if (header) level = header;
  const json = await res.json().catch(() => ({}));
  if (!res.ok) throw new ApiError(res.status, json.error?.code ?? 'http_error', json.error?.message ?? res.statusText);
  return json;
}

/** The server's feature level, from the header of its last answer. */
let level = 2;

/** Posts a reply; at level 3 streamed a few words at a time, as an agent writes it. */
async function postReply(channelId, content, threadId) {
  const where = { ...(threadId ? { thread_id: threadId } : {}) };
  if (level < 3) return api('POST', `/channels/${channelId}/messages`, { content, ...where });
  const chunks = content.match(/\s*\S+\s*/g) ?? [content];
  const first = chunks.slice(0, 2).join('');
  const reply = await api('POST', `/channels/${channelId}/messages`, { content: first, streaming: true, ...where });
  try {
    for (const chunk of chunks.slice(2)) await api('POST', `/channels/${channelId}/messages/${reply.data.id}/append`, { content: chunk });
  } finally {
    await api('POST', `/channels/${channelId}/messages/${reply.data.id}/finish`, {});
  }
  return reply;
}

// ---- agents at home (level 3) ----------------------------------------------

/** Conversation id → 'channels' or 'dms': which path names it (a command's event carries the id only). */
const kinds = new Map();

/** Calls `${method} /<channels|dms>/<id><rest>`, learning which of the two the conversation is. */
async function inConversation(id, method, rest, body) {
  const known = kinds.get(id);
  for (const base of known ? [known] : ['channels', 'dms']) {
    try {
      const result = await api(method, `/${base}/${id}${rest}`, body);
      kinds.set(id, base);
      return result;
    } catch (error) {
      if (known || !(error instanceof ApiError && error.status === 404) || base === 'dms') throw error;
    }
  }
}

/** Shows a working status in a conversation (or thread) at level 3; "" clears it. Never fails the work. */
async function setStatus(conversationId, threadId, status, loadingMessages) {
  if (level < 3) return;
  try {
    await inConversation(conversationId, 'POST', '/status', { status, ...(threadId ? { thread_id: threadId } : {}), ...(loadingMessages ? { loading_messages: loadingMessages } : {}) });
    if (status) log(`status: ${status}`);
  } catch (error) {
    log(`could not set status: ${error.message}`);
  }
}

async function declareCommands() {
  if (level < 3) return;
  try {
    await api('PUT', '/users/me/commands', COMMANDS);
    log(`declared commands: ${COMMANDS.map((c) => `/${c.name}`).join(', ')}`);
  } catch (error) {
    // 409 name_taken: another agent of the workspace has the name (set AXID_COMMAND).
    log(`could not declare commands: ${error.message}`);
  }
}

/** Approval request message id → the deploy it asks for. */
const pendingDeploys = new Map();

const paragraph = (...content) => ({ type: 'paragraph', content });
const text = (value) => ({ type: 'text', text: value });
const mention = (userId) => ({ type: 'mention', attrs: { id: userId } });
const block = (name, props) => ({ type: `block_${name}`, attrs: { blockName: name, version: 1, props } });

/** /deploy <branch>: tell the invoker (only them), ask them for approval, deploy once approved. */
async function onCommand(invocation) {
  if (!COMMANDS.some((c) => c.name === invocation.command)) return;
  const target = invocation.text.trim() || 'main';
  const where = invocation.thread_id ? { thread_id: invocation.thread_id } : {};
  const conversation = invocation.conversation_id;
  try {
    await setStatus(conversation, invocation.thread_id, `is preparing to deploy ${target}…`);
    await inConversation(conversation, 'POST', '/ephemeral', {
      user_id: invocation.user_id,
      content: `Deploying ${target} needs your approval: I asked for it here.`,
      ...where,
    });
    log(`answered command ${invocation.id} ephemerally`);
    const expires = new Date(Date.now() + 10 * 60_000).toISOString();
    const request = await inConversation(conversation, 'POST', '/messages', {
      content: `Deploy ${target}?`,
      content_json: {
        type: 'doc',
        content: [
          paragraph(mention(invocation.user_id), text(` asked to deploy ${target}.`)),
          block('approval_request', { title: `Deploy ${target}?`, approve_label: 'Deploy', deny_label: 'Cancel', expires_at: expires, approver_ids: [invocation.user_id] }),
        ],
      },
      ...where,
    });
    remember(request.data.id);
    pendingDeploys.set(request.data.id, { target, conversation, threadId: invocation.thread_id });
    log(`asked for approval ${request.data.id} for command ${invocation.id}`);
  } catch (error) {
    log(`could not answer command ${invocation.id}: ${error.message}`);
  }
}

/** The answer to one of the bot's approval requests (sent to the bot alone). */
async function onApproval(approval) {
  const deploy = pendingDeploys.get(approval.message_id);
  if (!deploy) return;
  pendingDeploys.delete(approval.message_id);
  const where = deploy.threadId ? { thread_id: deploy.threadId } : {};
  try {
    let content_json;
    if (approval.decision === 'approve') {
      await setStatus(deploy.conversation, deploy.threadId, `is deploying ${deploy.target}…`, ['Building', 'Uploading', 'Switching traffic']);
      const result = await pretendDeploy(deploy.target);
      // Posting in the thread clears the status; the feedback buttons let readers rate the deploy.
      content_json = { type: 'doc', content: [paragraph(text(`Deployed: ${result} Approved by `), mention(approval.user_id), text('.')), block('feedback_buttons', {})] };
    } else {
      content_json = { type: 'doc', content: [paragraph(text(`Deploy of ${deploy.target} cancelled by `), mention(approval.user_id), text('.'))] };
    }
    const done = await inConversation(deploy.conversation, 'POST', '/messages', { content: approval.decision === 'approve' ? `Deployed ${deploy.target}` : `Deploy of ${deploy.target} cancelled`, content_json, ...where });
    remember(done.data.id);
    log(`${approval.decision === 'approve' ? 'deployed' : 'cancelled'} ${deploy.target}: ${done.data.id}`);
  } catch (error) {
    log(`could not finish the deploy of ${deploy.target}: ${error.message}`);
  }
}

async function onInteraction(interaction) {
  try {
    const reply = await postReply(interaction.channel_id, await onButton(interaction));
    remember(reply.data.id);
    log(`answered click ${interaction.id} with ${reply.data.id}`);
  } catch (error) {
    log(`could not answer click ${interaction.id}: ${error.message}`);
  }
}

/** Every item of a list endpoint (follows next_cursor), at most `max`. */
async function listAll(path, max = 1000) {
  const items = [];
  let cursor = null;
  do {
    const sep = path.includes('?') ? '&' : '?';
    const page = await api('GET', `${path}${sep}limit=200${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
    items.push(...page.data);
    cursor = page.pagination?.has_more ? page.pagination.next_cursor : null;
  } while (cursor && items.length < max);
  return items;
}

let me = null;
/** Channel id → created_at (ms) of the newest message seen there: where a catch-up starts. */
const cursors = new Map();
/** Ids of messages already handled, so the stream and a catch-up never answer twice. */
const handled = new Set();

function remember(id) {
  handled.add(id);
  if (handled.size > 5000) handled.delete(handled.values().next().value);
}

function escapeRegExp(s) {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

function names(bot) {
  return [bot.name, bot.display_name].filter((n) => typeof n === 'string' && n.length > 0);
}

function stripMentions(text, bot) {
  let out = text;
  for (const name of names(bot)) out = out.replace(new RegExp(`@${escapeRegExp(name)}`, 'gi'), '');
  return out;
}

function mentionsMe(message) {
  if ((message.mentioned_user_ids ?? []).includes(me.id)) return true;
  const content = String(message.content ?? '').toLowerCase();
  return names(me).some((name) => content.includes(`@${name.toLowerCase()}`));
}

function seen(message) {
  const at = Date.parse(message.created_at);
  if (!Number.isNaN(at) && at > (cursors.get(message.channel_id) ?? 0)) cursors.set(message.channel_id, at);
}

async function onMessage(message) {
  seen(message);
  if (handled.has(message.id)) return;
  remember(message.id);
  if (message.author_id === me.id || !mentionsMe(message)) return;
  try {
    await setStatus(message.channel_id, message.thread_id, 'is thinking…', ['Reading your message', 'Writing an answer']);
    const content = await answer(message, me);
    const reply = await postReply(message.channel_id, content, message.thread_id);
    remember(reply.data.id);
    log(`replied to ${message.id} with ${reply.data.id}`);
  } catch (error) {
    log(`could not reply to ${message.id}: ${error.message}`);
  }
}

/** The channels the bot is a member of. */
async function myChannels() {
  const channels = await listAll('/channels');
  const mine = [];
  for (const channel of channels) {
    if (typeof channel.is_member === 'boolean') {
      if (channel.is_member) mine.push(channel);
      continue;
    }
    const members = await listAll(`/channels/${channel.id}/members`);
    if (members.some((m) => (m.user_id ?? m.id) === me.id)) mine.push(channel);
  }
  return mine;
}

/** Reads what was posted while the stream was down (top-level messages and thread replies). */
async function catchUp() {
  for (const channel of await myChannels()) {
    const since = cursors.get(channel.id);
    const page = await api('GET', `/channels/${channel.id}/messages?limit=50`);
    const missed = [];
    for (const message of page.data) {
      const at = Date.parse(message.created_at);
      if (since === undefined) {
        // A channel the bot was not watching: start from its newest message.
        cursors.set(channel.id, Math.max(cursors.get(channel.id) ?? 0, at));
        continue;
      }
      if (at >= since) missed.push(message);
      const lastReply = Date.parse(message.thread?.last_reply_at ?? '');
      if (lastReply >= since) {
        const replies = await api('GET', `/channels/${channel.id}/messages?thread_id=${message.id}&limit=50`);
        missed.push(...replies.data.filter((r) => Date.parse(r.created_at) >= since));
      }
    }
    missed.sort((a, b) => Date.parse(a.created_at) - Date.parse(b.created_at));
    for (const message of missed) await onMessage(message);
  }
}

/** Reads one stream connection until it ends; calls onFrame(event, data) per frame. */
async function readStream(signal, onFrame) {
  const res = await fetch(`${BASE_URL}/api/v1/stream`, {
    headers: { authorization: `Bearer ${API_KEY}`, accept: 'text/event-stream' },
    signal,
  });
  if (!res.ok || !res.body) {
    const json = await res.json().catch(() => ({}));
    throw new ApiError(res.status, json.error?.code ?? 'http_error', json.error?.message ?? res.statusText);
  }
  const decoder = new TextDecoder();
  let buffer = '';
  let event = 'message';
  let data = [];
  for await (const chunk of res.body) {
    buffer += decoder.decode(chunk, { stream: true });
    let newline;
    while ((newline = buffer.search(/\r\n|\r|\n/)) !== -1) {
      const line = buffer.slice(0, newline);
      buffer = buffer.slice(newline + (buffer.startsWith('\r\n', newline) ? 2 : 1));
      if (line === '') {
        if (data.length) await onFrame(event, data.join('\n'));
        event = 'message';
        data = [];
      } else if (line.startsWith(':')) {
        onFrame(null, null); // keep-alive comment
      } else {
        const colon = line.indexOf(':');
        const field = colon === -1 ? line : line.slice(0, colon);
        let value = colon === -1 ? '' : line.slice(colon + 1);
        if (value.startsWith(' ')) value = value.slice(1);
        if (field === 'event') event = value;
        else if (field === 'data') data.push(value);
      }
    }
  }
}

let stopping = false;
let current = null;

async function run() {
  me = (await api('GET', '/users/me')).data;
  log(`starting as @${me.name} (${me.id}) on ${BASE_URL}`);
  await declareCommands();
  let attempt = 0;
  let connectedBefore = false;
  while (!stopping) {
    const controller = new AbortController();
    current = controller;
    let idle = setTimeout(() => controller.abort(new Error('stream idle')), IDLE_TIMEOUT_MS);
    try {
      await readStream(controller.signal, async (event, data) => {
        clearTimeout(idle);
        idle = setTimeout(() => controller.abort(new Error('stream idle')), IDLE_TIMEOUT_MS);
        if (event === 'init') {
          attempt = 0;
          // The first time this only sets each channel's cursor (nothing older
          // is answered); after a reconnect it answers what the gap held.
          await catchUp();
          log(connectedBefore ? 'reconnected: caught up, listening for mentions' : 'connected: listening for mentions');
          connectedBefore = true;
        } else if (event === 'message.created') {
          const payload = JSON.parse(data);
          if (payload.message) await onMessage(payload.message);
        } else if (event === 'interaction.action') {
          const payload = JSON.parse(data);
          if (payload.interaction) await onInteraction(payload.interaction);
        } else if (event === 'command.invoked') {
          await onCommand(JSON.parse(data));
        } else if (event === 'interaction.approval') {
          await onApproval(JSON.parse(data));
        }
      });
      if (!stopping) log('stream ended');
    } catch (error) {
      if (stopping) break;
      if (error instanceof ApiError && (error.status === 401 || error.status === 403)) {
        log(`the server refused the key (${error.message}); check AXID_API_KEY`);
        process.exit(1);
      }
      log(`stream error: ${error.cause?.message ?? error.message}`);
    } finally {
      clearTimeout(idle);
    }
    if (stopping) break;
    const delay = Math.min(MAX_BACKOFF_MS, 1000 * 2 ** attempt) * (0.5 + Math.random() / 2);
    attempt += 1;
    log(`reconnecting in ${Math.round(delay)} ms`);
    await new Promise((resolve) => setTimeout(resolve, delay));
  }
}

for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    stopping = true;
    current?.abort();
    process.exit(0);
  });
}

run().catch((error) => {
  console.error(`fatal: ${error.message}`);
  process.exit(1);
});
