// The one transition check, over a kind's table of rules (plain data beside its module). Pure.

export interface TransitionRule<S extends string, A extends string, E extends string> {
  from: readonly S[];
  to: S;
  actors: readonly A[];
  event: E;
}

export type TransitionCheck<E> =
  | { ok: true; event: E }
  /** STATUS: the move does not apply from the current status (409); ACTOR: it does, but not for this actor (403). */
  | { ok: false; reason: 'STATUS' | 'ACTOR' };

export function checkTransition<S extends string, A extends string, E extends string>(
  rules: readonly TransitionRule<S, A, E>[],
  from: S,
  to: S,
  actor: A,
): TransitionCheck<E> {
  const applicable = rules.filter((r) => r.to === to && r.from.includes(from));
  if (!applicable.length) return { ok: false, reason: 'STATUS' };
  const rule = applicable.find((r) => r.actors.includes(actor));
  if (!rule) return { ok: false, reason: 'ACTOR' };
  return { ok: true, event: rule.event };
}
