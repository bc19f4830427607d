// Proof of delivery with S3_BUCKET set: the images go to an S3-compatible bucket (s3rver, a local
// S3 server that checks the SDK's signatures), nothing of them to PostgreSQL, and they are served
// back through the API as with the default storage.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { GetObjectCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import S3rver from 's3rver';
import sharp from 'sharp';
import { loadConfig } from '../src/config.js';
import { buildTestApp, TEST_ENV, type TestApp } from './helpers/app.js';
import { createUser, type TestUser } from './helpers/factories.js';
import { get, packageBody, post } from './packages-helpers.js';
import { jpegWithGps, multipart, png } from './proof-helpers.js';

const BUCKET = 'proof-test';

describe('proof of delivery in an S3 bucket', () => {
  let t: TestApp;
  let s3rver: S3rver;
  let directory: string;
  let endpoint: string;
  let bucket: S3Client;
  let business: TestUser;
  let otherBusiness: TestUser;
  let admin: TestUser;

  before(async () => {
    directory = mkdtempSync(path.join(tmpdir(), 'proof-s3-'));
    s3rver = new S3rver({
      port: 0,
      address: '127.0.0.1',
      silent: true,
      directory,
      configureBuckets: [{ name: BUCKET, configs: [] }],
    });
    const { port } = await s3rver.run();
    endpoint = `http://127.0.0.1:${port}`;
    // s3rver's own key pair; it verifies each request's SigV4 signature with it.
    const credentials = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };
    bucket = new S3Client({ region: 'us-east-1', endpoint, forcePathStyle: true, credentials });
    t = await buildTestApp({
      env: {
        DISPATCH_MODE: 'off',
        S3_BUCKET: BUCKET,
        S3_ENDPOINT: endpoint,
        S3_REGION: 'us-east-1',
        S3_ACCESS_KEY_ID: credentials.accessKeyId,
        S3_SECRET_ACCESS_KEY: credentials.secretAccessKey,
        S3_FORCE_PATH_STYLE: 'true',
      },
    });
    business = await createUser(t, { role: 'BUSINESS' });
    otherBusiness = await createUser(t, { role: 'BUSINESS' });
    admin = await createUser(t, { role: 'ADMIN' });
  });
  after(async () => {
    await t?.close();
    bucket?.destroy();
    await s3rver?.close();
    rmSync(directory, { recursive: true, force: true });
  });

  async function inTransit(overrides: Record<string, unknown> = {}) {
    const driver = await createUser(t, { role: 'DRIVER', driver: { availability: 'ONLINE' } });
    const id: string = (
      await post(t, '/api/packages', business.headers, packageBody(business.countryId, overrides))
    ).json().id;
    for (const [step, by, body] of [
      ['assign', admin, { driverId: driver.id }],
      ['pickup', driver],
      ['start', driver],
    ] as const) {
      assert.equal((await post(t, `/api/packages/${id}/${step}`, by.headers, body)).statusCode, 200, step);
    }
    return { id, driver };
  }

  const keysOf = async (id: string) =>
    ((await bucket.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: `proofs/${id}/` }))).Contents ?? [])
      .map((o) => o.Key!)
      .sort();

  test('the images are stored in the bucket, re-encoded, and served through the API', async () => {
    assert.equal(t.services.proof.storageKind, 's3');
    const { id, driver } = await inTransit({ proofRequired: ['PHOTO', 'SIGNATURE'] });
    const form = multipart([
      { name: 'photo', value: await jpegWithGps(), filename: 'p.jpg', contentType: 'image/jpeg' },
      { name: 'signature', value: await png(), filename: 's.png', contentType: 'image/png' },
      { name: 'recipientName', value: 'Wambui' },
    ]);
    const res = await t.app.inject({
      method: 'POST',
      url: `/api/packages/${id}/proof`,
      headers: { ...driver.headers, ...form.headers },
      payload: form.payload,
    });
    assert.equal(res.statusCode, 200, res.body);

    const keys = await keysOf(id);
    assert.equal(keys.length, 2);
    assert.match(keys[0]!, new RegExp(`^proofs/${id}/photo-[0-9a-f-]{36}\\.jpg$`));
    assert.match(keys[1]!, new RegExp(`^proofs/${id}/signature-[0-9a-f-]{36}\\.png$`));
    const stored = await bucket.send(new GetObjectCommand({ Bucket: BUCKET, Key: keys[0] }));
    assert.equal(stored.ContentType, 'image/jpeg');
    const storedPhoto = Buffer.from(await stored.Body!.transformToByteArray());
    const meta = await sharp(storedPhoto).metadata();
    assert.deepEqual([meta.width, meta.exif], [1600, undefined]);
    // Nothing of the images in PostgreSQL.
    assert.equal((await t.db.selectFrom('proof_objects').select('key').execute()).length, 0);

    const served = await get(t, `/api/packages/${id}/proof/photo`, business.headers);
    assert.equal(served.statusCode, 200);
    assert.equal(served.headers['content-type'], 'image/jpeg');
    assert.equal(served.headers['cache-control'], 'no-store');
    assert.deepEqual(served.rawPayload, storedPhoto);
    assert.equal(
      (await get(t, `/api/packages/${id}/proof/signature`, business.headers)).headers['content-type'],
      'image/png',
    );
    assert.equal((await get(t, `/api/packages/${id}/proof/photo`, otherBusiness.headers)).statusCode, 404);

    // A new photo replaces the old object in the bucket; the signature stays.
    const again = multipart([{ name: 'photo', value: await png(), filename: 'p2.png', contentType: 'image/png' }]);
    assert.equal(
      (
        await t.app.inject({
          method: 'POST',
          url: `/api/packages/${id}/proof`,
          headers: { ...driver.headers, ...again.headers },
          payload: again.payload,
        })
      ).statusCode,
      200,
    );
    let after: string[] = [];
    for (let i = 0; i < 50 && (after = await keysOf(id)).includes(keys[0]!); i += 1)
      await new Promise((resolve) => setTimeout(resolve, 20));
    assert.equal(after.length, 2);
    assert.ok(!after.includes(keys[0]!) && after.includes(keys[1]!));

    assert.equal((await post(t, `/api/packages/${id}/deliver`, driver.headers, {})).statusCode, 200);
  });

  test('the bucket settings are validated', () => {
    const load = (env: Record<string, string>) => () => loadConfig({ ...TEST_ENV, ...env });
    assert.throws(load({ S3_ENDPOINT: endpoint }), /S3_ENDPOINT set without S3_BUCKET/);
    assert.throws(load({ S3_BUCKET: 'Bad_Bucket', S3_REGION: 'eu-west-1' }), /S3_BUCKET must be a bucket name/);
    assert.throws(load({ S3_BUCKET: 'ok-bucket' }), /S3_REGION is required/);
    assert.throws(
      load({ S3_BUCKET: 'ok-bucket', S3_REGION: 'eu-west-1', S3_ACCESS_KEY_ID: 'x' }),
      /S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY must be set together/,
    );
    assert.throws(
      load({ S3_BUCKET: 'ok-bucket', S3_ENDPOINT: 'ftp://x' }),
      /S3_ENDPOINT must be a http: or https: URL/,
    );
    assert.throws(load({ PROOF_MAX_SIZE: '100GB' }), /PROOF_MAX_SIZE must be a size/);
    assert.throws(load({ PROOF_MAX_SIZE: '60MB' }), /from 64KB to 50MB/);
    assert.throws(load({ PROOF_UPLOAD_TIMEOUT: '2h' }), /PROOF_UPLOAD_TIMEOUT must be at most 1h/);
    const ok = loadConfig({ ...TEST_ENV, S3_BUCKET: 'ok-bucket', S3_REGION: 'eu-west-1', PROOF_MAX_SIZE: '2MB' });
    assert.deepEqual(ok.proof, {
      maxBytes: 2 * 1024 * 1024,
      uploadTimeoutMs: 120_000,
      maxDecodedBytes: 96 * 1024 * 1024,
      decodeConcurrency: 2,
      s3: {
        bucket: 'ok-bucket',
        endpoint: undefined,
        region: 'eu-west-1',
        credentials: undefined,
        forcePathStyle: false,
      },
    });
    assert.equal(loadConfig(TEST_ENV).proof.s3, undefined);
  });
});
