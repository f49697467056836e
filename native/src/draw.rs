//! Deterministic draws by trace id (collector/sampling.py says why): BLAKE2b (RFC 7693) with an 8-byte digest and the
//! stream's name as its personalisation, the digest read big-endian over 2^64. The same numbers as Python's
//! `hashlib.blake2b(digest_size=8, person=name[:16])`, which tests/test_native_draw.py holds it to.

const IV: [u64; 8] = [
    0x6a09e667f3bcc908, 0xbb67ae8584caa73b, 0x3c6ef372fe94f82b, 0xa54ff53a5f1d36f1,
    0x510e527fade682d1, 0x9b05688c2b3e6c1f, 0x1f83d9abfb41bd6b, 0x5be0cd19137e2179,
];

// The message schedule of each round; rounds 10 and 11 take rows 0 and 1 again.
const SIGMA: [[usize; 16]; 10] = [
    [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15],
    [14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3],
    [11, 8, 12, 0, 5, 2, 15, 13, 10, 14, 3, 6, 7, 1, 9, 4],
    [7, 9, 3, 1, 13, 12, 11, 14, 2, 6, 5, 10, 4, 0, 15, 8],
    [9, 0, 5, 7, 2, 4, 10, 15, 14, 1, 11, 12, 6, 8, 3, 13],
    [2, 12, 6, 10, 0, 11, 8, 3, 4, 13, 7, 5, 15, 14, 1, 9],
    [12, 5, 1, 15, 14, 13, 4, 10, 0, 7, 6, 3, 9, 2, 8, 11],
    [13, 11, 7, 14, 12, 1, 3, 9, 5, 0, 15, 4, 8, 6, 2, 10],
    [6, 15, 14, 9, 11, 3, 0, 8, 12, 2, 13, 7, 1, 4, 10, 5],
    [10, 2, 8, 4, 7, 6, 1, 5, 15, 11, 9, 14, 3, 12, 13, 0],
];

const HASH_SPACE: f64 = 18446744073709551616.0; // 2^64

fn mix(v: &mut [u64; 16], a: usize, b: usize, c: usize, d: usize, x: u64, y: u64) {
    v[a] = v[a].wrapping_add(v[b]).wrapping_add(x);
    v[d] = (v[d] ^ v[a]).rotate_right(32);
    v[c] = v[c].wrapping_add(v[d]);
    v[b] = (v[b] ^ v[c]).rotate_right(24);
    v[a] = v[a].wrapping_add(v[b]).wrapping_add(y);
    v[d] = (v[d] ^ v[a]).rotate_right(16);
    v[c] = v[c].wrapping_add(v[d]);
    v[b] = (v[b] ^ v[c]).rotate_right(63);
}

fn compress(h: &mut [u64; 8], block: &[u8; 128], counted: u128, last: bool) {
    let mut m = [0u64; 16];
    for (word, bytes) in m.iter_mut().zip(block.chunks_exact(8)) {
        *word = u64::from_le_bytes(bytes.try_into().expect("8 bytes"));
    }
    let mut v = [0u64; 16];
    v[..8].copy_from_slice(h);
    v[8..].copy_from_slice(&IV);
    v[12] ^= counted as u64;
    v[13] ^= (counted >> 64) as u64;
    if last {
        v[14] = !v[14];
    }
    for round in 0..12 {
        let s = &SIGMA[round % 10];
        mix(&mut v, 0, 4, 8, 12, m[s[0]], m[s[1]]);
        mix(&mut v, 1, 5, 9, 13, m[s[2]], m[s[3]]);
        mix(&mut v, 2, 6, 10, 14, m[s[4]], m[s[5]]);
        mix(&mut v, 3, 7, 11, 15, m[s[6]], m[s[7]]);
        mix(&mut v, 0, 5, 10, 15, m[s[8]], m[s[9]]);
        mix(&mut v, 1, 6, 11, 12, m[s[10]], m[s[11]]);
        mix(&mut v, 2, 7, 8, 13, m[s[12]], m[s[13]]);
        mix(&mut v, 3, 4, 9, 14, m[s[14]], m[s[15]]);
    }
    for (i, word) in h.iter_mut().enumerate() {
        *word ^= v[i] ^ v[i + 8];
    }
}

/// The 8-byte BLAKE2b digest of `data` personalised with `person` (its first 16 bytes, zero-padded), big-endian.
pub fn digest(data: &[u8], person: &[u8]) -> u64 {
    let mut personal = [0u8; 16];
    let used = person.len().min(16);
    personal[..used].copy_from_slice(&person[..used]);
    let mut h = IV;
    h[0] ^= 0x0101_0000 ^ 8; // no key, digest of 8 bytes, fanout and depth 1
    h[6] ^= u64::from_le_bytes(personal[..8].try_into().expect("8 bytes"));
    h[7] ^= u64::from_le_bytes(personal[8..].try_into().expect("8 bytes"));
    let mut block = [0u8; 128];
    let mut counted: u128 = 0;
    let mut rest = data;
    while rest.len() > 128 {
        block.copy_from_slice(&rest[..128]);
        counted += 128;
        compress(&mut h, &block, counted, false);
        rest = &rest[128..];
    }
    block = [0u8; 128];
    block[..rest.len()].copy_from_slice(rest);
    counted += rest.len() as u128;
    compress(&mut h, &block, counted, true);
    u64::from_be_bytes(h[0].to_le_bytes())
}

/// A uniform number in [0, 1) from the trace id, on the stream `name`.
pub fn draw(trace_id: &str, name: &str) -> f64 {
    digest(trace_id.as_bytes(), name.as_bytes()) as f64 / HASH_SPACE
}

#[cfg(test)]
mod tests {
    use super::digest;

    #[test]
    fn the_digest_is_hashlibs_in_one_block_and_in_several() {
        // hashlib.blake2b(data, digest_size=8, person=person[:16]).hexdigest()
        let x = [b'x'; 128];
        let y = [b'y'; 300];
        let cases: [(&[u8], &[u8], &str); 4] = [
            (b"abc", b"routine", "ae7b77d5296c4846"), (b"", b"scorer_flag", "2a7ab4e4840b15cb"),
            (&x, &[b'a'; 20], "01327d40e5c400d0"), (&y, b"", "ff49938aeb9a2bf9"),
        ];
        for (data, person, expected) in cases {
            assert_eq!(format!("{:016x}", digest(data, person)), expected);
        }
    }
}
