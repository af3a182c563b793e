/**
 * Phrases that ask an agent to look at a picture: "look at the curves", "check the curves against the plotted data",
 * "inspect the figure", "visually confirm". A model without image input cannot do what they ask (reading a PNG
 * answers "This model does not support image input"), so where the served model takes no images, `mass tasks
 * validate` flags them in team designs and task texts.
 *
 * Looking verbs (look at, view, inspect, eyeball, see in) flag any picture noun, curves included; checking verbs
 * (check, compare, verify, examine, read, assess, confirm) flag only nouns that are pictures (plot, plotted, figure,
 * chart, graph, image, PNG). "Visual" and "visually" always flag. File names are left out first (`plots/fit.png` is
 * a deliverable, not a request to look), and a clause that writes (write, save, draw, produce…) asks for a plot, not
 * a look at one.
 */
const LOOKING = String.raw`look(?:s|ing)?\s+(?:at|over)|view(?:s|ing)?|inspect\w*|eyeball\w*|see(?:s|ing)?\s+(?:in|on|from)`;
const CHECKING = String.raw`check\w*|compar\w*|verif\w*|examin\w*|read(?:s|ing)?|assess\w*|confirm\w*`;
const PICTURES = String.raw`plots?|plotted|figures?|charts?|graphs?|images?|pngs?|pictures?|visuali[sz]ations?`;
const ANY_PICTURE = String.raw`${PICTURES}|curves?|traces?|histograms?|panels?`;
const GAP = String.raw`[^.;:!?\n]{0,60}?`;

const PATTERNS = [
  new RegExp(String.raw`\b(?:${LOOKING})\b${GAP}\b(?:${ANY_PICTURE})\b`, 'gi'),
  new RegExp(String.raw`\b(?:${CHECKING})\b${GAP}\b(?:${PICTURES})\b`, 'gi'),
  /\bvisual(?:ly)?\b[^.;:!?\n]{0,40}/gi,
];
const WRITING =
  /\b(write|writes|save|saves|draw|draws|produce|produces|create|creates|generate|generates|make|makes|render|renders)\b/i;
const FILE_NAME = /[\w.\-/]*(?:\/|\.(?:png|svg|pdf|jpe?g)\b)[\w.\-/]*/gi;

/** The phrases of `text` that ask for a visual check, as written (file names left out). */
export function visualCheckPhrases(text: string): string[] {
  const plain = text.replace(FILE_NAME, 'FILE');
  const phrases = PATTERNS.flatMap((pattern) =>
    [...plain.matchAll(pattern)].map((match) => match[0].trim()).filter((phrase) => !writes(phrase)),
  );
  return [...new Set(phrases)];
}

/** A clause that makes a plot ("write … plots", "save the figure") rather than looking at one. */
function writes(phrase: string): boolean {
  const words = phrase.split(/\s+/);
  return words.slice(1).some((word) => WRITING.test(word)) && !/^visual/i.test(phrase);
}
