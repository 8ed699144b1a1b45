/**
 * Text from callers and the daemon made safe to draw: a caller's words (what the recogniser
 * heard, what was typed) reach the dashboard in events, and a control character or an escape
 * sequence in them must not reach the terminal, where it would move the cursor, change colours
 * or the window title (ECMA-48 control functions), or reorder what is shown (Unicode bidi
 * controls, UAX #9).
 */

/** C0 controls, DEL, C1 controls, and the Unicode bidi embedding, override and isolate controls. */
// eslint-disable-next-line no-control-regex -- these are the characters it finds
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;

/**
 * `text` with every control character shown rather than acted on: C0 controls and DEL as their
 * Unicode control pictures (ESC as `␛`, line feed as `␊`, tab as `␉`; U+2400–U+2421, "Control
 * Pictures"), C1 controls as `\x9b`, bidi controls as `\u202e`. Other text is left as it is.
 */
export function printable(text: string): string {
  return text.replace(UNSAFE, (ch) => {
    const c = ch.charCodeAt(0);
    if (c < 0x20) return String.fromCharCode(0x2400 + c);
    if (c === 0x7f) return '\u2421';
    if (c <= 0x9f) return `\\x${c.toString(16)}`;
    return `\\u${c.toString(16)}`;
  });
}
