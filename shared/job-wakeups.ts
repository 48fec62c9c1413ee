// Kept apart from jobs.ts, which loads BullMQ: every runtime has one, and a
// gateway-only process never loads BullMQ (services/stack.ts).

/**
 * Wakes a runtime's job publisher after a commit that recorded jobs. One per
 * runtime (`rt.jobs`), as commit listeners are (events.ts): two stacks in one
 * process never wake each other's publishers.
 */
export class JobWakeups {
  private readonly listeners = new Set<() => void>();

  /** Runs listener after each such commit; returns the unsubscribe function. */
  subscribe(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Call after a statement that wrote job_outbox rows outside recordJob. */
  recorded(): void {
    for (const listener of this.listeners) listener();
  }
}
