/**
 * A file name as a directory holds it: bytes. Linux allows any bytes but `/` and NUL, so a name an agent wrote need
 * not be UTF-8; read as a JS string it would silently become another name (each bad byte a U+FFFD) that opens nothing
 * or something else. A name is used as text only when it is UTF-8; otherwise it is shown with its bad bytes escaped.
 */
export interface FileNameText {
  /** The name, or for a name that is not UTF-8 the name with every byte outside a valid sequence written `%XX`. */
  text: string;
  utf8: boolean;
}

// `ignoreBOM`: a leading byte-order mark is part of the name, never dropped (`\uFEFFmetrics.json` is not `metrics.json`).
const strict = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

export function fileNameText(name: Buffer): FileNameText {
  try {
    return { text: strict.decode(name), utf8: true };
  } catch {
    return { text: escapeInvalidBytes(name), utf8: false };
  }
}

/** Valid sequences as their characters, every other byte (and `%` itself) as `%XX`, so the text is unambiguous. */
function escapeInvalidBytes(name: Buffer): string {
  let text = '';
  let index = 0;
  while (index < name.length) {
    const length = validSequenceLength(name, index);
    if (length === 0) {
      text += `%${name[index]!.toString(16).toUpperCase().padStart(2, '0')}`;
      index += 1;
      continue;
    }
    const character = name.subarray(index, index + length).toString('utf8');
    text += character === '%' ? '%25' : character;
    index += length;
  }
  return text;
}

/** The length of the valid UTF-8 sequence at `start`, or 0 when none starts there. */
function validSequenceLength(bytes: Buffer, start: number): number {
  for (let length = 1; length <= 4 && start + length <= bytes.length; length++) {
    try {
      strict.decode(bytes.subarray(start, start + length));
      return length;
    } catch {
      // a longer sequence may still be valid
    }
  }
  return 0;
}
