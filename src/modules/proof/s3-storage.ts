// Proof images in an S3-compatible bucket (S3_BUCKET and friends, docs/configuration.md). The AWS
// SDK is loaded on the first upload or read, not at start (contract section 17's footprint).
import type { S3Config } from '../../config.js';
import type { ProofStorage, StoredObject } from './proof-storage.js';

type S3Module = typeof import('@aws-sdk/client-s3');

export class S3ProofStorage implements ProofStorage {
  readonly kind = 's3' as const;
  private client: Promise<{ s3: S3Module; client: InstanceType<S3Module['S3Client']> }> | undefined;

  constructor(private readonly config: S3Config) {}

  private connect() {
    this.client ??= import('@aws-sdk/client-s3').then((s3) => ({
      s3,
      client: new s3.S3Client({
        region: this.config.region,
        endpoint: this.config.endpoint,
        forcePathStyle: this.config.forcePathStyle,
        credentials: this.config.credentials,
        // One retry budget for the request: a store that is away fails the upload, which the driver repeats.
        maxAttempts: 3,
      }),
    }));
    // A failed import is tried again on the next call.
    this.client.catch(() => (this.client = undefined));
    return this.client;
  }

  async put(key: string, data: Buffer, contentType: string): Promise<void> {
    const { s3, client } = await this.connect();
    await client.send(
      new s3.PutObjectCommand({
        Bucket: this.config.bucket,
        Key: key,
        Body: data,
        ContentType: contentType,
        ContentLength: data.length,
      }),
    );
  }

  async get(key: string): Promise<StoredObject | undefined> {
    const { s3, client } = await this.connect();
    try {
      const out = await client.send(new s3.GetObjectCommand({ Bucket: this.config.bucket, Key: key }));
      if (!out.Body) return undefined;
      const bytes = await out.Body.transformToByteArray();
      return { data: Buffer.from(bytes), contentType: out.ContentType ?? 'application/octet-stream' };
    } catch (err) {
      if (
        (err as { name?: string }).name === 'NoSuchKey' ||
        (err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === 404
      )
        return undefined;
      throw err;
    }
  }

  async delete(keys: string[]): Promise<void> {
    if (!keys.length) return;
    const { s3, client } = await this.connect();
    await Promise.all(
      keys.map((key) => client.send(new s3.DeleteObjectCommand({ Bucket: this.config.bucket, Key: key }))),
    );
  }

  close(): void {
    void this.client?.then(({ client }) => client.destroy()).catch(() => undefined);
  }
}
