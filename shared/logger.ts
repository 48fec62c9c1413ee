import { pino, type Logger } from 'pino';

export type { Logger };

/** JSON logs on stdout (stderr for the tool server, whose stdout is the protocol). */
export function createLogger(level: string, destination: 1 | 2 = 1): Logger {
  return pino(
    {
      level,
      base: { service: 'axid' },
      redact: { paths: ['req.headers.authorization', 'key', 'api_key'], censor: '[redacted]' },
    },
    pino.destination({ fd: destination, sync: false }),
  );
}
