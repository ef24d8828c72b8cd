//! A bfloat16 matrix product on Intel's Advanced Matrix Extensions (AMX:
//! Sapphire Rapids and later Xeons) for [`super::cpu`]'s 3x3 convolutions.
//! One `tdpbf16ps` multiplies a 16 x 32 bf16 tile by a 32 x 16 one into a
//! 16 x 16 f32 tile: 8,192 multiply-adds, sixteen times an AVX-512 FMA's
//! per instruction. The numbers are those of [`super::bf16`]'s kernel
//! (bf16 operands, f32 sums; only the order of the sums differs), and so
//! is the operands' layout, in pairs along the summed dimension.
//!
//! Linux grants a process the tiles' 8 KiB of register state only when
//! asked (`arch_prctl(ARCH_REQ_XCOMP_PERM)`); [`supported`] asks once, and
//! is false where the CPU, the OS or the request says no. The tile
//! registers are not known to the compiler: each product loads its tile
//! configuration, and releases the tiles when done.

/// Rows of a tile, and pairs (32 bf16, 64 bytes) per tile row: the
/// summed dimension (in pairs) and the rows of a product are padded to
/// multiples of it by the caller; output columns must be a multiple of it.
pub const TILE: usize = 16;

/// Whether this CPU and OS run AMX's bf16 products (asked once).
pub fn supported() -> bool {
    static SUPPORTED: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *SUPPORTED.get_or_init(detect)
}

#[cfg(all(target_arch = "x86_64", target_os = "linux"))]
fn detect() -> bool {
    use std::arch::x86_64::{__cpuid, __cpuid_count};
    // CPUID leaf 7: AMX-BF16 is EDX bit 22, AMX-TILE bit 24; OSXSAVE
    // (leaf 1, ECX bit 27) says XGETBV may be used.
    if __cpuid(0).eax < 0x1d || __cpuid(1).ecx & (1 << 27) == 0 {
        return false;
    }
    let edx = __cpuid_count(7, 0).edx;
    if edx & (1 << 22) == 0 || edx & (1 << 24) == 0 {
        return false;
    }
    // The tile palette this kernel configures: palette 1 with 8 tiles of
    // 16 rows by 64 bytes (leaf 0x1D, sub-leaf 1).
    let palette = __cpuid_count(0x1d, 1);
    if palette.ebx & 0xffff < 64 || palette.ebx >> 16 < 8 || palette.ecx & 0xffff < 16 {
        return false;
    }
    // XCR0 bits 17 and 18: the OS saves the tile configuration and data.
    // SAFETY: OSXSAVE is set (checked above), so XGETBV is available.
    let xcr0 = unsafe { xgetbv0() };
    if xcr0 & (0b11 << 17) != 0b11 << 17 {
        return false;
    }
    const ARCH_REQ_XCOMP_PERM: libc::c_long = 0x1023;
    const XFEATURE_XTILEDATA: libc::c_long = 18;
    // SAFETY: a plain system call with integer arguments; it only changes
    // which register state this process may use.
    unsafe { libc::syscall(libc::SYS_arch_prctl, ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA) == 0 }
}

/// XCR0 (XGETBV with ECX = 0), read without the `xsave` target feature.
#[cfg(all(target_arch = "x86_64", target_os = "linux"))]
unsafe fn xgetbv0() -> u64 {
    let (eax, edx): (u32, u32);
    // SAFETY: the caller checked OSXSAVE; XGETBV reads a register only.
    unsafe {
        std::arch::asm!("xgetbv", in("ecx") 0, out("eax") eax, out("edx") edx, options(nomem, nostack, preserves_flags))
    };
    (u64::from(edx) << 32) | u64::from(eax)
}

#[cfg(not(all(target_arch = "x86_64", target_os = "linux")))]
fn detect() -> bool {
    false
}

/// Output rows a [`product`] hands its caller at a time: two row tiles.
pub const BAND: usize = 2 * TILE;

/// The left operand of a [`product`], read in place: K-step `s` of row
/// `r` (pairs `s * step .. (s + 1) * step` of the sum) is the `step` pairs
/// at `data[r * stride + offsets[s]..]`. A matrix in rows of `k2` pairs
/// has stride `k2` and offsets 0, 16, 32 ...; a 3x3 convolution over
/// boards padded with zeros reads a square's nine taps at nine fixed
/// offsets from it, so needs no im2col copy.
pub struct Lhs<'a> {
    pub data: &'a [u32],
    pub stride: usize,
    /// Pairs per K-step: 1 to [`TILE`].
    pub step: usize,
    pub offsets: &'a [usize],
}

/// `lhs[m x sum] * rhs[sum x n]` in pairs, `rhs` row-major with
/// `offsets.len() * step` rows at least and `n` a multiple of [`TILE`]:
/// calls `band(r, sums)` for the rows from `r` on, [`BAND`] at a time (the
/// last band fewer), `sums` row-major `[rows x n]` f32 for the caller to
/// finish in place. Rows up to `m` rounded up to a multiple of [`TILE`]
/// are read. Call only where [`supported`].
pub fn product(lhs: &Lhs, rhs: &[u32], m: usize, n: usize, mut band: impl FnMut(usize, &mut [f32])) {
    let padded = m.next_multiple_of(TILE);
    assert!((1..=TILE).contains(&lhs.step) && n.is_multiple_of(TILE), "AMX product of {m} rows by {n}");
    let last = lhs.offsets.iter().copied().max().unwrap_or(0);
    assert!(m == 0 || (padded - 1) * lhs.stride + last + lhs.step <= lhs.data.len(), "AMX product's left operand");
    assert!(lhs.offsets.len() * lhs.step * n <= rhs.len(), "AMX product's right operand");
    assert!(supported(), "AMX matrix product on a CPU or OS without it");
    #[cfg(all(target_arch = "x86_64", target_os = "linux"))]
    // SAFETY: the CPU and OS run AMX (asserted), and every tile the
    // product reads lies inside lhs or rhs (asserted above).
    unsafe {
        x86::product(lhs, rhs, m, n, &mut band)
    }
}

/// `out[m x n] = lhs[m x k2] * rhs[k2 x n]` in pairs, row-major: `k2` and
/// `n` multiples of [`TILE`], and `lhs` holding `m` rounded up to a
/// multiple of [`TILE`] rows (the rows past `m` are read, not written
/// out). Call only where [`supported`].
pub fn matmul(out: &mut [f32], lhs: &[u32], rhs: &[u32], m: usize, k2: usize, n: usize) {
    assert!(k2.is_multiple_of(TILE) && out.len() >= m * n, "AMX product of {m} x {k2} x {n}");
    let offsets: Vec<usize> = (0..k2).step_by(TILE).collect();
    let lhs = Lhs { data: lhs, stride: k2, step: TILE, offsets: &offsets };
    product(&lhs, &rhs[..k2 * n], m, n, |r, sums| out[r * n..r * n + sums.len()].copy_from_slice(sums));
}

#[cfg(all(target_arch = "x86_64", target_os = "linux"))]
mod x86 {
    use super::{BAND, Lhs, TILE};
    use std::arch::asm;

    /// A palette-1 tile configuration: `tmm0`-`tmm3` the sums of a 32 x 32
    /// block (16 rows by 64 bytes), `tmm4`/`tmm5` its two row tiles of the
    /// left operand (16 rows by `step` pairs), `tmm6`/`tmm7` its two column
    /// tiles of the right (`step` rows by 64 bytes).
    #[repr(C, align(64))]
    struct Config([u8; 64]);

    impl Config {
        fn new(step: usize) -> Config {
            let mut c = [0u8; 64];
            c[0] = 1;
            for t in 0..8 {
                let (bytes, rows) = match t {
                    4 | 5 => (4 * step, TILE),
                    6 | 7 => (64, step),
                    _ => (64, TILE),
                };
                c[16 + 2 * t..18 + 2 * t].copy_from_slice(&(bytes as u16).to_le_bytes());
                c[48 + t] = rows as u8;
            }
            Config(c)
        }
    }

    pub unsafe fn product<F: FnMut(usize, &mut [f32])>(lhs: &Lhs, rhs: &[u32], m: usize, n: usize, band: &mut F) {
        let padded = m.next_multiple_of(TILE);
        let config = Config::new(lhs.step);
        let mut sums = vec![0f32; BAND * n];
        // SAFETY: a valid palette-1 configuration (the CPU has palette 1
        // with 8 tiles of 16 x 64 bytes: `detect`; step <= 16).
        unsafe { asm!("ldtilecfg [{0}]", in(reg) config.0.as_ptr(), options(nostack, readonly)) };
        for r in (0..padded).step_by(BAND) {
            let rows = if r + BAND <= padded { 2 } else { 1 };
            for c in (0..n).step_by(BAND) {
                let cols = if c + BAND <= n { 2 } else { 1 };
                // SAFETY: the block's rows are inside lhs's padded rows and
                // its columns inside n (the caller checked the sizes); the
                // sums buffer holds BAND rows of n.
                unsafe {
                    block(lhs, rhs, n, r, c, rows, cols);
                    for i in 0..rows {
                        for j in 0..cols {
                            store(sums.as_mut_ptr().add(i * TILE * n + c + j * TILE), n, 2 * i + j);
                        }
                    }
                }
            }
            let done = (m - r).min(BAND);
            band(r, &mut sums[..done * n]);
        }
        // SAFETY: tiles are configured; releasing them ends their use.
        unsafe { asm!("tilerelease", options(nostack, nomem)) };
    }

    /// The `rows` x `cols` tiles (1 or 2 each) of sums from row `r` and
    /// column `c`, left in `tmm0`-`tmm3`.
    unsafe fn block(lhs: &Lhs, rhs: &[u32], n: usize, r: usize, c: usize, rows: usize, cols: usize) {
        let (a_stride, b_stride) = (lhs.stride * 4, n * 4);
        // SAFETY (all the asm below): the tiles are configured (`product`);
        // every tile read covers 16 rows of `step` pairs inside lhs (rows
        // `r..r + 16 * rows` at the stride, from an offset the caller
        // checked) or `step` rows of 64 bytes inside rhs (K-step s's rows,
        // columns `c..c + 16 * cols` inside n).
        unsafe {
            asm!("tilezero tmm0", "tilezero tmm1", "tilezero tmm2", "tilezero tmm3", options(nostack, nomem));
            for (s, &offset) in lhs.offsets.iter().enumerate() {
                let a0 = lhs.data.as_ptr().add(r * lhs.stride + offset);
                let a1 = a0.add(TILE * lhs.stride);
                let b0 = rhs.as_ptr().add(s * lhs.step * n + c);
                let b1 = b0.add(TILE);
                match (rows, cols) {
                    (2, 2) => asm!(
                        "tileloadd tmm4, [{a0} + {sa}]",
                        "tileloadd tmm6, [{b0} + {sb}]",
                        "tdpbf16ps tmm0, tmm4, tmm6",
                        "tileloadd tmm7, [{b1} + {sb}]",
                        "tdpbf16ps tmm1, tmm4, tmm7",
                        "tileloadd tmm5, [{a1} + {sa}]",
                        "tdpbf16ps tmm2, tmm5, tmm6",
                        "tdpbf16ps tmm3, tmm5, tmm7",
                        a0 = in(reg) a0, a1 = in(reg) a1, b0 = in(reg) b0, b1 = in(reg) b1,
                        sa = in(reg) a_stride, sb = in(reg) b_stride,
                        options(nostack, readonly),
                    ),
                    (2, _) => asm!(
                        "tileloadd tmm4, [{a0} + {sa}]",
                        "tileloadd tmm6, [{b0} + {sb}]",
                        "tdpbf16ps tmm0, tmm4, tmm6",
                        "tileloadd tmm5, [{a1} + {sa}]",
                        "tdpbf16ps tmm2, tmm5, tmm6",
                        a0 = in(reg) a0, a1 = in(reg) a1, b0 = in(reg) b0,
                        sa = in(reg) a_stride, sb = in(reg) b_stride,
                        options(nostack, readonly),
                    ),
                    (_, 2) => asm!(
                        "tileloadd tmm4, [{a0} + {sa}]",
                        "tileloadd tmm6, [{b0} + {sb}]",
                        "tdpbf16ps tmm0, tmm4, tmm6",
                        "tileloadd tmm7, [{b1} + {sb}]",
                        "tdpbf16ps tmm1, tmm4, tmm7",
                        a0 = in(reg) a0, b0 = in(reg) b0, b1 = in(reg) b1,
                        sa = in(reg) a_stride, sb = in(reg) b_stride,
                        options(nostack, readonly),
                    ),
                    _ => asm!(
                        "tileloadd tmm4, [{a0} + {sa}]",
                        "tileloadd tmm6, [{b0} + {sb}]",
                        "tdpbf16ps tmm0, tmm4, tmm6",
                        a0 = in(reg) a0, b0 = in(reg) b0,
                        sa = in(reg) a_stride, sb = in(reg) b_stride,
                        options(nostack, readonly),
                    ),
                }
            }
        }
    }

    /// Writes sum tile `t` (0 to 3) at `dst`, rows `n` floats apart.
    unsafe fn store(dst: *mut f32, n: usize, t: usize) {
        let stride = n * 4;
        // SAFETY: the caller's dst has 16 rows of 16 floats at the stride;
        // tile t holds sums (configured).
        unsafe {
            match t {
                0 => asm!("tilestored [{d} + {s}], tmm0", d = in(reg) dst, s = in(reg) stride, options(nostack)),
                1 => asm!("tilestored [{d} + {s}], tmm1", d = in(reg) dst, s = in(reg) stride, options(nostack)),
                2 => asm!("tilestored [{d} + {s}], tmm2", d = in(reg) dst, s = in(reg) stride, options(nostack)),
                _ => asm!("tilestored [{d} + {s}], tmm3", d = in(reg) dst, s = in(reg) stride, options(nostack)),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nn::bf16::{from_bf16, pack_rhs, put, to_bf16};

    /// The product on sizes with partial row tiles, one-column-tile
    /// blocks and several tiles along the sum, against f32 sums of the
    /// same bf16-rounded operands.
    #[test]
    fn the_product_matches_f32_on_bf16_inputs() {
        if !supported() {
            eprintln!("skipped: this CPU or OS has no AMX");
            return;
        }
        for (m, k, n) in [(1usize, 2usize, 16usize), (19, 27, 48), (37, 64, 32), (50, 100, 80)] {
            let k2 = k.div_ceil(2).next_multiple_of(TILE);
            let value = |i: usize| ((i * 37 % 101) as f32 - 50.0) / 16.0;
            let lhs_f: Vec<f32> = (0..m * k).map(value).collect();
            let rhs_f: Vec<f32> = (0..k * n).map(|i| value(i + 7)).collect();
            // Padded rows are garbage on purpose: they must not reach out.
            let mut lhs = vec![0x3f80_3f80u32; m.next_multiple_of(TILE) * k2];
            for (r, row) in lhs.chunks_exact_mut(k2).take(m).enumerate() {
                for e in 0..k2 * 2 {
                    put(row, e, if e < k { lhs_f[r * k + e] } else { 0.0 });
                }
            }
            let mut rhs = pack_rhs(&rhs_f, k, n);
            rhs.resize(k2 * n, 0);
            let mut out = vec![f32::NAN; m * n + 5];
            matmul(&mut out, &lhs, &rhs, m, k2, n);
            for r in 0..m {
                for c in 0..n {
                    let want: f32 = (0..k)
                        .map(|e| from_bf16(to_bf16(lhs_f[r * k + e])) * from_bf16(to_bf16(rhs_f[e * n + c])))
                        .sum();
                    assert!(
                        (out[r * n + c] - want).abs() < 1e-3,
                        "{m}x{k}x{n} ({r}, {c}): {} vs {want}",
                        out[r * n + c]
                    );
                }
            }
            assert!(out[m * n..].iter().all(|x| x.is_nan()), "{m}x{k}x{n}: wrote past the product");
        }
    }

    /// A product read in place: K-steps shorter than a tile, at offsets
    /// out of order and overlapping between rows (a convolution's taps),
    /// handed out in bands.
    #[test]
    fn a_product_read_at_offsets_sums_each_step_s_pairs() {
        if !supported() {
            eprintln!("skipped: this CPU or OS has no AMX");
            return;
        }
        let value = |i: usize| ((i * 37 % 101) as f32 - 50.0) / 16.0;
        for (m, step, stride, offsets, n) in [
            (45usize, 8usize, 12usize, vec![24usize, 0, 4, 60], 48usize),
            (3, 16, 16, vec![16, 0], 16),
            (70, 4, 4, vec![8], 32),
        ] {
            let len = (m.next_multiple_of(TILE) - 1) * stride + offsets.iter().max().unwrap() + step;
            let mut data = vec![0u32; len];
            for e in 0..2 * len {
                put(&mut data, e, value(e));
            }
            let rhs_f: Vec<f32> = (0..2 * step * offsets.len() * n).map(|i| value(i + 3)).collect();
            let rhs = pack_rhs(&rhs_f, 2 * step * offsets.len(), n);
            let lhs = Lhs { data: &data, stride, step, offsets: &offsets };
            let mut seen = 0;
            product(&lhs, &rhs, m, n, |r, sums| {
                assert_eq!((r, sums.len() % n), (seen, 0), "bands in order, whole rows");
                assert!(sums.len() <= BAND * n);
                for (i, row) in sums.chunks(n).enumerate() {
                    for (c, &got) in row.iter().enumerate() {
                        let want: f32 = (0..offsets.len() * 2 * step)
                            .map(|k| {
                                let e = 2 * ((r + i) * stride + offsets[k / (2 * step)]) + k % (2 * step);
                                from_bf16(to_bf16(value(e))) * from_bf16(to_bf16(rhs_f[k * n + c]))
                            })
                            .sum();
                        assert!((got - want).abs() < 1e-3, "m {m} step {step}: ({}, {c}) {got} vs {want}", r + i);
                    }
                }
                seen += sums.len() / n;
            });
            assert_eq!(seen, m, "every row handed out once");
        }
    }
}
