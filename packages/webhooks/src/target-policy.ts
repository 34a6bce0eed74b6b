import dns from 'node:dns';
import net from 'node:net';

/**
 * Where webhooks may deliver (decisions §10): `https` to public addresses; loopback, private,
 * link-local and other non-public addresses, and plain `http` (to those only), just when the
 * operator sets WEBHOOKS_ALLOW_PRIVATE=1. Checked when a webhook is created (the URL and any
 * literal address) and again at every delivery, on the addresses its host name resolves to.
 */

const NON_PUBLIC = new net.BlockList();
for (const [prefix, bits] of [
  ['0.0.0.0', 8], // "this" network
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // carrier-grade NAT
  ['127.0.0.0', 8],
  ['169.254.0.0', 16], // link-local, cloud metadata
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15], // benchmarking
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
] as const) {
  NON_PUBLIC.addSubnet(prefix, bits, 'ipv4');
}
for (const [prefix, bits] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7], // unique local
  ['fe80::', 10], // link-local
  ['ff00::', 8], // multicast
] as const) {
  NON_PUBLIC.addSubnet(prefix, bits, 'ipv6');
}

/** Whether an IP address is loopback, private or otherwise not a public unicast address. */
export function isNonPublicAddress(address: string): boolean {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped?.[1]) return NON_PUBLIC.check(mapped[1], 'ipv4');
  const family = net.isIP(address);
  if (family === 4) return NON_PUBLIC.check(address, 'ipv4');
  if (family === 6) return NON_PUBLIC.check(address, 'ipv6');
  return true;
}

/** The URL's host without IPv6 brackets. */
const bareHost = (url: URL) => url.hostname.replace(/^\[(.*)\]$/, '$1');

const isLocalName = (host: string) => host === 'localhost' || host.endsWith('.localhost');

/**
 * Why a webhook URL is refused at creation, or null when it is accepted. A host name that is not
 * an address literal is accepted here and checked at delivery, once it is resolved.
 */
export function webhookUrlProblem(text: string, allowPrivate: boolean): string | null {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return 'url: not an absolute URL';
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return 'url: the scheme must be https';
  if (url.username !== '' || url.password !== '') return 'url: must not carry credentials';
  const host = bareHost(url);
  const literal = net.isIP(host) !== 0;
  const nonPublic = isLocalName(host) || (literal && isNonPublicAddress(host));
  if (nonPublic && !allowPrivate) return 'url: loopback and private addresses are not allowed';
  if (url.protocol === 'http:') {
    if (!allowPrivate) return 'url: the scheme must be https';
    if (!nonPublic) return 'url: http is allowed only to loopback or private addresses';
  }
  return null;
}

/** A delivery refused by the target rules (after resolution): a failed attempt like any other. */
export class TargetRefusedError extends Error {}

export interface ResolvedTarget {
  address: string;
  family: 4 | 6;
}

/**
 * Resolve the URL's host and check every address it names against the rules, so that a name
 * pointing at an internal address is refused at delivery even though it passed at creation.
 * The request is then sent to exactly the address checked here.
 */
export async function resolveTarget(url: URL, allowPrivate: boolean): Promise<ResolvedTarget> {
  const host = bareHost(url);
  const addresses =
    net.isIP(host) !== 0
      ? [{ address: host, family: net.isIP(host) }]
      : await dns.promises.lookup(host, { all: true, verbatim: true });
  const first = addresses[0];
  if (!first) throw new TargetRefusedError(`${host} resolves to no address`);
  const nonPublic = addresses.filter((a) => isNonPublicAddress(a.address));
  if (nonPublic.length > 0 && !allowPrivate) {
    throw new TargetRefusedError(`${host} resolves to a non-public address (${nonPublic[0]?.address})`);
  }
  if (url.protocol === 'http:' && (!allowPrivate || nonPublic.length !== addresses.length)) {
    throw new TargetRefusedError(`http is allowed only to loopback or private addresses (${host})`);
  }
  return { address: first.address, family: first.family === 6 ? 6 : 4 };
}
