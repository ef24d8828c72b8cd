//! Line charts as PNG files, with no plotting dependency: a small RGB
//! raster, and a PNG writer using stored (uncompressed) deflate blocks.

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
    // zlib stream of stored deflate blocks (at most 65535 bytes each).
    let mut z = vec![0x78, 0x01];
    let blocks: Vec<&[u8]> = raw.chunks(65535).collect();
    for (i, block) in blocks.iter().enumerate() {
        z.push((i + 1 == blocks.len()) as u8);
        let len = block.len() as u16;
        z.extend_from_slice(&len.to_le_bytes());
        z.extend_from_slice(&(!len).to_le_bytes());
        z.extend_from_slice(block);
    }
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
