// What the stream offers at a feature level (docs/feature-levels.md): the one
// place the gateway asks about the level. Level 2 is the documented stream
// (no `id:`, `init.presence` always `{}`); level 3 adds replay and presence
// (contract §9, docs/realtime.md).
import { existsAt, type FeatureLevel, type LevelSpan } from '../../shared/feature-level.js';

/** Frames with `id:`, and resuming by `Last-Event-ID` (contract §9). */
export const STREAM_REPLAY: LevelSpan = { since: 3 };
/** Who is online: `init.presence` and `presence.updated` (contract §9). */
export const PRESENCE: LevelSpan = { since: 3 };

export interface StreamFeatures {
  /** Frames carry `id:` and `Last-Event-ID` resumes (`init.resumed`). */
  replay: boolean;
  /** `init.presence` and `presence.updated` (services/gateway/presence.ts). */
  presence: boolean;
}

export const streamFeatures = (level: FeatureLevel): StreamFeatures => ({
  replay: existsAt(STREAM_REPLAY, level),
  presence: existsAt(PRESENCE, level),
});
