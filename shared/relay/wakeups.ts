// Wake-ups between processes: a process whose relay is not elected tells the
// elected one that it committed outbox rows, with a Redis PUBLISH (not
// pg_notify: Postgres serializes the commits of notifying transactions).
// A wake-up lost while Redis is away is caught by the relay's 1 s poll.
import type { Logger } from '../logger.js';
import { createRedis, type Redis } from '../redis.js';

export interface Wakeups {
  /** Calls `onWake` whenever a process announces (this one included). */
  listen(onWake: () => void): void;
  /** Tells the elected relay, wherever it runs, that rows were committed. */
  announce(): void;
  close(): void;
}

export class RedisWakeups implements Wakeups {
  private readonly subscriber: Redis;
  private announcing = false;
  private announceAgain = false;

  constructor(
    private readonly redis: Redis,
    redisUrl: string,
    private readonly channel: string,
    log: Logger,
  ) {
    this.subscriber = createRedis(redisUrl, 'axid-relay-wake');
    this.subscriber.on('error', (err) => log.debug({ err: err.message }, 'relay wake-up connection error'));
  }

  listen(onWake: () => void): void {
    this.subscriber.on('message', onWake);
    void this.subscriber.subscribe(this.channel).catch(() => undefined);
  }

  announce(): void {
    // One PUBLISH in flight at a time; announcements meanwhile fold into one more.
    if (this.announcing) {
      this.announceAgain = true;
      return;
    }
    this.announcing = true;
    void this.redis
      .publish(this.channel, '1')
      .catch(() => undefined)
      .finally(() => {
        this.announcing = false;
        if (this.announceAgain) {
          this.announceAgain = false;
          this.announce();
        }
      });
  }

  close(): void {
    this.subscriber.disconnect();
  }
}
