// Proof of delivery: each image's size cap, the upload's own timeout, the decoding bounds, where images are kept.
import type { EnvReader } from './env-reader.js';

/** Proof of delivery (contract section 19). */
export interface ProofConfig {
  maxBytes: number;
  uploadTimeoutMs: number;
  maxDecodedBytes: number;
  decodeConcurrency: number;
  s3: S3Config | undefined;
}

/** An S3-compatible bucket for the proof images (S3_BUCKET set); PostgreSQL keeps them otherwise. */
export interface S3Config {
  bucket: string;
  /** A custom endpoint (MinIO, R2, ...); undefined: AWS's own for the region. */
  endpoint: string | undefined;
  region: string;
  /** undefined: the SDK's default credential chain (environment, instance role, ...). */
  credentials: { accessKeyId: string; secretAccessKey: string } | undefined;
  forcePathStyle: boolean;
}

const MB = 1024 * 1024;

export function readProof(r: EnvReader): ProofConfig {
  return {
    maxBytes: r.size('PROOF_MAX_SIZE', '8MB', 64 * 1024, 50 * MB),
    uploadTimeoutMs: r.duration('PROOF_UPLOAD_TIMEOUT', '120s', '1h'),
    // 96 MB: a 32-megapixel RGB photo (what an 8 MB JPEG from a phone camera holds) or a 1600 px
    // image of any depth; a 48-megapixel original or a decompression bomb is refused unread.
    maxDecodedBytes: r.size('PROOF_MAX_DECODED_SIZE', '96MB', 32 * MB, 1024 * MB),
    decodeConcurrency: r.int('PROOF_DECODE_CONCURRENCY', 2, 1, 64),
    s3: readS3(r),
  };
}

function readS3(r: EnvReader): S3Config | undefined {
  const bucket = r.get('S3_BUCKET');
  const endpoint = r.url('S3_ENDPOINT', ['http:', 'https:']);
  const accessKeyId = r.get('S3_ACCESS_KEY_ID');
  const secretAccessKey = r.get('S3_SECRET_ACCESS_KEY');
  const region = r.get('S3_REGION');
  const forcePathStyle = r.bool('S3_FORCE_PATH_STYLE', false);
  if (bucket === undefined) {
    const stray = [
      'S3_ENDPOINT',
      'S3_REGION',
      'S3_ACCESS_KEY_ID',
      'S3_SECRET_ACCESS_KEY',
      'S3_FORCE_PATH_STYLE',
    ].filter((name) => r.get(name) !== undefined);
    if (stray.length)
      r.problem(`${stray.join(', ')} set without S3_BUCKET (proof images go to S3 only when S3_BUCKET is set)`);
    return undefined;
  }
  // Bucket names as S3 takes them: 3 to 63 lowercase letters, digits, dots and dashes.
  if (!/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(bucket))
    r.problem(`S3_BUCKET must be a bucket name (3 to 63 lowercase letters, digits, dots and dashes; got "${bucket}")`);
  if ((accessKeyId === undefined) !== (secretAccessKey === undefined))
    r.problem('S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY must be set together');
  if (region !== undefined && !/^[a-z0-9-]{1,50}$/.test(region))
    r.problem(`S3_REGION must be a region name such as eu-west-1 (got "${region}")`);
  if (endpoint === undefined && region === undefined)
    r.problem('S3_REGION is required with S3_BUCKET when S3_ENDPOINT is not set');
  return {
    bucket,
    endpoint,
    // An S3-compatible server behind S3_ENDPOINT usually ignores the region; the signature still names one.
    region: region ?? 'us-east-1',
    credentials:
      accessKeyId !== undefined && secretAccessKey !== undefined ? { accessKeyId, secretAccessKey } : undefined,
    forcePathStyle,
  };
}
