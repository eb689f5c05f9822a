/**
 * Token URLs that CONTRACT 3 refuses while KEYWARD_ALLOW_PRIVATE_URLS is false, each with the words the
 * refusal must carry: every spelling of an address the WHATWG URL parser normalises, and names that
 * are this machine by definition. Shared by the service, dashboard and CLI suites.
 */
export const REFUSED_TOKEN_URLS: { url: string; because: string }[] = [
  { url: 'https://127.1/token', because: 'points at a loopback address (127.0.0.1)' },
  { url: 'https://0x7f000001/token', because: 'points at a loopback address (127.0.0.1)' },
  { url: 'https://2130706433/token', because: 'points at a loopback address (127.0.0.1)' },
  { url: 'https://0177.0.0.1/token', because: 'points at a loopback address (127.0.0.1)' },
  { url: 'https://[::1]/token', because: 'points at a loopback address (::1)' },
  { url: 'https://[::ffff:127.0.0.1]/token', because: 'points at a loopback address (::ffff:7f00:1)' },
  { url: 'https://[::ffff:10.0.0.5]/token', because: 'points at a private address (::ffff:a00:5)' },
  // IPv4-compatible IPv6 (::/96, deprecated by RFC 4291): refused whatever IPv4 address they carry.
  { url: 'https://[::7f00:1]/t', because: 'points at an IPv4-compatible IPv6 address (::7f00:1)' },
  { url: 'https://[::a00:5]/t', because: 'points at an IPv4-compatible IPv6 address (::a00:5)' },
  { url: 'https://[::8.8.8.8]/token', because: 'points at an IPv4-compatible IPv6 address (::808:808)' },
  { url: 'https://[fd00::1]/token', because: 'points at a unique-local address (fd00::1)' },
  { url: 'https://[fe80::1]/token', because: 'points at a link-local address (fe80::1)' },
  { url: 'https://[ff02::1]/token', because: 'points at a multicast address (ff02::1)' },
  { url: 'https://[::]/token', because: 'points at an unspecified address (::)' },
  { url: 'https://0.0.0.0/token', because: 'points at an unspecified address (0.0.0.0)' },
  { url: 'https://169.254.169.254/latest/meta-data', because: 'points at a link-local address (169.254.169.254)' },
  { url: 'https://10.0.0.5/token', because: 'points at a private address (10.0.0.5)' },
  { url: 'https://172.16.0.1/token', because: 'points at a private address (172.16.0.1)' },
  { url: 'https://192.168.1.1:8443/token', because: 'points at a private address (192.168.1.1)' },
  { url: 'https://100.64.0.1/token', because: 'points at a carrier-grade NAT (CGNAT) address (100.64.0.1)' },
  { url: 'https://224.0.0.1/token', because: 'points at a multicast address (224.0.0.1)' },
  { url: 'https://255.255.255.255/token', because: 'points at a broadcast address (255.255.255.255)' },
  { url: 'https://localhost/token', because: 'points at this machine (localhost)' },
  { url: 'https://LOCALHOST./token', because: 'points at this machine (localhost)' },
  { url: 'https://idp.localhost/token', because: 'points at this machine (idp.localhost)' },
  { url: 'http://auth.acme.test/token', because: 'must be https' },
];

export const ALLOW_HINT = '; set KEYWARD_ALLOW_PRIVATE_URLS=true only for development';
