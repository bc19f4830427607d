// Proof of delivery (contract section 19): the assigned driver sends a photo and/or a signature
// (and the recipient's name) while the package is PICKED_UP or IN_TRANSIT; whoever may read the
// package may read the images. A second upload replaces what it sends and keeps the rest (a photo
// first, the signature at the door; or a better photo again), so a part is never lost by omission.
import { createHash, randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { Executor } from '../../db/executor.js';
import type { DB } from '../../db/database.js';
import type { IdempotencyStore } from '../../http/idempotency.js';
import type { RecordAnswer } from '../../shared/record-answer.js';
import type { AuthContext } from '../../shared/auth-context.js';
import type { Bus } from '../../shared/bus.js';
import type { Clock } from '../../shared/clock.js';
import { badRequest, conflict, notFound } from '../../shared/errors.js';
import type { PackageRow, PackagesRepository } from '../packages/packages.repository.js';
import { canSee, packageNotFound, viewFor } from '../packages/package-views.js';
import { DecodeSlots } from './decode-slots.js';
import { encodePhoto, encodeSignature, type EncodedImage } from './proof-images.js';
import type { ProofRepository } from './proof.repository.js';
import type { ProofStorage, StoredObject } from './proof-storage.js';

const UPLOADABLE = ['PICKED_UP', 'IN_TRANSIT'];

export interface ProofUpload {
  photo?: Buffer;
  signature?: Buffer;
  recipientName?: string;
}

export type ProofPart = 'photo' | 'signature';

export class ProofService {
  private readonly slots: DecodeSlots;

  constructor(
    private readonly deps: {
      db: DB;
      repo: ProofRepository;
      packagesRepo: PackagesRepository;
      storage: ProofStorage;
      bus: Bus;
      clock: Clock;
      logger: Logger;
      idempotency: IdempotencyStore;
      limits: { maxDecodedBytes: number; decodeConcurrency: number };
    },
  ) {
    this.slots = new DecodeSlots(deps.limits.decodeConcurrency);
  }

  get storageKind(): ProofStorage['kind'] {
    return this.deps.storage.kind;
  }

  /**
   * Before the body is read (contract section 19): 404 unless the caller is the package's driver,
   * then (unless `status` is false) 409 unless PICKED_UP or IN_TRANSIT.
   */
  async checkUploader(
    packageId: string,
    auth: AuthContext,
    options: { status?: boolean } = {},
    db?: Executor,
  ): Promise<void> {
    const state = await this.deps.repo.state(db ?? this.deps.db, packageId);
    if (!state || state.driver_id === null || state.driver_id !== auth.userId) throw packageNotFound();
    if (options.status !== false && !UPLOADABLE.includes(state.status)) throw notUploadable(state.status);
  }

  /**
   * Once per Idempotency-Key `key` (http/idempotency.ts: a replay is answered before any decoding):
   * decodes and re-encodes the images (one decode slot for both, waiting at most `waitMs`), stores
   * them, then points the package at them in one transaction, which stores the answer `present(row)`.
   * A failed request leaves no image behind.
   */
  async upload<B>(
    packageId: string,
    auth: AuthContext,
    upload: ProofUpload,
    options: { waitMs: number; key: string | undefined; present(row: PackageRow): B },
  ) {
    if (!upload.photo && !upload.signature && upload.recipientName === undefined) {
      throw badRequest(
        'Send a photo, a signature or both (multipart/form-data fields photo, signature, recipientName)',
        'PROOF_EMPTY',
      );
    }
    if (!upload.photo && !upload.signature)
      throw badRequest('Send a photo or a signature with the recipient name', 'PROOF_EMPTY');
    const keyed = {
      accountId: auth.userId,
      key: options.key,
      scope: `POST /packages/${packageId}/proof`,
      // The request a key stands for: each part's SHA-256 (hashed only when a key is sent).
      body: options.key === undefined ? undefined : digestOf(upload),
      statusCode: 200,
    };
    return this.deps.idempotency.once(keyed, (record) => this.store(packageId, auth, upload, options, record));
  }

  private async store<B>(
    packageId: string,
    auth: AuthContext,
    upload: ProofUpload,
    options: { waitMs: number; present(row: PackageRow): B },
    record: RecordAnswer | undefined,
  ): Promise<B> {
    const { maxDecodedBytes } = this.deps.limits;
    const release = await this.slots.acquire(options.waitMs);
    let photo: EncodedImage | undefined;
    let signature: EncodedImage | undefined;
    try {
      // One after the other: two decodes at once would double the memory an upload takes.
      photo = upload.photo ? await encodePhoto(upload.photo, maxDecodedBytes) : undefined;
      signature = upload.signature ? await encodeSignature(upload.signature, maxDecodedBytes) : undefined;
    } finally {
      release();
    }
    const keyFor = (part: ProofPart, image: EncodedImage) =>
      `proofs/${packageId}/${part}-${randomUUID()}.${image.extension}`;
    const photoKey = photo ? keyFor('photo', photo) : undefined;
    const signatureKey = signature ? keyFor('signature', signature) : undefined;
    const { storage } = this.deps;
    const written: string[] = [];
    try {
      if (photo && photoKey) {
        await storage.put(photoKey, photo.data, photo.contentType);
        written.push(photoKey);
      }
      if (signature && signatureKey) {
        await storage.put(signatureKey, signature.data, signature.contentType);
        written.push(signatureKey);
      }
      const { body, replaced } = await this.deps.db.transaction().execute(async (trx) => {
        const replaced = await this.deps.repo.record(trx, packageId, auth.userId, {
          photoKey,
          signatureKey,
          recipientName: upload.recipientName,
          at: this.deps.clock.now(),
        });
        if (!replaced) {
          // Delivered, failed or handed back while the images were being written.
          await this.checkUploader(packageId, auth, {}, trx);
          throw conflict('The package changed during the upload; try again', 'CONFLICT');
        }
        const row = await this.deps.packagesRepo.load(packageId, trx);
        const body = options.present(row!);
        await record?.(trx, body);
        return { body, replaced };
      });
      written.length = 0;
      this.deps.bus.publish('package.proof', { packageId });
      this.forget([replaced.photo, replaced.signature].filter((key): key is string => key !== null));
      return body;
    } finally {
      if (written.length) this.forget(written);
    }
  }

  /** GET /packages/:id/proof/photo|signature: for whoever may read the package; 404 otherwise or when there is none. */
  async read(packageId: string, auth: AuthContext, part: ProofPart): Promise<StoredObject> {
    const row = await this.deps.packagesRepo.load(packageId);
    if (!row || !canSee(row, auth)) throw packageNotFound();
    // A company listing a PENDING package of its country sees no proof (there is none before pickup anyway).
    if (viewFor(row, auth) === 'OPEN') throw packageNotFound();
    const key = part === 'photo' ? row.proof_photo_key : row.proof_signature_key;
    const object = key ? await this.deps.storage.get(key) : undefined;
    if (!object) throw proofNotFound(part);
    return object;
  }

  /** Objects no package points to: deleted after the answer, a failure only logged. */
  private forget(keys: string[]): void {
    if (!keys.length) return;
    this.deps.storage
      .delete(keys)
      .catch((err) => this.deps.logger.warn({ err, keys }, 'deleting replaced proof images failed'));
  }
}

/** What makes two uploads the same request (Idempotency-Key): each file's SHA-256 and the recipient's name. */
function digestOf(upload: ProofUpload): Record<string, string> {
  const sha256 = (data: Buffer) => createHash('sha256').update(data).digest('hex');
  return {
    ...(upload.photo ? { photo: sha256(upload.photo) } : {}),
    ...(upload.signature ? { signature: sha256(upload.signature) } : {}),
    ...(upload.recipientName !== undefined ? { recipientName: upload.recipientName } : {}),
  };
}

const notUploadable = (status: string) =>
  conflict(
    `Package is ${status}: proof of delivery is sent while it is PICKED_UP or IN_TRANSIT`,
    'INVALID_STATUS_TRANSITION',
  );

const proofNotFound = (part: ProofPart) => notFound(`This package has no ${part}`, 'PROOF_NOT_FOUND');
