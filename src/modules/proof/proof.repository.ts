// Kysely for proof of delivery: the package's proof columns, and the images themselves when
// PostgreSQL keeps them (PostgresProofStorage, the default).
import type { Transaction } from 'kysely';
import type { DB } from '../../db/database.js';
import type { Executor } from '../../db/executor.js';
import type { Database } from '../../db/schema.js';
import type { Clock } from '../../shared/clock.js';
import type { ProofStorage, StoredObject } from './proof-storage.js';

export interface ProofState {
  id: string;
  status: string;
  driver_id: string | null;
  proof_photo_key: string | null;
  proof_signature_key: string | null;
}

export class ProofRepository {
  constructor(private readonly db: DB) {}

  /** What an upload needs to know first: whose package it is, its status, the keys it points to. */
  state(db: Executor, packageId: string): Promise<ProofState | undefined> {
    return db
      .selectFrom('packages')
      .select(['id', 'status', 'driver_id', 'proof_photo_key', 'proof_signature_key'])
      .where('id', '=', packageId)
      .executeTakeFirst();
  }

  /**
   * Points the package at the new images, only while `driverId` holds it PICKED_UP or IN_TRANSIT
   * (the row locked in `trx`: a delivery in between wins). Returns the keys it replaced, or
   * undefined when the package was not in that state any more.
   */
  async record(
    trx: Transaction<Database>,
    packageId: string,
    driverId: string,
    proof: { photoKey?: string; signatureKey?: string; recipientName?: string; at: Date },
  ): Promise<{ photo: string | null; signature: string | null } | undefined> {
    const before = await trx
      .selectFrom('packages')
      .select(['proof_photo_key', 'proof_signature_key'])
      .where('id', '=', packageId)
      .where('driver_id', '=', driverId)
      .where('status', 'in', ['PICKED_UP', 'IN_TRANSIT'])
      .forUpdate()
      .executeTakeFirst();
    if (!before) return undefined;
    await trx
      .updateTable('packages')
      .set({
        ...(proof.photoKey ? { proof_photo_key: proof.photoKey } : {}),
        ...(proof.signatureKey ? { proof_signature_key: proof.signatureKey } : {}),
        ...(proof.recipientName !== undefined ? { proof_recipient_name: proof.recipientName } : {}),
        proof_at: proof.at,
        updated_at: proof.at,
      })
      .where('id', '=', packageId)
      .execute();
    return {
      photo: proof.photoKey ? before.proof_photo_key : null,
      signature: proof.signatureKey ? before.proof_signature_key : null,
    };
  }

  /** For a read: the key of that image, if the package has one. */
  async keyOf(packageId: string, kind: 'photo' | 'signature'): Promise<string | null | undefined> {
    const row = await this.db
      .selectFrom('packages')
      .select(['proof_photo_key', 'proof_signature_key'])
      .where('id', '=', packageId)
      .executeTakeFirst();
    if (!row) return undefined;
    return kind === 'photo' ? row.proof_photo_key : row.proof_signature_key;
  }
}

/** The images in PostgreSQL (table proof_objects, migration 0022): every instance reads them. */
export class PostgresProofStorage implements ProofStorage {
  readonly kind = 'postgres' as const;

  constructor(
    private readonly db: DB,
    private readonly clock: Clock,
  ) {}

  async put(key: string, data: Buffer, contentType: string): Promise<void> {
    await this.db
      .insertInto('proof_objects')
      .values({ key, content_type: contentType, data, created_at: this.clock.now() })
      .execute();
  }

  async get(key: string): Promise<StoredObject | undefined> {
    const row = await this.db
      .selectFrom('proof_objects')
      .select(['content_type', 'data'])
      .where('key', '=', key)
      .executeTakeFirst();
    return row ? { data: Buffer.from(row.data), contentType: row.content_type } : undefined;
  }

  async delete(keys: string[]): Promise<void> {
    if (keys.length) await this.db.deleteFrom('proof_objects').where('key', 'in', keys).execute();
  }
}
