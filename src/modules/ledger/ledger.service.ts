// The ledger (contract section 21): posts balanced transactions, once per source key, in the
// caller's database transaction, and answers balances. docs/money.md has the model.
import { randomUUID } from 'node:crypto';
import type { Kysely, Transaction } from 'kysely';
import { LRUCache } from 'lru-cache';
import type { Database } from '../../db/schema.js';
import type { LedgerAccountKind, PartyAccountKind } from '../../db/tables/ledger.js';
import type { Clock } from '../../shared/clock.js';
import type { Cursor } from '../../shared/pagination.js';
import { AppError } from '../../shared/errors.js';
import {
  LedgerRepository,
  type AccountBalanceRow,
  type AccountRow,
  type EntryRow,
  type Executor,
} from './ledger.repository.js';
import {
  assertAccountRef,
  assertCurrency,
  checkTransaction,
  type AccountRef,
  type EntryCode,
  type TransactionInput,
} from './postings.js';

export interface LedgerAccount {
  id: string;
  kind: LedgerAccountKind;
  partyId: string | null;
  currency: string;
  /** What the operator owes the party, in minor units (negative: the party owes the operator). */
  balance: number;
}

export interface PostedEntry {
  accountId: string;
  amount: number;
  code: EntryCode;
}

export interface PostedTransaction {
  id: string;
  sourceKey: string;
  currency: string;
  entries: PostedEntry[];
  /** True when the source key was booked before (by this content): nothing was booked now. */
  replayed: boolean;
}

/**
 * The kinds whose balance is kept in the account's row, which a posting locks: a driver's is checked
 * against at settlement (what the driver owes, exactly) and none of them takes more than a few
 * postings a second. The others (a business's, which every ACCOUNT and cash-on-delivery job of that
 * business names, and the operator's, named by nearly every posting) take their changes as appended
 * deltas, so that postings do not queue on their rows (docs/money.md).
 */
const IN_ROW_KINDS: readonly LedgerAccountKind[] = ['DRIVER', 'CUSTOMER'];

/** One key per account a ref names: the order accounts are created in (see insertAccounts). */
const refKey = (currency: string, ref: AccountRef) =>
  'accountId' in ref
    ? `id:${ref.accountId}`
    : 'partyId' in ref
      ? `party:${ref.partyId}:${currency}`
      : `operator:${ref.kind}:${currency}`;

/** An entry list in a canonical order, to tell a replay from a different transaction under the same key. */
const canonical = (currency: string, entries: { account_id: string; amount: number; code: string }[]) =>
  currency +
  '|' +
  entries
    .map((e) => `${e.account_id}:${e.code}:${e.amount}`)
    .sort()
    .join(',');

const toAccount = (row: AccountBalanceRow): LedgerAccount => ({
  id: row.id,
  kind: row.kind,
  partyId: row.party_id,
  currency: row.currency.trim(),
  balance: Number(row.balance),
});

/** How many accounts an instance remembers (the ids of the accounts postings name, by party or purpose). */
const KNOWN_ACCOUNTS_MAX = 100_000;

export class LedgerService {
  private readonly db: Kysely<Database>;
  private readonly clock: Clock;
  private readonly repo: LedgerRepository;
  /**
   * Accounts seen committed, by refKey: an account is never deleted and never changes its kind,
   * party or currency, so a posting naming one the instance has seen skips looking it up. Only rows
   * written by committed transactions are remembered: one opened in a transaction that then rolled
   * back must not be. (`committed` compares a row's xmin with the top-level transaction's id: an
   * account opened inside a savepoint would read as committed. Nothing here uses savepoints; a
   * caller that does must not post inside one. bookNew checks every account exists anyway.)
   */
  private readonly known = new LRUCache<string, AccountRow>({ max: KNOWN_ACCOUNTS_MAX });

  constructor(deps: { db: Kysely<Database>; clock: Clock; repo: LedgerRepository }) {
    this.db = deps.db;
    this.clock = deps.clock;
    this.repo = deps.repo;
  }

  /**
   * Books one transaction in `executor`'s database transaction (or a transaction of its own when
   * given the database): call it with the transaction of the event that causes it, so both commit
   * or neither does. The same source key with the same entries again books nothing and returns
   * the first (replayed); with other entries it is 409 LEDGER_SOURCE_KEY_CONFLICT.
   */
  async post(executor: Executor, input: TransactionInput): Promise<PostedTransaction> {
    const [posted] = await this.postMany(executor, [input]);
    return posted!;
  }

  /**
   * Books several transactions with the same few statements as one (a payout batch, or a job's
   * completion with its cash on delivery: one call per database transaction keeps the locks in one
   * order). Either all are booked (or replayed) or, on an error, none.
   */
  async postMany(executor: Executor, inputs: TransactionInput[]): Promise<PostedTransaction[]> {
    const seen = new Set<string>();
    for (const input of inputs) {
      checkTransaction(input);
      if (seen.has(input.sourceKey))
        throw new AppError(
          400,
          'LEDGER_DUPLICATE_SOURCE_KEY',
          `Source key ${input.sourceKey} appears twice in one posting`,
        );
      seen.add(input.sourceKey);
    }
    if (!inputs.length) return [];
    if (executor.isTransaction) return this.book(executor, inputs);
    return executor.transaction().execute((trx) => this.book(trx, inputs));
  }

  private async book(trx: Executor, inputs: TransactionInput[]): Promise<PostedTransaction[]> {
    const now = this.clock.now();
    const accounts = await this.resolveAccounts(trx, inputs, now);
    const resolved = inputs.map((input) => {
      const entries: EntryRow[] = input.entries.map((e) => ({
        transaction_id: '',
        account_id: accounts.get(refKey(input.currency, e.account))!.id,
        amount: e.amount,
        code: e.code,
      }));
      return { input, id: randomUUID(), entries };
    });

    // Keys in a fixed order too (bookNew inserts them sorted by the database's collation, as every
    // posting does): two batches sharing keys wait for each other, never in a circle.
    const kindOf = new Map([...accounts.values()].map((a) => [a.id, a.kind]));
    const { booked: inserted, accountsExist } = await this.repo.bookNew(trx, {
      transactions: resolved.map((r) => ({
        id: r.id,
        source_key: r.input.sourceKey,
        currency: r.input.currency,
        memo: r.input.memo ?? null,
      })),
      entries: resolved.flatMap((r) =>
        r.entries.map((e) => ({ ...e, transaction_id: r.id, inRow: IN_ROW_KINDS.includes(kindOf.get(e.account_id)!) })),
      ),
      now,
    });
    if (!accountsExist) {
      // Only a remembered account can be missing (a database restored to an earlier point, say):
      // forget them all, and fail the caller's transaction rather than book to an account that is gone.
      this.known.clear();
      throw new Error(
        'Ledger posting names an account that does not exist: the remembered accounts were dropped; retry',
      );
    }

    const replays = resolved.filter((r) => !inserted.has(r.input.sourceKey));
    const replayed = new Map<string, { id: string; entries: EntryRow[] }>();
    if (replays.length) {
      const existing = await this.repo.transactionsByKey(
        trx,
        replays.map((r) => r.input.sourceKey),
      );
      const entries = await this.repo.entriesOf(
        trx,
        existing.map((t) => t.id),
      );
      for (const r of replays) {
        const tx = existing.find((t) => t.source_key === r.input.sourceKey)!;
        const txEntries = entries.filter((e) => e.transaction_id === tx.id);
        if (canonical(tx.currency.trim(), txEntries) !== canonical(r.input.currency, r.entries)) {
          throw new AppError(
            409,
            'LEDGER_SOURCE_KEY_CONFLICT',
            `Source key ${r.input.sourceKey} was booked before with other entries`,
          );
        }
        replayed.set(r.input.sourceKey, { id: tx.id, entries: txEntries });
      }
    }

    return resolved.map((r) => {
      const before = replayed.get(r.input.sourceKey);
      const source = before ?? { id: r.id, entries: r.entries };
      return {
        id: source.id,
        sourceKey: r.input.sourceKey,
        currency: r.input.currency,
        entries: source.entries.map((e) => ({
          accountId: e.account_id,
          amount: Number(e.amount),
          code: e.code as EntryCode,
        })),
        replayed: before !== undefined,
      };
    });
  }

  /** Every account the inputs name, created (in one order) where a party or operator account is new. */
  private async resolveAccounts(
    trx: Executor,
    inputs: TransactionInput[],
    now: Date,
  ): Promise<Map<string, AccountRow>> {
    const wanted = new Map<string, { currency: string; ref: AccountRef }>();
    for (const input of inputs)
      for (const e of input.entries)
        wanted.set(refKey(input.currency, e.account), { currency: input.currency, ref: e.account });

    const found = new Map<string, AccountRow>();
    for (const key of wanted.keys()) {
      const account = this.known.get(key);
      if (account) found.set(key, account);
    }
    const lookUp = async () => {
      const groups = new Map<string, { currency: string; parties: string[]; operators: LedgerAccountKind[] }>();
      const ids: string[] = [];
      for (const [key, { currency, ref }] of wanted) {
        if (found.has(key)) continue;
        if ('accountId' in ref) {
          ids.push(ref.accountId);
          continue;
        }
        const group = groups.get(currency) ?? { currency, parties: [], operators: [] };
        groups.set(currency, group);
        if ('partyId' in ref) group.parties.push(ref.partyId);
        else group.operators.push(ref.kind);
      }
      if (!ids.length && !groups.size) return;
      for (const { committed, ...row } of await this.repo.findAccounts(trx, { ids, groups: [...groups.values()] })) {
        const account = { ...row, currency: row.currency.trim() };
        const keys = [
          `id:${row.id}`,
          row.party_id ? `party:${row.party_id}:${account.currency}` : `operator:${row.kind}:${account.currency}`,
        ];
        for (const key of keys) {
          found.set(key, account);
          if (committed) this.known.set(key, account);
        }
      }
    };

    await lookUp();
    const missing = [...wanted].filter(([key]) => !found.has(key));
    if (missing.length) {
      const unknownId = missing.find(([, w]) => 'accountId' in w.ref);
      if (unknownId)
        throw new AppError(
          404,
          'LEDGER_ACCOUNT_NOT_FOUND',
          `Ledger account ${(unknownId[1].ref as { accountId: string }).accountId} not found`,
        );
      await this.checkParties(
        trx,
        missing.map(([, w]) => w.ref),
      );
      const rows: AccountRow[] = missing
        .sort(([a], [b]) => (a < b ? -1 : 1))
        .map(([, { currency, ref }]) => {
          const { kind } = ref as { kind: LedgerAccountKind };
          return { id: randomUUID(), kind, party_id: 'partyId' in ref ? ref.partyId : null, currency };
        });
      await this.repo.insertAccounts(trx, rows, now);
      await lookUp();
    }

    for (const [key, { currency, ref }] of wanted) {
      const account = found.get(key)!;
      if (account.currency !== currency) {
        throw new AppError(
          400,
          'LEDGER_CURRENCY_MISMATCH',
          `Ledger account ${account.id} holds ${account.currency}, not ${currency}`,
        );
      }
      if ('kind' in ref && ref.kind !== account.kind) {
        throw new AppError(
          400,
          'LEDGER_PARTY_KIND_MISMATCH',
          `The account of party ${account.party_id} is a ${account.kind} account, not ${ref.kind}`,
        );
      }
    }
    return found;
  }

  /** A party account is opened only for an existing user of the matching role. */
  private async checkParties(trx: Executor, refs: AccountRef[]): Promise<void> {
    const parties = refs.filter((r): r is { kind: PartyAccountKind; partyId: string } => 'partyId' in r);
    if (!parties.length) return;
    const roles = new Map(
      (await this.repo.userRoles(trx, [...new Set(parties.map((p) => p.partyId))])).map((u) => [u.id, u.role]),
    );
    for (const p of parties) {
      const role = roles.get(p.partyId);
      if (!role)
        throw new AppError(404, 'LEDGER_PARTY_NOT_FOUND', `No user ${p.partyId} to open a ${p.kind} account for`);
      if (role !== p.kind)
        throw new AppError(400, 'LEDGER_PARTY_KIND_MISMATCH', `User ${p.partyId} is a ${role}, not a ${p.kind}`);
    }
  }

  /** The account of a party or operator purpose in a currency, opened if it does not exist yet. */
  async account(executor: Executor, currency: string, ref: AccountRef): Promise<LedgerAccount> {
    assertCurrency(currency);
    assertAccountRef(ref);
    const run = async (trx: Executor) => {
      const accounts = await this.resolveAccounts(
        trx,
        [{ sourceKey: '-', currency, entries: [{ account: ref, amount: 0, code: 'EARNINGS' }] }],
        this.clock.now(),
      );
      return (await this.repo.accountWithBalance(trx, { id: accounts.get(refKey(currency, ref))!.id }))!;
    };
    if (executor.isTransaction) return toAccount(await run(executor));
    const account = toAccount(await executor.transaction().execute(run));
    // Committed by now (its own transaction): remembered like any account read committed.
    this.known.set(refKey(currency, ref), {
      id: account.id,
      kind: account.kind,
      party_id: account.partyId,
      currency: account.currency,
    });
    return account;
  }

  /** An account's balance; 0 for a party or purpose that has no account in that currency yet. */
  async balance(currency: string, ref: AccountRef, executor: Executor = this.db): Promise<number> {
    assertCurrency(currency);
    assertAccountRef(ref);
    const where =
      'accountId' in ref
        ? { id: ref.accountId }
        : 'partyId' in ref
          ? { currency, partyId: ref.partyId }
          : { currency, kind: ref.kind };
    const row = await this.repo.accountWithBalance(executor, where);
    if (!row && 'accountId' in ref)
      throw new AppError(404, 'LEDGER_ACCOUNT_NOT_FOUND', `Ledger account ${ref.accountId} not found`);
    return row ? Number(row.balance) : 0;
  }

  async balances(
    filter: { currency?: string; nonZero?: boolean } = {},
    executor: Executor = this.db,
  ): Promise<LedgerAccount[]> {
    return (await this.repo.balances(executor, filter)).map(toAccount);
  }

  /** Accounts with a non-zero balance, newest first, with their party's name (GET /admin/balances). */
  async nonZeroBalances(filter: { currency?: string; before?: Cursor; limit: number }, executor: Executor = this.db) {
    return (await this.repo.nonZeroPage(executor, filter)).map((row) => ({
      ...toAccount(row),
      name: row.name,
      createdAt: row.created_at,
    }));
  }

  /**
   * Books the PAYOUT transaction of each line of a batch the caller has just inserted in `trx`,
   * holding its parties' account rows locked (PayoutService). Set-based: see the repository.
   */
  async bookPayoutBatch(
    trx: Transaction<Database>,
    batchId: string,
    currency: string,
  ): Promise<{ lines: number; total: number }> {
    const clearing = await this.account(trx, currency, { kind: 'PAYOUTS_CLEARING' });
    return this.repo.bookPayoutLines(trx, { batchId, currency, clearingId: clearing.id, now: this.clock.now() });
  }

  /** Marks a batch's open lines paid and books their PAYOUT_PAID transactions, in `trx`. */
  async bookPayoutBatchPaid(
    trx: Transaction<Database>,
    batchId: string,
    currency: string,
  ): Promise<{ lines: number; total: number }> {
    const clearing = await this.account(trx, currency, { kind: 'PAYOUTS_CLEARING' });
    const bank = await this.account(trx, currency, { kind: 'OPERATOR_BANK' });
    return this.repo.bookPayoutLinesPaid(trx, {
      batchId,
      currency,
      clearingId: clearing.id,
      bankId: bank.id,
      now: this.clock.now(),
    });
  }

  /** The sum of all balances per currency: 0 for each when the books are right (an operator's check). */
  async trialBalance(executor: Executor = this.db): Promise<{ currency: string; total: number; accounts: number }[]> {
    return (await this.repo.trialBalance(executor)).map((r) => ({
      currency: r.currency.trim(),
      total: Number(r.total),
      accounts: r.accounts,
    }));
  }

  /** Folds the pending deltas (businesses' and the operator's) into their balances; returns how many it folded. */
  async rollUp(): Promise<number> {
    return this.db.transaction().execute((trx) => this.repo.rollUpDeltas(trx));
  }
}
