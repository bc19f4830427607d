// Months of invoices, in UTC (contract section 21). Pure.

export interface Month {
  /** 'YYYY-MM' */
  month: string;
  /** 'YYYY-MM-01', the date column's value. */
  monthStart: string;
  start: Date;
  /** Exclusive: the first instant of the next month. */
  end: Date;
}

export const MONTH_PATTERN = '^[0-9]{4}-(0[1-9]|1[0-2])$';

export function parseMonth(month: string): Month {
  const [year, mon] = month.split('-').map(Number) as [number, number];
  const start = new Date(Date.UTC(year, mon - 1, 1));
  const end = new Date(Date.UTC(year, mon, 1));
  return { month, monthStart: `${month}-01`, start, end };
}

/** The month an instant falls in, UTC. */
export function monthOf(at: Date): string {
  return `${String(at.getUTCFullYear()).padStart(4, '0')}-${String(at.getUTCMonth() + 1).padStart(2, '0')}`;
}

/** The month before `month`. */
export function previousMonth(month: string): string {
  const { start } = parseMonth(month);
  return monthOf(new Date(start.getTime() - 1));
}
