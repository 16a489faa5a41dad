import { request } from '../../../lib/http';

/** The file name the server gives (Content-Disposition), else `fallback`. */
function fileName(res: Response, fallback: string): string {
  const disposition = res.headers.get('content-disposition') ?? '';
  const star = /filename\*=UTF-8''([^;]+)/i.exec(disposition)?.[1];
  if (star) {
    try {
      return decodeURIComponent(star);
    } catch {
      // A malformed name: the fallback below.
    }
  }
  return /filename="?([^";]+)"?/i.exec(disposition)?.[1] ?? fallback;
}

/**
 * Downloads an authenticated CSV: a plain link cannot send the bearer token, so it is fetched through the
 * portal's API client and saved from memory.
 */
export async function downloadCsv(path: string, fallbackName: string): Promise<string> {
  const res = await request(path, { accept: 'text/csv' });
  const blob = await res.blob();
  const name = fileName(res, fallbackName);
  const url = URL.createObjectURL(blob.type ? blob : new Blob([blob], { type: 'text/csv' }));
  const link = document.createElement('a');
  link.href = url;
  link.download = name;
  link.rel = 'noopener';
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 0);
  return name;
}
