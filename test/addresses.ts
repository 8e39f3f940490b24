/**
 * Issue 16, item 6: addresses a webhook may not target (with the reason the server gives) and public
 * unicast ones it may. Shared by the create/update checks and the connection-time lookup.
 */
export const REFUSED: ReadonlyArray<[address: string, reason: string]> = [
  // The ones the issue found accepted and delivered to.
  ['::7f00:1', 'loopback: 127.0.0.1 in an IPv4-compatible address'],
  ['::127.0.0.1', 'loopback: 127.0.0.1 in an IPv4-compatible address'],
  ['64:ff9b::7f00:1', 'loopback: 127.0.0.1 in a NAT64 address'],
  ['2002:7f00:1::', 'loopback: 127.0.0.1 in a 6to4 address'],
  ['198.18.0.1', 'reserved'],
  ['198.19.255.254', 'reserved'],
  ['224.0.0.1', 'multicast'],
  ['239.255.255.250', 'multicast'],
  ['ff02::1', 'multicast'],
  ['255.255.255.255', 'broadcast'],
  ['100.64.0.1', 'carrierGradeNat'],
  ['100.127.255.254', 'carrierGradeNat'],
  ['fec0::1', 'deprecatedSiteLocal'],
  ['feff::1', 'deprecatedSiteLocal'],
  // Embedded IPv4 addresses are judged by the IPv4 address.
  ['::ffff:127.0.0.1', 'loopback: 127.0.0.1 in an IPv4-mapped address'],
  ['::ffff:a00:1', 'private: 10.0.0.1 in an IPv4-mapped address'],
  ['64:ff9b::a9fe:a9fe', 'linkLocal: 169.254.169.254 in a NAT64 address'],
  ['2002:c0a8:101::1', 'private: 192.168.1.1 in a 6to4 address'],
  ['::2', 'unspecified: 0.0.0.2 in an IPv4-compatible address'],
  // What the hand-written list refused already.
  ['127.0.0.1', 'loopback'],
  ['10.1.2.3', 'private'],
  ['172.16.0.1', 'private'],
  ['192.168.0.1', 'private'],
  ['169.254.169.254', 'linkLocal'],
  ['0.0.0.0', 'unspecified'],
  ['::1', 'loopback'],
  ['::', 'unspecified'],
  ['fd12:3456::1', 'uniqueLocal'],
  ['fe80::1', 'linkLocal'],
  // Other ranges that are not public unicast.
  ['192.0.2.10', 'reserved'],
  ['203.0.113.10', 'reserved'],
  ['240.0.0.1', 'reserved'],
  ['2001:db8::1', 'reserved'],
  ['2001::1', 'teredo'],
  ['64:ff9b:1::a00:1', 'rfc6052'],
];

export const ACCEPTED: readonly string[] = [
  '93.184.215.14',
  '2606:2800:21f:cb07:6820:80da:af6b:8b2c',
  '8.8.8.8',
  '100.63.255.255',
  '100.128.0.1',
  '172.32.0.1',
  '198.20.0.1',
  '2a00:1450:4001:830::200e',
  // An IPv4 address inside IPv6 is as public as the IPv4 address.
  '::ffff:5db8:d70e',
  '64:ff9b::5db8:d70e',
  '2002:5db8:d70e::1',
];

/** `[v6]` for IPv6 addresses, as in a URL. */
export function urlHost(address: string): string {
  return address.includes(':') ? `[${address}]` : address;
}
