declare module 'cluster-key-slot' {
  /** The Redis Cluster hash slot of a key (its hash tag, if any, decides). */
  export default function calculateSlot(key: string | Buffer): number;
}
