import assert from 'node:assert/strict';
import { test } from 'node:test';
import { checkWebhookUrl, isPublicAddress, type LookupAll } from './url-safety.js';

test('isPublicAddress refuses loopback, private, link-local, unique-local, multicast and mapped addresses', () => {
  for (const address of [
    '127.0.0.1', '10.1.2.3', '172.16.0.1', '172.31.255.255', '192.168.1.1', '169.254.169.254', '100.64.0.1', '0.0.0.0',
    '224.0.0.1', '255.255.255.255', '192.0.2.1', '198.18.0.1',
    '::1', '::', 'fe80::1', 'fc00::1', 'fd12:3456::1', 'ff02::1', '::ffff:127.0.0.1', '::ffff:10.0.0.1', '::ffff:8.8.8.8',
    '64:ff9b::7f00:1', '2002:7f00:1::1', '2001:db8::1', 'not-an-ip',
  ]) {
    assert.equal(isPublicAddress(address), false, address);
  }
  for (const address of ['8.8.8.8', '1.1.1.1', '172.32.0.1', '93.184.216.34', '2606:4700:4700::1111', '2a00:1450:4001:82b::200e']) {
    assert.equal(isPublicAddress(address), true, address);
  }
});

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
  assert.equal(await checkWebhookUrl('https://user:pw@hooks.example.com/', strict, dns), 'url must not contain credentials');
  assert.equal(await checkWebhookUrl('https://hooks.example.com/#x', strict, dns), 'url must not contain a fragment');
});

test('checkWebhookUrl refuses names and literals that reach private addresses unless allowed', async () => {
  assert.equal(await checkWebhookUrl('https://127.0.0.1/x', strict, resolveTo()), 'url must point to a public address');
  assert.equal(await checkWebhookUrl('https://[::1]/x', strict, resolveTo()), 'url must point to a public address');
  assert.equal(await checkWebhookUrl('https://[::ffff:7f00:1]/x', strict, resolveTo()), 'url must point to a public address');
  assert.equal(await checkWebhookUrl('https://8.8.8.8/x', strict, resolveTo()), undefined);
  // One private answer among public ones is enough to refuse (DNS rebinding picks any of them).
  assert.equal(await checkWebhookUrl('https://mixed.example/x', strict, resolveTo('93.184.216.34', '10.0.0.5')), 'url must point to a public address');
  assert.equal(await checkWebhookUrl('https://gone.example/x', strict, async () => Promise.reject(new Error('ENOTFOUND'))), 'url host could not be resolved');
  assert.equal(await checkWebhookUrl('https://127.0.0.1/x', { allowHttp: false, allowPrivateTargets: true }, resolveTo()), undefined);
});
