// Proof of delivery (contract section 19): the assigned driver sends a photo and/or a signature
// (and the recipient's name) while the package is PICKED_UP or IN_TRANSIT; whoever may read the
// package may read the images. A second upload replaces what it sends and keeps the rest (a photo
// first, the signature at the door; or a better photo again), so a part is never lost by omission.
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { AuthContext } from '../../shared/auth-context.js';
import type { Bus } from '../../shared/bus.js';
import type { Clock } from '../../shared/clock.js';
import { badRequest, conflict, notFound } from '../../shared/errors.js';
import type { PackagesRepository } from '../packages/packages.repository.js';
import { packageNotFound, PackageService } from '../packages/packages.service.js';
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
  constructor(
    private readonly deps: {
      repo: ProofRepository;
      packagesRepo: PackagesRepository;
      storage: ProofStorage;
      bus: Bus;
      clock: Clock;
      logger: Logger;
    },
  ) {}

  get storageKind(): ProofStorage['kind'] {
    return this.deps.storage.kind;
  }

  /** Before the body is read: 404 unless the caller is the package's driver, 409 unless PICKED_UP or IN_TRANSIT. */
  async checkUploader(packageId: string, auth: AuthContext): Promise<void> {
    const state = await this.deps.repo.state(packageId);
    if (!state || state.driver_id === null || state.driver_id !== auth.userId) throw packageNotFound();
    if (!UPLOADABLE.includes(state.status)) throw notUploadable(state.status);
  }

  async upload(packageId: string, auth: AuthContext, upload: ProofUpload): Promise<void> {
    if (!upload.photo && !upload.signature && upload.recipientName === undefined) {
      throw badRequest('Send a photo, a signature or both (multipart/form-data fields photo, signature, recipientName)', 'PROOF_EMPTY');
    }
    if (!upload.photo && !upload.signature) throw badRequest('Send a photo or a signature with the recipient name', 'PROOF_EMPTY');
    await this.checkUploader(packageId, auth);
    // Re-encoded one after the other: two decodes at once would double the memory an upload takes.
    const photo = upload.photo ? await encodePhoto(upload.photo) : undefined;
    const signature = upload.signature ? await encodeSignature(upload.signature) : undefined;
    const keyFor = (part: ProofPart, image: EncodedImage) => `proofs/${packageId}/${part}-${randomUUID()}.${image.extension}`;
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
      const replaced = await this.deps.repo.record(packageId, auth.userId, { photoKey, signatureKey, recipientName: upload.recipientName, at: this.deps.clock.now() });
      if (!replaced) {
        // Delivered, failed or handed back while the images were being written.
        await this.checkUploader(packageId, auth);
        throw conflict('The package changed during the upload; try again', 'CONFLICT');
      }
      written.length = 0;
      this.deps.bus.publish('package.proof', { packageId });
      this.forget([replaced.photo, replaced.signature].filter((key): key is string => key !== null));
    } finally {
      if (written.length) this.forget(written);
    }
  }

  /** GET /packages/:id/proof/photo|signature: for whoever may read the package; 404 otherwise or when there is none. */
  async read(packageId: string, auth: AuthContext, part: ProofPart): Promise<StoredObject> {
    const row = await this.deps.packagesRepo.load(packageId);
    if (!row || !PackageService.canSee(row, auth)) throw packageNotFound();
    // A company listing a PENDING package of its country sees no proof (there is none before pickup anyway).
    if (PackageService.viewFor(row, auth) === 'OPEN') throw packageNotFound();
    const key = part === 'photo' ? row.proof_photo_key : row.proof_signature_key;
    const object = key ? await this.deps.storage.get(key) : undefined;
    if (!object) throw proofNotFound(part);
    return object;
  }

  /** Objects no package points to: deleted after the answer, a failure only logged. */
  private forget(keys: string[]): void {
    if (!keys.length) return;
    this.deps.storage.delete(keys).catch((err) => this.deps.logger.warn({ err, keys }, 'deleting replaced proof images failed'));
  }
}

const notUploadable = (status: string) =>
  conflict(`Package is ${status}: proof of delivery is sent while it is PICKED_UP or IN_TRANSIT`, 'INVALID_STATUS_TRANSITION');

const proofNotFound = (part: ProofPart) => notFound(`This package has no ${part}`, 'PROOF_NOT_FOUND');
