// Presence (level 3, contract §9): who has at least one open stream, on any
// gateway. Kept in Redis, every key under one hash tag (`{<prefix>presence}`,
// so each script below touches one slot of a cluster):
// - `…:ws:<workspace>`        the set of online users of a workspace;
// - `…:on:<workspace>:<user>` the gateways holding a stream of the user, each
//                             with the time its heartbeat expires (a sorted set);
// - `…:due`                   every `<workspace>|<user>|<gateway>` by that time,
//                             for the sweep.
// A gateway renews its users' entries every third of PRESENCE_TTL_SECONDS.
// A gateway that dies stops renewing: every gateway sweeps the expired entries
// every third of the TTL, and a user left with no gateway goes offline then.
// So a dead gateway's users go offline within 4/3 of the TTL (40 s by default).
//
// A user's first stream (on any gateway) announces `presence.updated
// online`; the last one closing announces `offline`, but only after
// CLOSE_DEBOUNCE_MS with no stream reopened meanwhile on this gateway, so a
// client that reconnects at once (to this gateway or another) announces
// nothing. The events are ephemeral (the workspace shard's live stream).
import type { Logger } from '../../shared/logger.js';
import { keys, onlineUsersKey, type Redis } from '../../shared/redis.js';

/** How long the last stream of a user must stay closed before the user goes offline. */
export const CLOSE_DEBOUNCE_MS = 3000;
const SWEEP_LIMIT = 500;

// KEYS: ws set, user's gateways, due. ARGV: user, gateway, expiry, due member. 1 when the user came online.
const OPEN = `
redis.call('ZADD', KEYS[2], ARGV[3], ARGV[2])
redis.call('ZADD', KEYS[3], ARGV[3], ARGV[4])
return redis.call('SADD', KEYS[1], ARGV[1])`;

// KEYS as OPEN. ARGV: user, gateway, now, due member. 1 when the user went offline.
const CLOSE = `
redis.call('ZREM', KEYS[2], ARGV[2])
redis.call('ZREM', KEYS[3], ARGV[4])
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', ARGV[3])
if redis.call('ZCARD', KEYS[2]) == 0 then return redis.call('SREM', KEYS[1], ARGV[1]) end
return 0`;

// KEYS: due. ARGV: now, key prefix (the tag), limit. The users gone offline, as workspace, user pairs.
// The keys it derives share the tag of KEYS[1], hence its slot.
const SWEEP = `
local gone = {}
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, tonumber(ARGV[3]))
for _, m in ipairs(due) do
  redis.call('ZREM', KEYS[1], m)
  local ws, user, gw = string.match(m, '^([^|]*)|([^|]*)|(.*)$')
  if ws then
    local on = ARGV[2] .. ':on:' .. ws .. ':' .. user
    local score = redis.call('ZSCORE', on, gw)
    if score and tonumber(score) <= tonumber(ARGV[1]) then redis.call('ZREM', on, gw) end
    redis.call('ZREMRANGEBYSCORE', on, '-inf', ARGV[1])
    if redis.call('ZCARD', on) == 0 and redis.call('SREM', ARGV[2] .. ':ws:' .. ws, user) == 1 then
      table.insert(gone, ws)
      table.insert(gone, user)
    end
  end
end
return gone`;

export interface PresenceOptions {
  redis: Redis;
  prefix: string;
  gatewayId: string;
  ttlMs: number;
  log: Logger;
  announce(workspaceId: string, userId: string, status: 'online' | 'offline'): void;
}

interface Local {
  streams: number;
  closing: NodeJS.Timeout | null;
}

export class Presence {
  private readonly tag: string;
  private readonly local = new Map<string, Local>();
  private readonly timer: NodeJS.Timeout;
  private stopped = false;

  constructor(private readonly o: PresenceOptions) {
    this.tag = keys(o.prefix).presence;
    this.timer = setInterval(() => void this.tick(), Math.max(200, Math.floor(o.ttlMs / 3)));
    this.timer.unref();
  }

  /** The online users of a workspace (init.presence). */
  async online(workspaceId: string): Promise<string[]> {
    return this.o.redis.smembers(onlineUsersKey(this.o.prefix, workspaceId));
  }

  /** A stream of the user opened here. */
  async opened(workspaceId: string, userId: string): Promise<void> {
    const key = `${workspaceId}|${userId}`;
    const local = this.local.get(key);
    if (local) {
      local.streams++;
      if (local.closing) clearTimeout(local.closing);
      local.closing = null;
      return;
    }
    this.local.set(key, { streams: 1, closing: null });
    await this.register(workspaceId, userId);
  }

  /** A stream of the user here closed. */
  closed(workspaceId: string, userId: string): void {
    const key = `${workspaceId}|${userId}`;
    const local = this.local.get(key);
    if (!local || --local.streams > 0 || this.stopped) return;
    local.closing = setTimeout(() => {
      if (this.local.get(key) !== local || local.streams > 0) return;
      this.local.delete(key);
      void this.unregister(workspaceId, userId);
    }, CLOSE_DEBOUNCE_MS);
  }

  private keysOf(workspaceId: string, userId: string) {
    return [onlineUsersKey(this.o.prefix, workspaceId), `${this.tag}:on:${workspaceId}:${userId}`, `${this.tag}:due`];
  }

  private async register(workspaceId: string, userId: string) {
    const cameOnline = (await this.o.redis.eval(
      OPEN,
      3,
      ...this.keysOf(workspaceId, userId),
      userId,
      this.o.gatewayId,
      Date.now() + this.o.ttlMs,
      `${workspaceId}|${userId}|${this.o.gatewayId}`,
    )) as number;
    if (cameOnline === 1) this.o.announce(workspaceId, userId, 'online');
  }

  private async unregister(workspaceId: string, userId: string) {
    try {
      const wentOffline = (await this.o.redis.eval(
        CLOSE,
        3,
        ...this.keysOf(workspaceId, userId),
        userId,
        this.o.gatewayId,
        Date.now(),
        `${workspaceId}|${userId}|${this.o.gatewayId}`,
      )) as number;
      if (wentOffline === 1) this.o.announce(workspaceId, userId, 'offline');
    } catch (err) {
      // The entry expires: another gateway's sweep announces it.
      this.o.log.warn({ err: (err as Error).message }, 'presence: leaving failed');
    }
  }

  /** Renews this gateway's entries and sweeps the expired ones of every gateway. */
  private async tick() {
    try {
      for (const key of this.local.keys()) {
        const [workspaceId, userId] = key.split('|') as [string, string];
        await this.register(workspaceId, userId);
      }
      const gone = (await this.o.redis.eval(SWEEP, 1, `${this.tag}:due`, Date.now(), this.tag, SWEEP_LIMIT)) as string[];
      for (let i = 0; i + 1 < gone.length; i += 2) this.o.announce(gone[i]!, gone[i + 1]!, 'offline');
    } catch (err) {
      this.o.log.warn({ err: (err as Error).message }, 'presence: heartbeat failed');
    }
  }

  /**
   * Stops renewing. The entries of this gateway then expire after the debounce
   * (not at once): a client that reconnects to another gateway meanwhile does
   * not go offline and online again; the others are swept offline.
   */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    const expiry = Date.now() + CLOSE_DEBOUNCE_MS;
    const pipeline = this.o.redis.pipeline();
    for (const [key, local] of this.local) {
      if (local.closing) clearTimeout(local.closing);
      const [workspaceId, userId] = key.split('|') as [string, string];
      const [, on, due] = this.keysOf(workspaceId, userId);
      pipeline.zadd(on!, 'XX', expiry, this.o.gatewayId).zadd(due!, 'XX', expiry, `${key}|${this.o.gatewayId}`);
    }
    this.local.clear();
    await pipeline.exec().catch(() => undefined);
  }
}
