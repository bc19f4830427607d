// The customer app's small pieces: its name, minutes in words.
export { PageTitle as Title } from '../shared/ui';

export const BRAND = 'Rides';

export const minutes = (seconds: number) => `${Math.max(1, Math.round(seconds / 60))} min`;
