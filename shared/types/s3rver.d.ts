declare module 's3rver' {
  interface S3rverOptions {
    address?: string;
    port?: number;
    silent?: boolean;
    directory?: string;
    resetOnClose?: boolean;
    configureBuckets?: { name: string; configs?: (string | Buffer)[] }[];
  }
  export default class S3rver {
    constructor(options?: S3rverOptions);
    run(): Promise<{ address: string; port: number }>;
    close(): Promise<void>;
    /** Koa's middleware list (S3rver extends Koa); composed when run() listens. */
    middleware: ((ctx: { method: string; path: string; query: Record<string, unknown>; status: number; body: unknown }, next: () => Promise<void>) => unknown)[];
  }
}
