import type { ServerResponse } from 'node:http';
import type { GatewayMetrics } from './metrics.js';

export interface ConnectionInfo {
  keyId: string;
  userId: string;
  workspaceId: string;
}

/**
 * One open SSE response. Frames are written whole, in the order given (FIFO),
 * into the response's own buffer; that buffer is the connection's bounded
 * queue: a client that lets it grow past `maxQueueBytes` is cut off so that
 * it never holds memory or slows anyone else.
 */
export class SseConnection {
  closed = false;
  /** When a frame was last written (ms): the keep-alive skips streams written lately. */
  lastWriteAt = Date.now();
  private opened = false;
  private readonly listeners: (() => void)[] = [];

  constructor(
    readonly info: ConnectionInfo,
    private readonly res: ServerResponse,
    private readonly maxQueueBytes: number,
    private readonly metrics: GatewayMetrics,
  ) {
    res.on('close', () => this.finish());
  }

  /** Runs fn once when the stream ends, whoever ends it. */
  onEnd(fn: () => void) {
    if (this.closed) fn();
    else this.listeners.push(fn);
  }

  /**
   * Writes the first frame and counts the stream as connected. The frame is
   * not kept: a small Buffer pins its whole 8 KB allocation pool slab, which
   * measured as 3 KB per idle stream when a closure held it.
   */
  open(initFrame: Buffer) {
    this.send(initFrame, false);
    this.opened = true;
    this.metrics.connections.inc();
  }

  /** Queues a whole frame; false when the connection is gone (or was just cut off). Deliveries are counted by the caller, once per event. */
  send(frame: Buffer, isEvent = true, now = Date.now()): boolean {
    if (this.closed) return false;
    const queued = this.res.writableLength;
    // A frame larger than the whole budget still goes to a client that keeps up.
    if (queued > 0 && queued + frame.length > this.maxQueueBytes) {
      this.metrics.slowDisconnects.inc();
      if (isEvent) this.metrics.dropped.inc();
      // Nothing more can be written whole: drop the socket.
      this.res.destroy();
      this.finish();
      return false;
    }
    this.res.write(frame);
    this.lastWriteAt = now;
    return true;
  }

  /**
   * Ends the stream cleanly after the frames already queued, and the socket
   * with it: a client reconnects on a new one anyway, and an idle keep-alive
   * socket would only hold a shutting-down server open.
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
    if (this.opened) this.metrics.connections.dec();
    for (const fn of this.listeners.splice(0)) fn();
  }
}
