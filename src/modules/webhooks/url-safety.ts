// Which webhook targets are allowed (pure, apart from the DNS lookup passed in).
import { BlockList, isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

// Loopback, private, carrier-grade NAT, link-local, unique-local, documentation, benchmarking,
// multicast and reserved ranges. Two lists: Node matches IPv4 addresses against an IPv6
// ::ffff:0:0/96 rule, which would block them all.
const BLOCKED_V4 = new BlockList();
const BLOCKED_V6 = new BlockList();
for (const [net, bits] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  BLOCKED_V4.addSubnet(net, bits, 'ipv4');
}
// Local-use NAT64 (64:ff9b:1::/48) translates to whatever the local network decides, and Teredo
// (2001::/32, inside 2001::/23) hides its client address: both are refused outright.
for (const [net, bits] of [
  ['64:ff9b:1::', 48],
  ['100::', 64],
  ['2001::', 23],
  ['2001:db8::', 32],
  ['fc00::', 7],
  ['fe80::', 10],
  ['fec0::', 10],
  ['ff00::', 8],
] as const) {
  BLOCKED_V6.addSubnet(net, bits, 'ipv6');
}

// IPv6 forms that carry an IPv4 address, and the byte where it starts: such an address is judged as
// that IPv4 address (::ffff:127.0.0.1 is loopback, 64:ff9b::8.8.8.8 is public).
const EMBEDDED_V4: [ipaddr.IPv6, number, number][] = [
  [ipaddr.IPv6.parse('::ffff:0:0'), 96, 12], // IPv4-mapped
  [ipaddr.IPv6.parse('::ffff:0:0:0'), 96, 12], // IPv4-translated (RFC 6145)
  [ipaddr.IPv6.parse('::'), 96, 12], // IPv4-compatible (deprecated; also :: and ::1)
  [ipaddr.IPv6.parse('64:ff9b::'), 96, 12], // NAT64 well-known prefix (RFC 6052)
  [ipaddr.IPv6.parse('2002::'), 16, 2], // 6to4
];

/** The IPv4 address an IPv6 address stands for, if it is one of the forms that embed one. */
export function embeddedIPv4(address: string): string | undefined {
  if (!ipaddr.IPv6.isValid(address)) return undefined;
  const v6 = ipaddr.IPv6.parse(address);
  const form = EMBEDDED_V4.find(([prefix, bits]) => v6.match(prefix, bits));
  if (!form) return undefined;
  return v6
    .toByteArray()
    .slice(form[2], form[2] + 4)
    .join('.');
}

/** True when the address is a public unicast address a webhook may be sent to. */
export function isPublicAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 0) return false;
  if (family === 4) return !BLOCKED_V4.check(address, 'ipv4');
  const v4 = embeddedIPv4(address);
  if (v4 !== undefined) return !BLOCKED_V4.check(v4, 'ipv4');
  return !BLOCKED_V6.check(address, 'ipv6');
}

export interface UrlRules {
  allowHttp: boolean;
  allowPrivateTargets: boolean;
}

export type LookupAll = (hostname: string) => Promise<{ address: string; family: number }[]>;

/** Checks a URL as saved: scheme, shape and (unless private targets are allowed) every resolved address. */
export async function checkWebhookUrl(raw: string, rules: UrlRules, lookupAll: LookupAll): Promise<string | undefined> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'url must be an absolute URL';
  }
  if (url.protocol !== 'https:' && !(rules.allowHttp && url.protocol === 'http:')) {
    return rules.allowHttp ? 'url must use http or https' : 'url must use https';
  }
  if (url.username || url.password) return 'url must not contain credentials';
  if (url.hash) return 'url must not contain a fragment';
  if (rules.allowPrivateTargets) return undefined;
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  if (isIP(host)) return isPublicAddress(host) ? undefined : 'url must point to a public address';
  let addresses: { address: string }[];
  try {
    addresses = await lookupAll(host);
  } catch {
    return 'url host could not be resolved';
  }
  if (addresses.length === 0) return 'url host could not be resolved';
  if (addresses.some((a) => !isPublicAddress(a.address))) return 'url must point to a public address';
  return undefined;
}
