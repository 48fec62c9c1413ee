/**
 * Runs a piece of work one at a time. Asked while it runs, it runs once more
 * afterwards, and every ask made meanwhile folds into that one run: the
 * returned promise resolves once a run that started after the ask is done.
 * The outbox relay and the job publisher drain their tables this way.
 */
export class SerialRun {
  private running: Promise<void> | null = null;
  private again = false;

  /** `work` must not throw: it reports its own failures (the next run retries). */
  constructor(
    private readonly work: () => Promise<void>,
    private readonly shouldRepeat: () => boolean = () => true,
  ) {}

  run(): Promise<void> {
    if (this.running) {
      this.again = true;
      return this.running;
    }
    this.running = (async () => {
      try {
        do {
          this.again = false;
          await this.work();
        } while (this.again && this.shouldRepeat());
      } finally {
        this.running = null;
      }
    })();
    return this.running;
  }

  /** The run under way, if any. */
  get current(): Promise<void> | null {
    return this.running;
  }
}
