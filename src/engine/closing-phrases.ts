/**
 * The phrase lists of the closing rule (closing.ts; docs/agents.md "Control intents"): regular
 * expression bodies matched on word boundaries against the normalised utterance of
 * `normalizeUtterance` in intents.ts (lower case, punctuation turned to spaces, apostrophes
 * kept). Which list plays which part is told in closing.ts.
 */

/** A span of time a caller closes "for": "that's all for now", "I'm good for the moment", "that's it for me". */
const SPAN = '(?:now|today|tonight|me|us|the (?:moment|day|time being|evening|night)|this time|right now)';
/** What "that's all" / "that's everything" may not be followed by: a confirmation or a part of an answer ("that's all correct", "that's all of it", "that would be all three of us"). */
const NOT_AFTER_ALL =
  '(?! (?:correct|right|good|fine|ok|okay|wrong|of|one|two|three|four|five|six|the|my|our|your|his|her|their|these|those|together|in|at|on|from|with)\\b)';
/** "that's all I know", "that's everything I ordered": an answer that ends a list, not the call. */
const NOT_A_LIST =
  '(?! (?:i|we) (?:know|knew|remember|recall|ordered|bought|brought|packed|paid|owe|said|saw|heard|found|see|mean|meant|can afford|could afford|can pay|have left|got left|have in|have on|have with|own|ate|took)\\b)';
/** "I'm all set" / "I'm good" followed by what it is set or good with ("I'm all set for Friday", "I'm good with Tuesday"): an answer. */
const NOT_WITH = `(?! (?:with|to|on|at|in|about|for (?!${SPAN}\\b)|if)\\b)`;
const THAT_BE = "that(?:'s| is| was|'ll be| will be|'d be| would be| should be)(?: really| just| probably| basically| pretty much)?";

/** Done phrases: a close on their own. */
export const DONE = [
  `${THAT_BE} all${NOT_AFTER_ALL}${NOT_A_LIST}`,
  `${THAT_BE} everything${NOT_AFTER_ALL}${NOT_A_LIST}`,
  `(?:that(?:'s| is)|it's|that should be|that'll be|that will be|that'd be|that would be) it for ${SPAN}`,
  "that(?:'ll be| will be|'d be| should be| would be) it",
  `that(?:'ll| will|'d| would| should) do(?: it)?(?! it\\b| for (?!${SPAN}\\b))`,
  'that (?:does|did) it',
  '(?:that|this) (?:(?:about|pretty much|just|probably) )?covers (?:it|everything|all of it)',
  `(?:i'm|i am|we're|we are) (?:all )?(?:good|fine|ok|okay|set|alright|all right) for ${SPAN}`,
  'all (?:that )?i need(?:ed)?(?! to\\b)',
  'all the (?:info|information|help) i need(?:ed)?',
  'everything i need(?:ed)?',
  'nothing (?:else|more|further)(?! (?:but|than|except|other)\\b)',
  'no more questions',
  `(?:i'm|i am|we're|we are) all set${NOT_WITH}`,
  '(?:talk|speak) (?:to|with) you (?:later|soon)',
  'catch you later',
  'take care',
  'see (?:you|ya)(?: later| soon)?',
  "(?:i|we) (?:don't|do not|won't|will not) need any(?:thing)? ?(?:else|more|further)",
  "there(?:'s| is) nothing(?: else| more)?(?! (?:but|than|except|other|to|wrong|on|in)\\b)",
  "(?:i|we) (?:don't|do not) have any(?:thing)? (?:else|more|other|further)(?: questions?)?",
  '(?:i|we) have no (?:more|other|further) (?:questions|requests)',
  `(?:i'm|i am|we're|we are) (?:all )?(?:done|finished) (?:for ${SPAN}|here)`,
  'no (?:other|further) (?:help|assistance|questions|requests)',
  "(?:that's|that is|that'll do|that will do|it's) (?:about|pretty much) it",
  `(?:that's|that is) all for ${SPAN}`,
  `(?:that's|that is|it's|it is) (?:good|fine|ok|okay) for ${SPAN}`,
  `nothing (?:for ${SPAN}|at the moment|at this time)`,
  `all done${NOT_WITH}`,
  'all i (?:wanted|was looking for)',
  "(?:that's|that is|just|exactly) what i (?:needed|wanted|was looking for)",
  "(?:i've got|i have|i got|got) (?:what|everything) i need(?:ed)?",
  `(?:i've got|i have|i got|got) everything${NOT_AFTER_ALL}${NOT_WITH}`,
  '(?:answers|answered|covers|covered) (?:all )?(?:of )?my questions?',
  'have a (?:good|nice|great|lovely|wonderful) (?:day|evening|night|one|weekend|week|afternoon)',
  'good ?night',
  '(?:good ?)?bye(?: bye)?',
  'bas itna(?: hi)?',
  'aur kuch nahi',
  'kuch aur nahi',
  'और कुछ नहीं',
  'बस इतना(?: ही)?',
];

/** Soft done phrases: a close with thanks, after a decline, or with nothing else said ("Nope, that's it"; not "yes, that's it"). */
export const SOFT_DONE = [
  "that(?:'s| is)(?: really| just)? it",
  "it(?:'s| is) all",
  `(?:i'm|i am|we're|we are) (?:all )?(?:done|finished|set|sorted|satisfied)${NOT_WITH}`,
  `all set${NOT_WITH}`,
  "(?:i'm|i am|we're|we are) (?:all )?(?:good|fine|ok|okay) to go",
  'good to go',
  "that(?:'s| is| will be|'ll be) enough",
  'ho gaya',
  'bas',
  'बस',
];

/** "I'm good": a close with thanks or alone ("I'm good, thanks"); after a bare no it only declines ("No, I'm fine"). */
export const FINE = [
  `(?:i'm|i am|we're|we are) (?:all )?(?:good|fine|ok|okay|alright|all right|happy)${NOT_WITH}`,
  `all good${NOT_WITH}`,
  "everything(?:'s| is)(?: all)? (?:good|fine|ok|okay|great|perfect)",
  "(?:i'll|i will|we'll|we will) be (?:fine|good|ok|okay|alright|all right)",
];

/** Thanks. */
export const THANKS = [
  'thank u',
  'thank ya',
  'thanku',
  'thanks?(?: you)?(?: kindly)?',
  'thx',
  'tysm',
  'cheers',
  'much appreciated',
  'appreciate(?:d)?(?: it)?',
  'dhanyavaad',
  'dhanyavad',
  'dhanyawad',
  'shukriya',
  'धन्यवाद',
  'शुक्रिया',
];

const HELP =
  '(?:(?:kind |great |wonderful |quick |prompt |excellent |patient )?(?:help|assistance|information|info|time|support|details|update|patience|work|service))';

/** Thanks for the service: a close alone or after a decline ("thanks for your help", "you've been very helpful"). */
export const SERVICE_THANKS = [
  `for (?:the|your|all the|all your|all of your|all of the) ${HELP}(?: and (?:the |your )?${HELP})?`,
  'for (?:everything|all that|all of that|all this|all of this)',
  'for (?:helping(?: me)?(?: out)?|letting me know|checking|asking|offering|looking (?:into|it up)|sorting (?:it|that) out|being (?:so |very |really )?(?:helpful|patient|kind))',
  "(?:you've|you have|you're|you are|you were) (?:been )?(?:a |so |very |really |most |extremely |incredibly |super |such a )?(?:great |big |good |huge |real )?(?:help|helpful)",
  "(?:you've|you have|you're|you are|you were|that's|that is|that was|this was|it was) (?:been )?(?:a lot of|lots of|much|so much|a great deal of|a big|a great) help",
  "you're (?:the best|a star|a lifesaver|(?:very |so )?kind)",
  "(?:that's|that is) (?:very |so |really )?kind of you",
  'thanks? (?:you )?again',
  "you(?:'ve| have)? helped(?: (?:me|a lot|so much))*",
  "(?:that|this|it)(?:'s| was| has been| is) (?:very |really |so |super |extremely |most |incredibly )?helpful",
  'that help(?:s|ed)(?: a lot)?',
  "(?:you've|you have) been (?:great|wonderful|awesome|amazing|fantastic|brilliant|very kind|so kind)",
  'i (?:really |truly |do )?appreciate(?: (?:it|that|this|you|your help|the help|all your help|all the help|all of your help))?',
  'appreciate (?:it|that|your help|the help)',
];

/** Thanks said with weight: a close after a decline ("no, thank you very much"). */
export const INTENSE_THANKS = ['thanks? (?:you )?(?:(?:so |very )+much|a lot|a ton|much|a million)', 'many thanks', 'thanks a bunch'];

/**
 * Thanks for anything at all ("thank you for the booking"): at "anything else?" only, where a
 * thank-you with nothing else said ends the call.
 */
export const THANKS_FOR_ANY = [
  "thanks?(?: you)?(?: (?:very much|so much|a lot|again))? for (?:the |your |all the |all your |all of your |my |this |that |me |it )?[\\p{L}']+(?: (?:it|that|this|them|me|us|everything|up|out))?",
];

/**
 * What a caller says on the way out, with a closing phrase or after a decline at "anything
 * else?" ("no thanks, I'll call back if I need anything"): no new request.
 */
export const REMARKS = [
  "(?:i'll|i will|we'll|we will) (?:let you know|call(?: you| again| back)*|get back to you|be in touch|reach out|contact you)(?: (?:again|later|soon|back))?",
  '(?:if|when) (?:i|we) need (?:anything|something|more|help)(?: else)?',
  "(?:i'm|i am|we're|we are) (?:really |so )?looking forward to it",
  "can't wait",
];

/** Words a new request is made of: a plan said with them is no plan of leaving ("I'll need a cab"). */
const REQUEST_WORD =
  '(?:need|want|like|also|another|book|change|cancel|add|find|search|reserve|send|please|help|else|instead|but|and|more|with|can|could|would|what|where|when|how)';

/**
 * What the caller will do next, said after a decline or thanks at "anything else?" ("no
 * thanks, I'll go check it out"): a close when no request word follows.
 */
export const PLANS = [
  `(?:i'll|i will|i'm going to|i am going to|i'm gonna|we'll|we will|we're going to)(?: just)? (?:go|head|check|look|think|see|wait|try|visit|manage|figure|decide|sort|take|handle|deal)(?: (?!${REQUEST_WORD}\\b)[\\p{L}']+){0,4}`,
];

/** Words that may surround closing phrases without carrying content; phrases of more words first. */
export const FILLER = [
  'at the moment',
  'all right',
  'i guess',
  'i think',
  'i believe',
  'i suppose',
  'for now',
  'right now',
  'very much',
  'so much',
  'a lot',
  'ma am',
  'ok',
  'okay',
  'alright',
  'well',
  'um',
  'uh',
  'oh',
  'ah',
  'hmm',
  'so',
  'great',
  'awesome',
  'nice',
  'cool',
  'perfect',
  'really',
  'actually',
  'just',
  'and',
  'but',
  'then',
  'anyway',
  'anyways',
  'here',
  'now',
  'today',
  'mate',
  'ji',
  'sir',
  'madam',
  'bye',
];

/** Declines that, at a question offering more, say nothing else ("not really", "no, that's fine"); longer ones first (see closing.ts). */
export const MORE_DECLINE = [
  'nothing(?: at all)?',
  'none',
  'no more',
  'no need',
  'not really',
  'not now',
  'not right now',
  'not (?:for |at )?(?:right now|now|today|the moment|this moment|this time|present|the time being)',
  'not yet',
  'not at all',
  'maybe (?:later|another time|some other time)',
  'some other time',
  "i'll pass",
  'never mind',
  'nevermind',
  "i don't think so",
  'i think not',
  "(?:i|we) (?:don't|do not) (?:need|want) anything(?: (?:at all|else|more))?",
  "(?:that|it)(?:'s| is|'ll be| will be|'d be| would be| should be)(?: all)? (?:fine|okay|ok|alright|all right|good)",
  "(?:i'm|i am|we're|we are) (?:all )?(?:good|fine|ok|okay|happy|satisfied) with (?:that|this|it|everything)",
  "(?:i|we) (?:don't|do not)",
  'nope',
  'nah',
  'no',
  'ji nahi',
  'kuch nahi',
  'nahi',
  'कुछ नहीं',
  'नहीं',
];

/** Acknowledgements that, with thanks, close at "anything else?" ("great, thank you", "sounds good, thanks", "got it, thanks"). */
export const ACKS = [
  "(?:that|it|this)(?:'s| is| was| sounds| looks|'d be| would be| will be|'ll be)(?: (?:very|really|so|super|all))? (?:great|perfect|good|fine|ok|okay|alright|all right|wonderful|awesome|excellent|helpful|lovely|brilliant|amazing|nice|useful|cool)(?: to (?:hear|know)| of you)?",
  '(?:sounds|looks) (?:(?:very|really|so) )?(?:good|great|perfect|fine|lovely|wonderful|awesome|like a plan)(?: to me)?',
  '(?:that )?works (?:for me|for us)',
  'that works',
  'got it',
  'gotcha',
  'understood',
  'noted',
  'i see',
  'will do',
  'good to know',
  'fair enough',
  'very good',
  'very well',
  'ok',
  'okay',
  'great',
  'perfect',
  'awesome',
  'cool',
  'alright',
  'wonderful',
  'excellent',
  'good',
  'fine',
  'super',
  'theek hai',
  'thik hai',
  'accha',
  'achha',
  'ठीक है',
];

/**
 * Content said with a closing phrase: a question or a new request anywhere in the utterance
 * ("no, that's all, where is the clinic", "thanks, can you also send it", "one more thing").
 */
export const CONTENT =
  " (?:what|where|when|how|which|who|why)(?:'s| is| are| was| were| do| does| did| can| could| will| would| should| time| much| many| long| far| about| if)(?= )| (?:can|could|would|will) you(?= )| (?:one|a|just one) more (?:thing|question)(?= )| another (?:thing|question)(?= )| (?:i|we) (?:also|still) (?:need|want|have)(?= )| also (?:need|want|book|add|send|check)(?= )";
