/** 26 strings: the first 9 the hand-made table before string-width measured wrong (the issue's 🚀 ⚡ ✅ ❤️ 👨‍👩‍👧 👍🏽 नमस्ते among them), then text it measured right. */
export const WIDTH_CASES = [
  '🚀', '⚡', '✅', '❤️', '👨‍👩‍👧', '👍🏽', 'नमस्ते', '1️⃣', '☕', '🇯🇵', '🎵 Music',
  'Blue Note', 'Éditions Mego', '東京', '한국어', 'e\u0301', 'ｶﾞ', 'Ｆｕｌｌ', 'مرحبا', 'שלום', 'ไทย', '©', '™', 'Zoë', 'Ǆ', 'x\u200bz',
];

