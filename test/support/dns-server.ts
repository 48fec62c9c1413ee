// A DNS server of a test's own on loopback (UDP), for the outbound fetcher's
// OUTBOUND_DNS_SERVERS: each query is answered as the test says, at once, late,
// or never. Packets are read and written by dns-packet.
import dgram from 'node:dgram';
import type { AddressInfo } from 'node:net';
import dnsPacket from 'dns-packet';

/** How to answer a name: its addresses (A and AAAA are picked by family), after `delayMs`; null: never answer. */
export type DnsAnswer = { addresses: string[]; delayMs?: number } | null;

export interface TestDnsServer {
  /** `127.0.0.1:<port>`, for OUTBOUND_DNS_SERVERS. */
  address: string;
  /** Questions asked, by name. */
  asked: Map<string, number>;
  close(): Promise<void>;
}

export async function startDnsServer(answer: (name: string) => DnsAnswer): Promise<TestDnsServer> {
  const socket = dgram.createSocket('udp4');
  const timers = new Set<NodeJS.Timeout>();
  const asked = new Map<string, number>();
  socket.on('message', (message, from) => {
    let query: dnsPacket.DecodedPacket;
    try {
      query = dnsPacket.decode(message);
    } catch {
      return;
    }
    const question = query.questions?.[0];
    if (!question) return;
    const name = question.name.toLowerCase();
    asked.set(name, (asked.get(name) ?? 0) + 1);
    const a = answer(name);
    if (a === null) return;
    const family = question.type === 'AAAA' ? 6 : 4;
    const records = a.addresses.filter((address) => (address.includes(':') ? 6 : 4) === family);
    const reply = dnsPacket.encode({
      type: 'response',
      id: query.id,
      flags: dnsPacket.RECURSION_DESIRED | dnsPacket.RECURSION_AVAILABLE | (a.addresses.length === 0 ? 3 : 0), // rcode 3: NXDOMAIN
      questions: [question],
      answers: records.map((data) => ({ type: family === 6 ? 'AAAA' : 'A', name: question.name, ttl: 0, class: 'IN', data }) as dnsPacket.Answer),
    });
    const send = () => socket.send(reply, from.port, from.address);
    if (!a.delayMs) return send();
    const timer = setTimeout(() => {
      timers.delete(timer);
      send();
    }, a.delayMs);
    timers.add(timer);
  });
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  const { port } = socket.address() as AddressInfo;
  return {
    address: `127.0.0.1:${port}`,
    asked,
    async close() {
      for (const timer of timers) clearTimeout(timer);
      await new Promise<void>((resolve) => socket.close(() => resolve()));
    },
  };
}
