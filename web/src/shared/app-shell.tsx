// The installed apps' frame (the driver's and the customer's): the top bar with the app's name, its
// tabs and "Sign out", the signed-out pages' bar, and the browser's online state.
import { useSyncExternalStore, type ReactNode } from 'react';

export function PublicShell({ brand, children }: { brand: string; children: ReactNode }) {
  return (
    <>
      <header className="topbar">
        <span className="brand">{brand}</span>
      </header>
      <main id="main">{children}</main>
    </>
  );
}

/** `brand` may be left out where the tabs need the whole width of a phone. */
export function AppHeader<T extends string>({
  brand,
  tabs,
  current,
  onTab,
  onSignOut,
}: {
  brand?: string;
  tabs: { id: T; label: string }[];
  current: T;
  onTab: (tab: T) => void;
  onSignOut: () => void;
}) {
  return (
    <header className="topbar">
      {brand && <span className="brand">{brand}</span>}
      <nav aria-label="Main">
        <ul>
          {tabs.map((t) => (
            <li key={t.id}>
              <button
                type="button"
                className="tab"
                aria-current={current === t.id ? 'page' : undefined}
                onClick={() => onTab(t.id)}
              >
                {t.label}
              </button>
            </li>
          ))}
        </ul>
      </nav>
      <button type="button" className="secondary signout" onClick={onSignOut}>
        Sign out
      </button>
    </header>
  );
}

export function useBrowserOnline(): boolean {
  return useSyncExternalStore(
    (notify) => {
      window.addEventListener('online', notify);
      window.addEventListener('offline', notify);
      return () => {
        window.removeEventListener('online', notify);
        window.removeEventListener('offline', notify);
      };
    },
    () => navigator.onLine,
  );
}
