/** Spec §2: the Added column shows dd/mm/yyyy from epoch seconds (×1000), in the viewer's time zone. */
export function formatAdded(epochSeconds: number): string {
  const d = new Date(epochSeconds * 1000);
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${pad(d.getDate())}/${pad(d.getMonth() + 1)}/${d.getFullYear()}`;
}
