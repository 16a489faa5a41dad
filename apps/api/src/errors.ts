import { apiErrors, type ErrorHint } from '@latchkey/contract';

/** The one error type services throw; the error handler turns it into `{ code, message }` (and `hint`). */
export class AppError extends Error {
  /** What would let the request through in development (lib/outbound.ts), answered as `hint`. */
  hint?: ErrorHint;
  constructor(
    readonly statusCode: number,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'AppError';
  }
}

export const badRequest = (message: string = apiErrors.validation) => new AppError(400, message);
export const unauthorized = (message: string = apiErrors.unauthorized) => new AppError(401, message);
export const notFound = (message: string = apiErrors.notFound) => new AppError(404, message);
export const conflict = (message: string) => new AppError(409, message);
