const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Path ids that are not UUIDs cannot name anything: callers answer 404. */
export const isUuid = (value: unknown): value is string => typeof value === 'string' && UUID.test(value);
