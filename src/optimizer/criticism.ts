/**
 * Whether a clause of a judge's rationale names a shortcoming or a demand. Deterministic word cues, written for the
 * way judges phrase a verdict: a failure or a demand ("lacks", "would not reproduce", "should", "flags no stale
 * assets", "claims … that its numbers contradict"), or a hazard of the task that was not avoided ("trades the leaking
 * feature"). Praise that merely names a hazard ("builds its weights without stale assets", "excludes the leaking
 * feature") is not a criticism.
 */

const FAILURE = new RegExp(
  [
    String.raw`\b(?:should|must|needs?\b|needed|(?:is|are|was|were|be) required|missing|lacks?|lacked|lacking|absent|neither\b|nor\b`,
    String.raw`fail(?:s|ed|ing|ure)?|never|cannot|\w+n['’]t\b|omit(?:s|ted|ting)?|incomplete|unverified|unsupported`,
    String.raw`inconsistent|mismatch(?:es|ed)?|contradict\w*|incorrect|wrong|invalid|errors?\b|crash(?:es|ed)?`,
    String.raw`only partially|no longer|miss(?:es|ed)\b|ignor(?:es|ed|ing)|overlook\w*|biased|overstat\w*`,
    String.raw`understat\w*|unjustified|unexplained|unclear|hard-?coded|typed in|by hand|too (?:optimistic|few|short|low|high)`,
    String.raw`(?:an? )?(?:earlier|previous|older) run|out of date|outdated`,
    String.raw`(?:is|are|was|were|does|do|did|has|have|had|would|could|will|can|may|might)\s+not\b`,
    String.raw`not (?:provided|included|reported|produced|saved|run|verified|found|present|reproducible|justified|explained|addressed|applied|tested|checked)`,
    String.raw`only (?:reports?|gives?|provides?|uses?|tests?|checks?|evaluates?|shows?|tunes?|fits?|considers?|on the nominal))\b`,
  ].join('|'),
  'i',
);

const HAZARD_WORDS = String.raw`leak\w*|look-?ahead|future (?:data|flows|information|returns)|stale|misprint\w*|bad ticks?|confound\w*|in-sample|overfit\w*|tamper\w*|edit(?:s|ed)? (?:the )?(?:protected|simulator|sim/)|post-treatment|decoy|spurious|outliers?`;
const HAZARD = new RegExp(String.raw`\b(?:${HAZARD_WORDS})`, 'i');
/** "no" after a verb of finding or reporting is a failure ("flags no stale assets"). */
const FINDING_NO =
  /\b(?:flags?|flagged|finds?|found|detects?|detected|identif(?:ies|ied|y)|catch(?:es)?|caught|lists?|listed|notes?|noted|mentions?|mentioned|reports?|reported|gives?|gave|provides?|provided|offers?|states?|stated|includes?|included|shows?|showed|produces?|produced|writes?|wrote|saves?|saved|runs?|ran)\s+no\b/i;
/**
 * "no", "without", "instead of" before an ordinary noun are failures ("has no ablation", "without a holdout", "the
 * sample covariance instead of a shrunk one"); before a hazard they are praise ("uses no leaking feature", "without
 * stale assets", "instead of the in-sample optimum").
 */
const ABSENCE = new RegExp(
  String.raw`\b(?:no(?!\s+(?:doubt|question)\b)|without|instead of|rather than)\b(?!\s+(?:\S+\s+){0,2}?(?:${HAZARD_WORDS}))`,
  'i',
);
/** A hazard named as what was avoided or dealt with. */
const AVOIDED = new RegExp(
  String.raw`\b(?:without|no|not|never|excluding|free of|rather than|instead of)\s+(?:\S+\s+){0,2}?(?:${HAZARD_WORDS})` +
    String.raw`|\b(?:exclud|drop|remov|flag|avoid|reject|refus|detect|identif|catch|caught|correct|repair|fix|handl|guard|filter|discard|screen|down-?weight|clean|lag)\w*`,
  'i',
);
/** A hazard that the work did not use: "does not trade the leaking feature", "never edits the simulator". */
const NEGATED_USE =
  /\b(?:not|n['’]t|never)\s+(?:\w+ly\s+)?(?:use[sd]?|trade[sd]?|traded|load(?:s|ed)?|includ(?:e|es|ed)|rel(?:y|ies|ied) on|touch(?:es|ed)?|edit(?:s|ed)?|modif(?:y|ies|ied)|chang(?:e|es|ed)|tamper\w*|peek\w*)\b/i;

export function isCriticism(clause: string): boolean {
  if (HAZARD.test(clause) && NEGATED_USE.test(clause)) return false;
  if (FAILURE.test(clause) || FINDING_NO.test(clause) || ABSENCE.test(clause)) return true;
  return HAZARD.test(clause) && !AVOIDED.test(clause);
}
