import dns from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';

/**
 * Outbound safety for webhooks (docs/events.md): only public unicast addresses are
 * reachable unless private networks are allowed. The check runs on the address the socket
 * actually connects to (a lookup hook on the HTTP agent), so a name that resolves to a
 * private address, or re-resolves between a check and the connect, is refused too.
 */
export function isPublicAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return false;
  let ip = ipaddr.parse(address);
  if (ip.kind() === 'ipv6' && (ip as ipaddr.IPv6).isIPv4MappedAddress()) ip = (ip as ipaddr.IPv6).toIPv4Address();
  return ip.range() === 'unicast';
}

export class DestinationRefused extends Error {}

/** The host of a URL as an IP literal ([::1] -> ::1), or undefined when it is a name. */
export function literalAddress(hostname: string): string | undefined {
  const bare = hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
  return ipaddr.isValid(bare) && (bare.includes(':') || ipaddr.IPv4.isValidFourPartDecimal(bare)) ? bare : undefined;
}

const safeLookup: LookupFunction = (hostname, options, callback) => {
  dns.lookup(hostname, { ...options, all: true }, (err, addresses) => {
    if (err) return callback(err, '', 0);
    const list = addresses as dns.LookupAddress[];
    const refused = list.find((a) => !isPublicAddress(a.address));
    if (refused || !list.length) {
      return callback(new DestinationRefused(`${hostname} resolves to ${refused?.address ?? 'nothing'}, which is not a public address`), '', 0);
    }
    if ((options as dns.LookupOptions).all) return (callback as unknown as (e: null, a: dns.LookupAddress[]) => void)(null, list);
    callback(null, list[0].address, list[0].family);
  });
};

/** Agents for outbound webhook requests: no keep-alive, the safe lookup unless private networks are allowed. */
export function agents(allowPrivate: boolean) {
  const lookup = allowPrivate ? undefined : safeLookup;
  return { http: new http.Agent({ lookup }), https: new https.Agent({ lookup }) };
}
