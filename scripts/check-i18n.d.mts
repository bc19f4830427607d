// Types of scripts/check-i18n.mjs for the tests.
export interface CatalogSpec {
  name: string;
  dir: string;
  sources: string[];
}
export const CATALOGS: CatalogSpec[];
export const LOCALES: string[];
export const CONVERTED: string[];
/** Problems with the catalogs (missing, extra, unused keys; arguments that differ), as lines. */
export function checkCatalogs(base?: string, catalogs?: CatalogSpec[]): string[];
/** User-facing text outside the catalog in the converted files, as lines. */
export function checkConverted(base?: string, files?: string[]): string[];
