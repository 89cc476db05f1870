// SHA-1 of a string's UTF-8 bytes, as base64: Firebase's node hash needs it synchronously
// (a transaction's hash is sent in order with other writes), which crypto.subtle is not.

const encoder = new TextEncoder();

function rotate(value, count) {
  return (value << count) | (value >>> (32 - count));
}

/// base64(SHA-1(UTF-8(text))).
export function sha1Base64(text) {
  const bytes = encoder.encode(text);
  const bitLength = bytes.length * 8;
  // The message, a 1 bit, zeros, and the length in bits: a whole number of 64-byte blocks.
  const padded = new Uint8Array(((bytes.length + 9 + 63) >> 6) << 6);
  padded.set(bytes);
  padded[bytes.length] = 0x80;
  const view = new DataView(padded.buffer);
  view.setUint32(padded.length - 8, Math.floor(bitLength / 2 ** 32));
  view.setUint32(padded.length - 4, bitLength >>> 0);

  let h0 = 0x67452301;
  let h1 = 0xefcdab89;
  let h2 = 0x98badcfe;
  let h3 = 0x10325476;
  let h4 = 0xc3d2e1f0;
  const words = new Int32Array(80);
  for (let offset = 0; offset < padded.length; offset += 64) {
    for (let index = 0; index < 16; index += 1) words[index] = view.getInt32(offset + index * 4);
    for (let index = 16; index < 80; index += 1) {
      words[index] = rotate(words[index - 3] ^ words[index - 8] ^ words[index - 14] ^ words[index - 16], 1);
    }
    let a = h0;
    let b = h1;
    let c = h2;
    let d = h3;
    let e = h4;
    for (let index = 0; index < 80; index += 1) {
      let f;
      let k;
      if (index < 20) {
        f = (b & c) | (~b & d);
        k = 0x5a827999;
      } else if (index < 40) {
        f = b ^ c ^ d;
        k = 0x6ed9eba1;
      } else if (index < 60) {
        f = (b & c) | (b & d) | (c & d);
        k = 0x8f1bbcdc;
      } else {
        f = b ^ c ^ d;
        k = 0xca62c1d6;
      }
      const next = (rotate(a, 5) + f + e + k + words[index]) | 0;
      e = d;
      d = c;
      c = rotate(b, 30);
      b = a;
      a = next;
    }
    h0 = (h0 + a) | 0;
    h1 = (h1 + b) | 0;
    h2 = (h2 + c) | 0;
    h3 = (h3 + d) | 0;
    h4 = (h4 + e) | 0;
  }
  const digest = new DataView(new ArrayBuffer(20));
  [h0, h1, h2, h3, h4].forEach((word, index) => digest.setInt32(index * 4, word));
  let binary = '';
  for (let index = 0; index < 20; index += 1) binary += String.fromCharCode(digest.getUint8(index));
  return btoa(binary);
}
