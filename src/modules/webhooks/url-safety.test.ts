import assert from 'node:assert/strict';
import { test } from 'node:test';
import { checkWebhookUrl, embeddedIPv4, isPublicAddress, type LookupAll } from './url-safety.js';

test('isPublicAddress refuses loopback, private, link-local, unique-local, multicast and embedded private addresses', () => {
  for (const address of [
    '127.0.0.1',
    '10.1.2.3',
    '172.16.0.1',
    '172.31.255.255',
    '192.168.1.1',
    '169.254.169.254',
    '100.64.0.1',
    '0.0.0.0',
    '224.0.0.1',
    '255.255.255.255',
    '192.0.2.1',
    '198.18.0.1',
    '::1',
    '::',
    'fe80::1',
    'fc00::1',
    'fd12:3456::1',
    'ff02::1',
    '::ffff:127.0.0.1',
    '::ffff:10.0.0.1',
    '64:ff9b::7f00:1',
    '2002:7f00:1::1',
    '2001:db8::1',
    'not-an-ip',
  ]) {
    assert.equal(isPublicAddress(address), false, address);
  }
  for (const address of [
    '8.8.8.8',
    '1.1.1.1',
    '172.32.0.1',
    '93.184.216.34',
    '2606:4700:4700::1111',
    '2a00:1450:4001:82b::200e',
  ]) {
    assert.equal(isPublicAddress(address), true, address);
  }
});

test('every IPv6 form that embeds an IPv4 address is judged as that IPv4 address', () => {
  const forms: [string, (v4: string) => string][] = [
    ['IPv4-mapped', (v4) => `::ffff:${v4}`],
    ['IPv4-translated', (v4) => `::ffff:0:${v4}`],
    ['IPv4-compatible', (v4) => `::${v4}`],
    ['NAT64', (v4) => `64:ff9b::${v4}`],
    ['6to4', (v4) => `2002:${hexPair(v4)}::1`],
  ];
  for (const [name, write] of forms) {
    for (const v4 of ['127.0.0.1', '10.0.0.1', '169.254.169.254', '192.168.1.1', '100.64.0.1', '0.0.0.0']) {
      assert.equal(isPublicAddress(write(v4)), false, `${name} ${write(v4)}`);
      assert.equal(embeddedIPv4(write(v4)), v4, `${name} ${write(v4)} stands for ${v4}`);
    }
    assert.equal(isPublicAddress(write('8.8.8.8')), true, `${name} ${write('8.8.8.8')}`);
  }
  // The same addresses in hexadecimal, as a URL parser writes them.
  for (const address of [
    '::ffff:7f00:1',
    '::ffff:0:7f00:1',
    '::ffff:0:a9fe:a9fe',
    '::7f00:1',
    '64:ff9b::a00:1',
    '2002:a9fe:a9fe::',
  ]) {
    assert.equal(isPublicAddress(address), false, address);
  }
  // Local-use NAT64 and Teredo are refused whatever they embed.
  for (const address of ['64:ff9b:1::808:808', '2001:0:4136:e378:8000:63bf:f7f7:f7f7', '2001::1']) {
    assert.equal(isPublicAddress(address), false, address);
    assert.equal(embeddedIPv4(address), undefined, address);
  }
  assert.equal(embeddedIPv4('2606:4700:4700::1111'), undefined);
});

function hexPair(v4: string): string {
  const [a, b, c, d] = v4.split('.').map(Number);
  return `${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
}

const resolveTo =
  (...addresses: string[]): LookupAll =>
  async () =>
    addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
const strict = { allowHttp: false, allowPrivateTargets: false };
const loose = { allowHttp: true, allowPrivateTargets: true };

test('checkWebhookUrl enforces the scheme and the shape', async () => {
  const dns = resolveTo('93.184.216.34');
  assert.equal(await checkWebhookUrl('https://hooks.example.com/x', strict, dns), undefined);
  assert.equal(await checkWebhookUrl('http://hooks.example.com/x', strict, dns), 'url must use https');
  assert.equal(await checkWebhookUrl('http://hooks.example.com/x', loose, dns), undefined);
  assert.equal(await checkWebhookUrl('ftp://hooks.example.com/x', loose, dns), 'url must use http or https');
  assert.equal(await checkWebhookUrl('not a url', loose, dns), 'url must be an absolute URL');
  assert.equal(
    await checkWebhookUrl('https://user:pw@hooks.example.com/', strict, dns),
    'url must not contain credentials',
  );
  assert.equal(await checkWebhookUrl('https://hooks.example.com/#x', strict, dns), 'url must not contain a fragment');
});

test('checkWebhookUrl refuses names and literals that reach private addresses unless allowed', async () => {
  assert.equal(await checkWebhookUrl('https://127.0.0.1/x', strict, resolveTo()), 'url must point to a public address');
  assert.equal(await checkWebhookUrl('https://[::1]/x', strict, resolveTo()), 'url must point to a public address');
  assert.equal(
    await checkWebhookUrl('https://[::ffff:7f00:1]/x', strict, resolveTo()),
    'url must point to a public address',
  );
  assert.equal(
    await checkWebhookUrl('https://[::ffff:0:127.0.0.1]/x', strict, resolveTo()),
    'url must point to a public address',
  );
  assert.equal(
    await checkWebhookUrl('https://[64:ff9b::169.254.169.254]/x', strict, resolveTo()),
    'url must point to a public address',
  );
  assert.equal(
    await checkWebhookUrl('https://rebind.example/x', strict, resolveTo('::ffff:0:a00:5')),
    'url must point to a public address',
  );
  assert.equal(await checkWebhookUrl('https://8.8.8.8/x', strict, resolveTo()), undefined);
  // One private answer among public ones is enough to refuse (DNS rebinding picks any of them).
  assert.equal(
    await checkWebhookUrl('https://mixed.example/x', strict, resolveTo('93.184.216.34', '10.0.0.5')),
    'url must point to a public address',
  );
  assert.equal(
    await checkWebhookUrl('https://gone.example/x', strict, async () => Promise.reject(new Error('ENOTFOUND'))),
    'url host could not be resolved',
  );
  assert.equal(
    await checkWebhookUrl('https://127.0.0.1/x', { allowHttp: false, allowPrivateTargets: true }, resolveTo()),
    undefined,
  );
});
