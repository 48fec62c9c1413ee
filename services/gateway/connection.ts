import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { GatewayMetrics } from './metrics.js';

/**
 * One SSE frame, encoded once per event as a whole HTTP/1.1 chunk (size line,
 * frame, CRLF): every chunked stream gets this same Buffer straight on its
 * socket. Going through `res.write` instead cost, per delivery, the chunk
 * header and trailer writes, a cork and a nextTick to uncork (node's
 * OutgoingMessage), which was most of the gateway's JavaScript per delivery.
 */
export class Frame {
  private constructor(
    readonly chunk: Buffer,
    private readonly start: number,
  ) {}

  static of(text: string): Frame {
    const head = `${Buffer.byteLength(text).toString(16)}\r\n`;
    return new Frame(Buffer.from(`${head}${text}\r\n`), head.length);
  }

  /** The frame alone, for a response that is not chunked (an HTTP/1.0 client). */
  get bytes(): Buffer {
    return this.chunk.subarray(this.start, this.chunk.length - 2);
  }
}

export interface ConnectionInfo {
  keyId: string;
  userId: string;
  workspaceId: string;
  /** The key's conversations (shared/scopes.ts): the stream carries only their events; null: all the user's. */
  conversationIds: readonly string[] | null;
}

/**
 * What every connection of a gateway shares: one object, so a connection
 * holds a single reference for them and no closure of its own.
 */
export interface ConnectionShared {
  /** Bytes a client may fall behind before its stream is cut off. */
  maxQueueBytes: number;
  metrics: GatewayMetrics;
  /** Called once when a stream ends, whoever ends it: the gateway's one place to let go of it. */
  ended(conn: SseConnection): void;
}

/**
 * One open SSE response. Once its headers are sent, frames are written whole,
 * in the order given (FIFO), straight to the socket; the socket's buffer is
 * the connection's bounded queue: a client that lets it grow past
 * `maxQueueBytes` is cut off so that it never holds memory or slows anyone
 * else. Kept small (docs/realtime.md, "Memory per stream"): an idle stream is
 * this object, node's socket and response, and an entry in the hub's index.
 */
export class SseConnection {
  closed = false;
  /** When a frame was last written (ms): the keep-alive skips streams written lately. */
  lastWriteAt = Date.now();
  /** Level 3: counted among its user's streams in presence.ts (uncounted when it ends). */
  present = false;
  private opened = false;
  /** Frames routed while the stream is held (a replay being read), written after it. */
  private held: Frame[] | null = null;
  private heldBytes = 0;
  /** Null when the headers could not go out at once (no socket yet): the stream is then ended. */
  private readonly socket: Socket | null;
  /** Whether the response uses chunked transfer encoding (HTTP/1.1), so frames go as chunks. */
  private readonly chunked: boolean;

  /** `res` must have its headers flushed already. */
  constructor(
    readonly info: ConnectionInfo,
    private readonly res: ServerResponse,
    private readonly shared: ConnectionShared,
  ) {
    this.socket = res.socket;
    this.chunked = res.chunkedEncoding;
    // A client gone while the stream was being opened: its 'close' has been emitted already.
    if (res.destroyed || this.socket?.destroyed) this.finish();
    else res.on('close', () => this.finish());
  }

  /**
   * Writes the first frame and counts the stream as connected. The frame is
   * not kept: a small Buffer pins its whole 8 KB allocation pool slab, which
   * measured as 3 KB per idle stream when a closure held it.
   */
  open(initFrame: Frame) {
    if (!this.socket) return this.end();
    this.write(initFrame, false);
    this.opened = true;
    this.shared.metrics.connections.inc();
  }

  /** Keeps the frames routed from now on until resume() (a replay is read meanwhile). */
  hold() {
    this.held ??= [];
  }

  /** Writes `init`, then `replayed`, then the frames held meanwhile, and goes live. */
  resume(initFrame: Frame, replayed: Frame[]) {
    const held = this.held ?? [];
    this.held = null;
    this.heldBytes = 0;
    this.open(initFrame);
    for (const frame of replayed) if (!this.write(frame, true)) return;
    for (const frame of held) if (!this.write(frame, true)) return;
  }

  /**
   * Queues a whole frame; false when the connection is gone (or was just cut
   * off). Deliveries are counted by the caller, once per event. With `cork`,
   * the socket is corked (once) and added to that list for the caller to
   * uncork.
   */
  send(frame: Frame, isEvent = true, now = Date.now(), cork: Socket[] | null = null): boolean {
    if (this.held && !this.closed) {
      // Bounded like the socket's buffer: a replay that takes too long cuts the stream off.
      this.heldBytes += frame.chunk.length;
      if (this.heldBytes > this.shared.maxQueueBytes) return this.cutOff(isEvent);
      this.held.push(frame);
      return true;
    }
    return this.write(frame, isEvent, now, cork);
  }

  private write(frame: Frame, isEvent: boolean, now = Date.now(), cork: Socket[] | null = null): boolean {
    const socket = this.socket;
    if (this.closed || !socket) return false;
    const queued = socket.writableLength;
    // A frame larger than the whole budget still goes to a client that keeps up.
    if (queued > 0 && queued + frame.chunk.length > this.shared.maxQueueBytes) return this.cutOff(isEvent);
    if (cork && socket.writableCorked === 0) {
      socket.cork();
      cork.push(socket);
    }
    socket.write(this.chunked ? frame.chunk : frame.bytes);
    this.lastWriteAt = now;
    return true;
  }

  private cutOff(isEvent: boolean): false {
    const { metrics } = this.shared;
    metrics.slowDisconnects.inc();
    if (isEvent) metrics.dropped.inc();
    // Nothing more can be written whole: drop the socket.
    this.res.destroy();
    this.finish();
    return false;
  }

  /**
   * Ends the stream cleanly after the frames already queued (the response's
   * last chunk goes to the same socket after them), and the socket with it: a
   * client reconnects on a new one anyway, and an idle keep-alive socket would
   * only hold a shutting-down server open.
   */
  end() {
    if (this.closed) return;
    const socket = this.res.socket;
    this.res.end(() => socket?.end());
    this.finish();
  }

  private finish() {
    if (this.closed) return;
    this.closed = true;
    if (this.opened) this.shared.metrics.connections.dec();
    this.shared.ended(this);
  }
}
