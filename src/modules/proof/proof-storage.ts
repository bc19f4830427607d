// Where proof images are kept (contract section 19): PostgreSQL by default (proof.repository.ts),
// an S3-compatible bucket when S3_BUCKET is set (s3-storage.ts). services.ts picks one. Every
// upload writes new keys and never overwrites an object, so a reader sees an old image or a new
// one, never half of each.
export interface StoredObject {
  data: Buffer;
  contentType: string;
}

export interface ProofStorage {
  readonly kind: 'postgres' | 's3';
  put(key: string, data: Buffer, contentType: string): Promise<void>;
  get(key: string): Promise<StoredObject | undefined>;
  /** Best effort for callers: objects no package points to any more. */
  delete(keys: string[]): Promise<void>;
  close?(): void;
}
