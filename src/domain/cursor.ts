/**
 * Page cursors of paginated lists (`GET /v1/calls`, `GET /v1/sessions`; docs/api-decisions.md "Sessions").
 *
 * A cursor names the position after the last item of a page: `<list>_<position>`, the
 * position a positive integer below 10^15. Opaque to clients, who only pass back the
 * `next_cursor` they were given; its exact form is published in the API document as a
 * pattern, and every string matching that pattern is a valid cursor (a position past the
 * end simply yields an empty page).
 */
import { ApiError } from './errors.js';

/** A list's cursor codec. */
export interface ListCursor {
  /** What every cursor of this list matches, and nothing else does. */
  readonly pattern: RegExp;
  /** The cursor of position `position` (a positive safe integer). */
  encode(position: number): string;
  /** The position of `cursor`, or null when it does not match {@link ListCursor.pattern}. */
  decode(cursor: string): number | null;
  /**
   * The position of `cursor`.
   * @throws ApiError invalid_request (`param: cursor`) when it is not one this daemon issued.
   */
  parse(cursor: string): number;
}

/** What a cursor that does not match its list's pattern is told. */
export const CURSOR_MESSAGE = 'cursor is not one this daemon issued: pass next_cursor from the previous page';

/** The cursor codec of list `list` (lowercase letters, e.g. `calls`). */
export function listCursor(list: string): ListCursor {
  const pattern = new RegExp(`^${list}_([1-9][0-9]{0,14})$`);
  return {
    pattern,
    encode: (position) => `${list}_${position}`,
    decode(cursor) {
      const m = pattern.exec(cursor);
      return m ? Number(m[1]) : null;
    },
    parse(cursor) {
      const m = pattern.exec(cursor);
      if (!m) throw new ApiError('invalid_request', CURSOR_MESSAGE, { param: 'cursor' });
      return Number(m[1]);
    },
  };
}

/** Cursors of `GET /v1/calls`. */
export const CALLS_CURSOR = listCursor('calls');

/** Cursors of `GET /v1/sessions`. */
export const SESSIONS_CURSOR = listCursor('sessions');
