/**
 * Text from callers and the daemon made safe to draw: a caller's words (what the recogniser
 * heard, what was typed) reach the dashboard in events, and a control character or an escape
 * sequence in them must not reach the terminal, where it would move the cursor, change colours
 * or the window title (ECMA-48 control functions), or reorder what is shown (Unicode bidi
 * controls, UAX #9). The characters are the CLI's (`UNPRINTABLE` in ../output.ts); only how a
 * C0 control or DEL is shown differs, as one column each in a table cell.
 */
import { printable as escaped, UNPRINTABLE } from '../output.js';

/**
 * `text` with every control character shown rather than acted on: C0 controls and DEL as their
 * Unicode control pictures (ESC as `␛`, line feed as `␊`, tab as `␉`; U+2400–U+2421, "Control
 * Pictures"), the others as the CLI escapes them (`\x9b`, `\u202e`). Other text is left as it is.
 */
export function printable(text: string): string {
  return text.replace(UNPRINTABLE, (ch) => {
    const c = ch.charCodeAt(0);
    if (c < 0x20) return String.fromCharCode(0x2400 + c);
    if (c === 0x7f) return '\u2421';
    return escaped(ch);
  });
}
