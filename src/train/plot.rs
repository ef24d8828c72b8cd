//! Line charts as PNG files, with no plotting dependency: a small RGB
//! raster, and a PNG writer with its own deflate (LZ77 with fixed Huffman
//! codes: charts are flat colour, so a few percent of the raw size).

/// Colours of successive series: blue, orange, green, red.
const COLOURS: [[u8; 3]; 4] = [[31, 119, 180], [255, 127, 14], [44, 160, 44], [214, 39, 40]];

/// A chart of `series` (name, points) over a shared x and y range, with
/// axes and a colour key (a square per series, top left, in series order).
pub fn line_chart(series: &[(&str, Vec<(f64, f64)>)], width: usize, height: usize) -> Vec<u8> {
    let mut img = vec![255u8; width * height * 3];
    let mut put = |x: i64, y: i64, c: [u8; 3]| {
        if x >= 0 && y >= 0 && (x as usize) < width && (y as usize) < height {
            let i = (y as usize * width + x as usize) * 3;
            img[i..i + 3].copy_from_slice(&c);
        }
    };
    let (left, right, top, bottom) = (40i64, width as i64 - 10, 10i64, height as i64 - 30);
    for x in left..=right {
        put(x, bottom, [0, 0, 0]);
    }
    for y in top..=bottom {
        put(left, y, [0, 0, 0]);
    }
    let points = series.iter().flat_map(|(_, p)| p.iter()).filter(|p| p.0.is_finite() && p.1.is_finite());
    let (mut x0, mut x1, mut y0, mut y1) = (f64::MAX, f64::MIN, 0.0f64, f64::MIN);
    for &(x, y) in points {
        x0 = x0.min(x);
        x1 = x1.max(x);
        y0 = y0.min(y);
        y1 = y1.max(y);
    }
    if x1 <= x0 {
        x1 = x0 + 1.0;
    }
    if y1 <= y0 {
        y1 = y0 + 1.0;
    }
    let sx = |x: f64| left + ((x - x0) / (x1 - x0) * (right - left) as f64).round() as i64;
    let sy = |y: f64| bottom - ((y - y0) / (y1 - y0) * (bottom - top) as f64).round() as i64;
    for (k, (_, pts)) in series.iter().enumerate() {
        let c = COLOURS[k % COLOURS.len()];
        for dx in 0..8 {
            for dy in 0..8 {
                put(left + 8 + k as i64 * 12 + dx, top + 4 + dy, c);
            }
        }
        for w in pts.windows(2) {
            let (a, b) = (w[0], w[1]);
            if !(a.0.is_finite() && a.1.is_finite() && b.0.is_finite() && b.1.is_finite()) {
                continue;
            }
            let (ax, ay, bx, by) = (sx(a.0), sy(a.1), sx(b.0), sy(b.1));
            let steps = (bx - ax).abs().max((by - ay).abs()).max(1);
            for t in 0..=steps {
                let x = ax + (bx - ax) * t / steps;
                let y = ay + (by - ay) * t / steps;
                put(x, y, c);
                put(x, y + 1, c);
            }
        }
    }
    encode_png(&img, width, height)
}

/// Encodes 8-bit RGB pixels as a PNG.
pub fn encode_png(rgb: &[u8], width: usize, height: usize) -> Vec<u8> {
    // Each row starts with filter type 0.
    let mut raw = Vec::with_capacity((width * 3 + 1) * height);
    for row in rgb.chunks(width * 3) {
        raw.push(0);
        raw.extend_from_slice(row);
    }
    // zlib stream: header (deflate, 32 KiB window, no dictionary), one
    // fixed-Huffman block, Adler-32.
    let mut z = vec![0x78, 0x01];
    z.extend_from_slice(&deflate_fixed(&raw));
    let (mut a, mut b) = (1u32, 0u32);
    for &byte in &raw {
        a = (a + byte as u32) % 65521;
        b = (b + a) % 65521;
    }
    z.extend_from_slice(&((b << 16) | a).to_be_bytes());
    let mut png = b"\x89PNG\r\n\x1a\n".to_vec();
    let mut chunk = |kind: &[u8; 4], data: &[u8]| {
        png.extend_from_slice(&(data.len() as u32).to_be_bytes());
        let mut body = kind.to_vec();
        body.extend_from_slice(data);
        png.extend_from_slice(&body);
        png.extend_from_slice(&crc32fast::hash(&body).to_be_bytes());
    };
    let mut header = Vec::new();
    header.extend_from_slice(&(width as u32).to_be_bytes());
    header.extend_from_slice(&(height as u32).to_be_bytes());
    header.extend_from_slice(&[8, 2, 0, 0, 0]);
    chunk(b"IHDR", &header);
    chunk(b"IDAT", &z);
    chunk(b"IEND", &[]);
    png
}

/// Deflate (RFC 1951) as one block with the fixed Huffman codes, matches
/// found through a hash of the next three bytes (the most recent earlier
/// position only, greedy).
fn deflate_fixed(data: &[u8]) -> Vec<u8> {
    const WINDOW: usize = 32 * 1024;
    const MAX_MATCH: usize = 258;
    const HASH_BITS: u32 = 15;
    let mut out = BitWriter::default();
    out.bits(1, 1); // final block
    out.bits(1, 2); // fixed Huffman codes
    let mut head = vec![usize::MAX; 1 << HASH_BITS];
    let hash = |i: usize| {
        let v = u32::from(data[i]) | u32::from(data[i + 1]) << 8 | u32::from(data[i + 2]) << 16;
        (v.wrapping_mul(0x9E37_79B1) >> (32 - HASH_BITS)) as usize
    };
    let mut i = 0;
    while i < data.len() {
        let mut best = (0, 0);
        if i + 3 <= data.len() {
            let h = hash(i);
            let candidate = head[h];
            head[h] = i;
            if candidate != usize::MAX && i - candidate <= WINDOW {
                let limit = MAX_MATCH.min(data.len() - i);
                let len = (0..limit).take_while(|&k| data[candidate + k] == data[i + k]).count();
                if len >= 3 {
                    best = (len, i - candidate);
                }
            }
        }
        let (len, dist) = best;
        if len == 0 {
            out.literal(data[i] as usize);
            i += 1;
            continue;
        }
        out.length(len);
        out.distance(dist);
        // Index the positions the match covers, so later matches find them.
        for j in i + 1..(i + len).min(data.len().saturating_sub(2)) {
            head[hash(j)] = j;
        }
        i += len;
    }
    out.literal(256);
    out.finish()
}

/// Deflate's bit order: values least significant bit first, Huffman codes
/// most significant bit first.
#[derive(Default)]
struct BitWriter {
    bytes: Vec<u8>,
    acc: u32,
    n: u32,
}

impl BitWriter {
    fn bits(&mut self, value: u32, count: u32) {
        self.acc |= value << self.n;
        self.n += count;
        while self.n >= 8 {
            self.bytes.push(self.acc as u8);
            self.acc >>= 8;
            self.n -= 8;
        }
    }

    fn code(&mut self, code: u32, len: u32) {
        self.bits(code.reverse_bits() >> (32 - len), len);
    }

    /// A literal byte or the end-of-block symbol (256), fixed codes.
    fn literal(&mut self, sym: usize) {
        let sym = sym as u32;
        match sym {
            0..=143 => self.code(0x30 + sym, 8),
            144..=255 => self.code(0x190 + sym - 144, 9),
            256..=279 => self.code(sym - 256, 7),
            _ => self.code(0xC0 + sym - 280, 8),
        }
    }

    /// A match length, 3 to 258: symbol 257-285 and extra bits.
    fn length(&mut self, len: usize) {
        const BASE: [u16; 29] = [
            3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195,
            227, 258,
        ];
        const EXTRA: [u8; 29] = [0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0];
        let k = BASE.iter().rposition(|&b| b as usize <= len).expect("length >= 3");
        self.literal(257 + k);
        self.bits((len - BASE[k] as usize) as u32, EXTRA[k] as u32);
    }

    /// A match distance, 1 to 32768: 5-bit code and extra bits.
    fn distance(&mut self, dist: usize) {
        const BASE: [u16; 30] = [
            1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537, 2049, 3073,
            4097, 6145, 8193, 12289, 16385, 24577,
        ];
        let k = BASE.iter().rposition(|&b| b as usize <= dist).expect("distance >= 1");
        self.code(k as u32, 5);
        let extra = if k < 4 { 0 } else { (k as u32 - 2) / 2 };
        self.bits((dist - BASE[k] as usize) as u32, extra);
    }

    fn finish(mut self) -> Vec<u8> {
        if self.n > 0 {
            self.bytes.push(self.acc as u8);
        }
        self.bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inflate(z: &[u8], size: usize) -> Vec<u8> {
        let mut out = vec![0; size];
        let n = miniz_oxide::inflate::decompress_slice_iter_to_slice(&mut out, std::iter::once(z), true, false)
            .expect("a valid zlib stream");
        out.truncate(n);
        out
    }

    fn zlib(data: &[u8]) -> Vec<u8> {
        let png = encode_png(data, data.len() / 3, 1);
        // The IDAT chunk: after the signature (8) and IHDR (25), length
        // and type (8).
        let len = u32::from_be_bytes(png[33..37].try_into().unwrap()) as usize;
        png[41..41 + len].to_vec()
    }

    #[test]
    fn deflate_round_trips() {
        let mut rng = crate::mcts::Rng::new(3);
        let noise: Vec<u8> = (0..30_000).map(|_| rng.below(256) as u8).collect();
        let runs: Vec<u8> = (0..90_000).map(|i| [0, 7, 255][(i / 997) % 3]).collect();
        let mixed: Vec<u8> =
            (0..60_000).map(|i| if i % 5000 < 40 { rng.below(4) as u8 } else { (i % 300) as u8 }).collect();
        for data in [vec![1, 2, 3], vec![9; 3 * 700], noise, runs, mixed] {
            let data = &data[..data.len() / 3 * 3];
            let mut raw = vec![0];
            raw.extend_from_slice(data);
            assert_eq!(inflate(&zlib(data), raw.len() + 10), raw);
        }
    }

    #[test]
    fn charts_compress() {
        let points: Vec<(f64, f64)> = (0..50).map(|i| (i as f64, (i as f64 / 7.0).sin())).collect();
        let png = line_chart(&[("a", points)], 640, 360);
        let raw = 640 * 360 * 3;
        assert!(png.len() < raw / 10, "{} bytes for {raw} of pixels", png.len());
    }
}
