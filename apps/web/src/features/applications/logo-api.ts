import { checkLogoFile, deriveLogoUrl, logoUploadResponseSchema } from '@latchkey/contract';
import { useCallback, useState } from 'react';
import { usePortalConfig } from '../../lib/config';
import { ApiError, request } from '../../lib/http';

export async function requestLogoUploadUrl(id: string, contentType: string): Promise<string> {
  const res = await request(`/platform/application/${encodeURIComponent(id)}/logo`, {
    method: 'POST',
    body: { contentType },
  });
  return logoUploadResponseSchema.parse(await res.json()).uploadUrl;
}

/** PUT via XMLHttpRequest because fetch reports no upload progress. */
export function putFile(url: string, file: File, onProgress: (fraction: number) => void): Promise<void> {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open('PUT', url);
    xhr.setRequestHeader('Content-Type', file.type);
    xhr.upload.onprogress = (e) => {
      if (e.lengthComputable) onProgress(e.loaded / e.total);
    };
    xhr.onload = () => {
      if (xhr.status >= 200 && xhr.status < 300) resolve();
      else reject(new ApiError(xhr.status, xhr.statusText || 'Upload failed'));
    };
    xhr.onerror = () => reject(new ApiError(0, 'Upload failed'));
    xhr.send(file);
  });
}

export class LogoFileError extends Error {}

/**
 * Logo upload up to the derived logoUrl: check the file, get an upload URL for its type,
 * PUT the bytes, swap the upload host for the CDN host. Saving the logoUrl is the caller's choice
 * (the card saves at once, the wizard with its last step).
 */
export function useLogoUpload(appId: string) {
  const config = usePortalConfig();
  const [progress, setProgress] = useState<number | null>(null);

  const upload = useCallback(
    async (file: File): Promise<string> => {
      const problem = checkLogoFile(file);
      if (problem) throw new LogoFileError(problem);
      if (!config.data) throw new Error('Configuration not loaded');
      setProgress(0);
      try {
        const uploadUrl = await requestLogoUploadUrl(appId, file.type);
        await putFile(uploadUrl, file, setProgress);
        return deriveLogoUrl(uploadUrl, config.data);
      } finally {
        setProgress(null);
      }
    },
    [appId, config.data],
  );

  return { upload, progress, uploading: progress !== null };
}
