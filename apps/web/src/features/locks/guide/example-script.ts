// The repository's example, served by this portal as a build asset (never inlined), so the guide's command
// can fetch it into a folder of its own.
import exampleScriptPath from '../../../../../../examples/unlock-from-backend.mjs?url&no-inline';

/** Absolute URL of examples/unlock-from-backend.mjs on this origin. */
export const exampleScriptUrl = (origin: string): string => new URL(exampleScriptPath, origin).toString();
