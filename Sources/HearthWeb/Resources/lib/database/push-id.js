// Push IDs (Firebase's algorithm): 20 characters that sort by creation time.

const PUSH_CHARS = '-0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz';
let lastPushTime = 0;
const lastRandomDigits = new Array(12).fill(0);

/// A 20-character ID: 8 characters of the time in milliseconds, then 12 random ones. IDs made
/// in the same millisecond increment the random part, so they never sort backwards.
/// @param {number} [now] the time to use (the server's estimated time, so that IDs sort in the
///   server's order even when this device's clock is off)
export function pushId(when = Date.now()) {
  const now = Math.floor(when);
  const duplicateTime = now === lastPushTime;
  lastPushTime = now;
  const timeChars = new Array(8);
  let time = now;
  for (let index = 7; index >= 0; index -= 1) {
    timeChars[index] = PUSH_CHARS.charAt(time % 64);
    time = Math.floor(time / 64);
  }
  if (!duplicateTime) {
    const random = crypto.getRandomValues(new Uint8Array(12));
    for (let index = 0; index < 12; index += 1) lastRandomDigits[index] = random[index] % 64;
  } else {
    let index = 11;
    for (; index >= 0 && lastRandomDigits[index] === 63; index -= 1) lastRandomDigits[index] = 0;
    lastRandomDigits[index] += 1;
  }
  return timeChars.join('') + lastRandomDigits.map((digit) => PUSH_CHARS.charAt(digit)).join('');
}
